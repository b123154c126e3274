"""The shape-polymorphic form of a bundle: one model.mlir exported with symbolic dimensions
(docs/bundles.md, "Shape-polymorphic model.mlir"), which the server refines per size at load."""

import jax


def symbolic_specs(in_shapes, in_dtypes, batch_axis, var_per_input, constraints=()):
    """One jax.ShapeDtypeStruct per input with the batch axis as the symbol `b` and each variable
    axis as its letter, all in one symbolic scope; `constraints` as jax.export takes them
    (e.g. ["s <= 16"])."""
    letters = (["b"] if batch_axis is not None else []) + sorted(
        {letter for va in var_per_input for letter in va.values()})
    symbols = jax.export.symbolic_shape(", ".join(letters), constraints=tuple(constraints))
    by_letter = dict(zip(letters, symbols))
    specs = []
    for shape, dtype, va in zip(in_shapes, in_dtypes, var_per_input):
        dims = list(shape)
        if batch_axis is not None:
            dims[batch_axis] = by_letter["b"]
        for axis, letter in va.items():
            dims[axis] = by_letter[letter]
        specs.append(jax.ShapeDtypeStruct(tuple(dims), dtype))
    return specs
