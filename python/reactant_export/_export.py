"""export_bundle: jax.export of fn(inputs..., params) into a reactant-server bundle (format 2.0)."""

import hashlib
import json
import os
import re

import jax
import numpy as np

from . import _safetensors
from ._manifest_text import spec_line, tensor_letters, variant_shape, yaml_flow, yaml_scalar
from ._polymorphic import symbolic_specs
from ._provenance import collect_provenance

# Manifest dtype tokens (docs/bundles.md) by numpy dtype name.
_DTYPE_TOKENS = {
    "float16": "f16", "float32": "f32", "float64": "f64", "bfloat16": "bf16",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "bool",
}
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")


class ExportError(ValueError):
    """The bundle would not be servable (or the arguments are inconsistent); nothing was written."""


def dtype_token(dtype):
    name = np.dtype(dtype).name
    if name not in _DTYPE_TOKENS:
        raise ExportError(f"dtype {name} has no manifest token (supported: "
                          f"{', '.join(sorted(_DTYPE_TOKENS))})")
    return _DTYPE_TOKENS[name]


# ---------------------------------------------------------------------------------------------
# Models: plain functions, flax.nnx and flax.linen

def _path_name(path):
    parts = []
    for key in path:
        if isinstance(key, jax.tree_util.DictKey):
            parts.append(str(key.key))
        elif isinstance(key, jax.tree_util.SequenceKey):
            parts.append(str(key.idx))
        elif isinstance(key, jax.tree_util.GetAttrKey):
            parts.append(str(key.name))
        elif isinstance(key, jax.tree_util.FlattenedIndexKey):
            parts.append(str(key.key))
        else:  # pragma: no cover - other key kinds
            parts.append(str(key).strip(".[]'\""))
    # flax.nnx wraps each array in a Variable whose child is `value`: it adds nothing to the name.
    if len(parts) > 1 and parts[-1] in ("value", "raw_value"):
        parts.pop()
    return ".".join(parts) if parts else "params"


def resolve_model(fn, params):
    """Returns (callable f(*inputs, params), params pytree, source_framework).

    fn may be a plain function called as fn(*inputs, params), a flax.nnx Module (params None:
    its state is split off and becomes the weights) or a flax.linen Module (params: the variables
    dict passed to apply)."""
    try:
        from flax import nnx
    except ImportError:  # flax is optional
        nnx = None
    try:
        from flax import linen
    except ImportError:
        linen = None
    if nnx is not None and isinstance(fn, nnx.Module):
        if params is not None:
            raise ExportError("a flax.nnx Module carries its own parameters: pass params=None")
        graphdef, state = nnx.split(fn)

        def call_nnx(*args):
            *inputs, st = args
            return nnx.merge(graphdef, st)(*inputs)

        return call_nnx, state, "flax.nnx"
    if linen is not None and isinstance(fn, linen.Module):
        if params is None:
            raise ExportError("a flax.linen Module needs its variables as params: pass "
                              "module.init(rng, *example_inputs)")
        module = fn

        def call_linen(*args):
            *inputs, variables = args
            return module.apply(variables, *inputs)

        return call_linen, params, "flax.linen"
    if not callable(fn):
        raise ExportError(f"fn must be callable, a flax.nnx or a flax.linen Module, not {fn!r}")
    return fn, params, "jax"


def flatten_params(params):
    """(names, arrays, treedef): the leaves of the params pytree in jax's flatten order."""
    leaves_with_path, treedef = jax.tree_util.tree_flatten_with_path(params)
    names = [_path_name(path) for path, _ in leaves_with_path]
    seen = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    dup = sorted(n for n, c in seen.items() if c > 1)
    if dup:
        raise ExportError(f"two weights would be named {dup[0]!r}: pytree paths must be unique")
    arrays = []
    for name, (_, leaf) in zip(names, leaves_with_path):
        a = np.asarray(leaf)
        if a.dtype.kind in "OSUV":
            raise ExportError(f"weight {name!r} is a {type(leaf).__name__}, not an array "
                              f"(every params leaf becomes a weight tensor)")
        # jax computes in its canonical dtype (float32 for float64 and int32 for int64 and
        # Python ints while jax_enable_x64 is off): the weight is stored as main takes it.
        a = a.astype(jax.dtypes.canonicalize_dtype(a.dtype), copy=False)
        dtype_token(a.dtype)
        arrays.append(a)
    return names, arrays, treedef


def flat_function(call, treedef, n_inputs):
    """The function of flat arrays the bundle's main is: main(inputs..., weights...)."""

    def flat(*args):
        inputs = args[:n_inputs]
        p = jax.tree_util.tree_unflatten(treedef, list(args[n_inputs:]))
        out = call(*inputs, p)
        leaves = jax.tree_util.tree_leaves_with_path(out)
        for path, leaf in leaves:
            if not isinstance(leaf, (jax.Array, np.ndarray, np.generic, int, float, bool)):
                where = (f"output {jax.tree_util.keystr(path)} of the function" if path
                         else "the function's result")
                raise ExportError(f"{where} is a {type(leaf).__name__}, not an array")
        return tuple(leaf for _, leaf in leaves)

    return flat


# ---------------------------------------------------------------------------------------------
# Arity: count main's arguments in the module itself, as the server does at load

_MAIN_RE = re.compile(r"func\.func\s+public\s+@main\s*\(")


def main_arity(text):
    """The number of arguments of the public @main in StableHLO text."""
    m = _MAIN_RE.search(text)
    if not m:
        raise ExportError("the exported module has no public @main")
    depth, i = 1, m.end()
    start = i
    while depth and i < len(text):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
        i += 1
    sig = text[start:i - 1]
    return len(re.findall(r"%arg\d+\s*:", sig))


def _check_arity(program, exported, n_inputs, n_weights):
    expected = n_inputs + n_weights
    problems = []
    if getattr(exported, "ordered_effects", ()) or getattr(exported, "unordered_effects", ()):
        problems.append("the function has side effects (tokens would be extra arguments)")
    kept = getattr(exported, "module_kept_var_idx", None)
    if kept is not None and len(kept) != len(exported.in_avals):
        problems.append(f"jax dropped {len(exported.in_avals) - len(kept)} unused arguments")
    arity = main_arity(exported.mlir_module())
    if arity != expected:
        problems.append(f"main takes {arity} arguments but the bundle has {n_inputs} inputs and "
                        f"{n_weights} weights ({expected} expected)")
    if problems:
        raise ExportError(f"{program}: unservable bundle: " + "; ".join(problems))


# ---------------------------------------------------------------------------------------------

def _hash_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return "sha256:" + h.hexdigest()


def export_bundle(fn, params, example_inputs, *, name, dir, batch_sizes=None, input_names,
                  output_names, batch_axis=0, variable_axes=None, input_shapes=None,
                  format="portable", provenance=None, description=None, platforms=("cpu",),
                  overwrite=False, polymorphic=False, constraints=()):
    """Exports fn(inputs..., params) as a reactant-server bundle in `dir` (basename == name).

    example_inputs: one array (or jax.ShapeDtypeStruct) per input, row-major, any batch size on
      `batch_axis` (0-based, the same axis for every input; None: an unbatched model.mlir).
    batch_sizes: the compiled batch sizes (model.b{N}.mlir each).
    variable_axes: {input name: {row-major axis: letter}} for axes compiled at several sizes;
      input_shapes then lists the variants, e.g. [{"s": 8}, {"s": 16}] (model.v{i}.b{N}.mlir).
    format: "portable" (StableHLO portable artifacts, jax.export's serialized module) or "text".
    polymorphic: write one shape-polymorphic model.mlir (the batch axis and the variable axes
      symbolic, `constraints` as jax.export.symbolic_shape takes them) that the server refines
      for every compiled size and variant, instead of one program per size.
    provenance: extra entries for the manifest's provenance map.

    Returns the bundle directory. Raises ExportError before writing anything when the bundle
    would not be servable (arity, names, shapes)."""
    if format not in ("portable", "text"):
        raise ExportError(f"format must be 'portable' or 'text', not {format!r}")
    platforms = [platforms] if isinstance(platforms, str) else list(platforms)
    if len(platforms) != 1:
        raise ExportError(f"platforms must name one platform, not {platforms!r} (with several, "
                          f"jax's main takes a platform index argument the server does not pass)")
    dir = os.path.abspath(os.fspath(dir))
    if os.path.basename(dir) != name:
        raise ExportError(f"the bundle directory's basename {os.path.basename(dir)!r} must equal "
                          f"the model name {name!r} (the server serves a bundle by its folder)")
    input_names, output_names = list(input_names), list(output_names)
    example_inputs = list(example_inputs)
    for what, names in (("input", input_names), ("output", output_names)):
        for n in names:
            if not _NAME_RE.match(n):
                raise ExportError(f"{what} name {n!r} is not a valid tensor name")
        if len(set(names)) != len(names):
            raise ExportError(f"{what} names are not unique: {names}")
    if len(example_inputs) != len(input_names):
        raise ExportError(f"{len(example_inputs)} example inputs but {len(input_names)} input names")
    call, params, framework = resolve_model(fn, params)

    # Inputs: shapes, dtypes, variable axes.
    example_inputs = [x if hasattr(x, "shape") and hasattr(x, "dtype") else np.asarray(x)
                      for x in example_inputs]
    in_shapes = [tuple(x.shape) for x in example_inputs]
    # The dtype jax computes in (float64 is float32 while jax_enable_x64 is off): the manifest
    # must declare the type main takes.
    in_dtypes = [np.dtype(jax.dtypes.canonicalize_dtype(x.dtype)) for x in example_inputs]
    for n, x, d in zip(input_names, example_inputs, in_dtypes):
        if np.dtype(x.dtype).kind in "OSUV":
            raise ExportError(f"example input {n!r} has dtype {np.dtype(x.dtype)}, not a "
                              f"numeric or bool array")
    variable_axes = {k: dict(v) for k, v in (variable_axes or {}).items()}
    unknown = sorted(set(variable_axes) - set(input_names))
    if unknown:
        raise ExportError(f"variable_axes names no input {unknown[0]!r}")
    var_per_input = [{int(a): l for a, l in variable_axes.get(n, {}).items()} for n in input_names]
    var_letters = sorted({l for v in var_per_input for l in v.values()})
    for l in var_letters:
        if len(l) != 1 or not l.isalpha() or l in ("n", "b"):
            raise ExportError(f"variable axis letter {l!r} must be one ASCII letter other than n, b")
    if var_letters:
        if not input_shapes:
            raise ExportError("variable_axes need input_shapes (the sizes to compile each letter at)")
        variants = [dict(v) for v in input_shapes]
        for i, v in enumerate(variants):
            if sorted(v) != var_letters:
                raise ExportError(f"input_shapes[{i}] {v} must give a size to exactly {var_letters}")
            if any(int(s) <= 0 for s in v.values()):
                raise ExportError(f"input_shapes[{i}] {v}: sizes must be > 0")
        if len({tuple(sorted(v.items())) for v in variants}) != len(variants):
            raise ExportError("input_shapes has two equal variants")
    else:
        if input_shapes:
            raise ExportError("input_shapes given but no variable_axes")
        variants = [{}]
    for i, (shape, va) in enumerate(zip(in_shapes, var_per_input)):
        for axis in list(va) + ([batch_axis] if batch_axis is not None else []):
            if not 0 <= axis < len(shape):
                raise ExportError(f"input {input_names[i]!r} of rank {len(shape)} has no axis {axis}")
        if batch_axis is not None and batch_axis in va:
            raise ExportError(f"input {input_names[i]!r}: axis {batch_axis} is the batch axis")
    if batch_axis is None:
        if batch_sizes:
            raise ExportError("batch_sizes need a batch_axis")
        sizes = [None]
    else:
        if not batch_sizes:
            raise ExportError("batch_sizes is required with a batch axis (or pass batch_axis=None)")
        if isinstance(batch_sizes, (str, bytes)) or not all(
                isinstance(b, (int, np.integer)) and not isinstance(b, bool) for b in batch_sizes):
            raise ExportError(f"batch_sizes must be a list of integers, not {batch_sizes!r}")
        sizes = sorted({int(b) for b in batch_sizes})
        if sizes[0] <= 0:
            raise ExportError(f"batch sizes must be > 0, not {sizes[0]}")

    names, arrays, treedef = flatten_params(params)
    overlap = sorted(set(names) & set(input_names))
    if overlap:
        raise ExportError(f"weight {overlap[0]!r} has an input's name")
    flat = flat_function(call, treedef, len(input_names))
    jitted = jax.jit(flat, keep_unused=True)
    weight_specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays]

    def specs(n, variant):
        return [jax.ShapeDtypeStruct(variant_shape(s, batch_axis, n, va, variant), d)
                for s, d, va in zip(in_shapes, in_dtypes, var_per_input)] + weight_specs

    # Output axes: which follow the batch, which follow a variable letter (found by evaluating
    # the shapes at probe sizes, so a batch of 1 or a size shared by two axes is not mistaken).
    def out_avals(n, variant):
        try:
            return jax.eval_shape(flat, *specs(n, variant))
        except ExportError:
            raise
        except Exception as e:
            args = ", ".join(f"{name}: {np.dtype(d).name}{list(shape)}" for name, d, shape in
                             zip(input_names, in_dtypes,
                                 (x.shape for x in specs(n, variant)[:len(input_names)])))
            raise ExportError(f"calling the function on ({args}) and the params failed: "
                              f"{type(e).__name__}: {e}") from e

    base_variant = variants[0]
    probe_n = (5, 7) if batch_axis is not None else (None, None)
    a0 = out_avals(probe_n[0], base_variant)
    if not a0:
        raise ExportError("the function returns no arrays (a bundle needs at least one output)")
    if len(a0) != len(output_names):
        raise ExportError(f"the function returns {len(a0)} arrays but {len(output_names)} "
                          f"output names were given")
    a1 = out_avals(probe_n[1], base_variant)
    out_batch = []
    for k, (x, y) in enumerate(zip(a0, a1)):
        moved = [i for i, (p, q) in enumerate(zip(x.shape, y.shape)) if p != q]
        if batch_axis is None:
            out_batch.append(None)
        elif moved == [] :
            out_batch.append(None)
        elif len(moved) == 1 and x.shape[moved[0]] == 5 and y.shape[moved[0]] == 7:
            out_batch.append(moved[0])
        else:
            raise ExportError(f"output {output_names[k]!r}: shape {x.shape} does not follow the "
                              f"batch on one axis")
    if batch_axis is not None and any(b is None for b in out_batch) and len(sizes) > 1:
        bad = output_names[out_batch.index(None)]
        raise ExportError(f"output {bad!r} has no batch axis (all-or-nothing batchability)")
    out_var = [dict() for _ in output_names]
    for letter in var_letters:
        probes = []
        for delta in (3, 5):
            v = dict(base_variant)
            v[letter] = base_variant[letter] + delta
            probes.append((v[letter], out_avals(probe_n[0], v)))
        for k, x in enumerate(a0):
            for axis in range(len(x.shape)):
                if all(p[axis] == size for size, p in ((s, av[k].shape) for s, av in probes)) \
                        and x.shape[axis] == base_variant[letter]:
                    out_var[k][axis] = letter
    for k, x in enumerate(a0):
        for axis in range(len(x.shape)):
            if axis in out_var[k] or axis == out_batch[k]:
                continue
            if any(av[k].shape[axis] != x.shape[axis] for v in variants[1:]
                   for av in [out_avals(probe_n[0], v)]):
                raise ExportError(f"output {output_names[k]!r} axis {axis} changes with the shape "
                                  f"variant but follows no variable letter")

    # Export every program (in memory), checking arity before anything is written.
    programs = {}
    multi = bool(var_letters)
    if polymorphic and batch_axis is None and not multi:
        raise ExportError("polymorphic=True needs a batch axis or variable_axes (a static "
                          "model.mlir is the unbatched program)")
    if constraints and not polymorphic:
        raise ExportError("constraints are for polymorphic=True")
    jobs = [("model.mlir", None, None)] if polymorphic else [
        ("model" + (f".v{vi}" if multi else "") + (f".b{n}" if n is not None else "") + ".mlir",
         n, variant) for vi, variant in enumerate(variants) for n in sizes]
    for fname, n, variant in jobs:
        if polymorphic:
            try:
                arg_specs = symbolic_specs(in_shapes, in_dtypes, batch_axis, var_per_input,
                                           constraints) + weight_specs
                exported = jax.export.export(jitted, platforms=list(platforms))(*arg_specs)
            except Exception as e:
                raise ExportError(f"model.mlir: jax.export with symbolic shapes failed (a "
                                  f"constraint such as 's <= 16' may be missing): "
                                  f"{type(e).__name__}: {e}") from e
        else:
            exported = jax.export.export(jitted, platforms=list(platforms))(*specs(n, variant))
        _check_arity(fname, exported, len(input_names), len(names))
        if len(exported.out_avals) != len(output_names):
            raise ExportError(f"{fname}: {len(exported.out_avals)} results but "
                              f"{len(output_names)} output names")
        data = (bytes(exported.mlir_module_serialized) if format == "portable"
                else exported.mlir_module().encode())
        programs[fname] = data

    # Manifest specs.
    lines = ['format_version: "2.0"', f"name: {name}"]
    if description:
        lines.append(f"description: {yaml_scalar(description)}")
    lines.append("executable_inputs:")
    for i, n in enumerate(input_names):
        letters, dims = tensor_letters(len(in_shapes[i]), batch_axis, var_per_input[i], in_shapes[i])
        lines.append(spec_line(n, dtype_token(in_dtypes[i]), letters, dims))
    lines.append("executable_outputs:")
    for k, n in enumerate(output_names):
        letters, dims = tensor_letters(len(a0[k].shape), out_batch[k], out_var[k], a0[k].shape)
        lines.append(spec_line(n, dtype_token(a0[k].dtype), letters, dims))
    if batch_axis is not None:
        lines.append(f"batching: {{compiled_batch_sizes: [{', '.join(map(str, sizes))}]}}")
    if multi:
        lines.append("input_shapes: " + yaml_flow(variants))

    # Write: programs and weights first, then the manifest with their hashes.
    if os.path.exists(os.path.join(dir, "manifest.yaml")) and not overwrite:
        raise ExportError(f"{dir} already holds a bundle (pass overwrite=True)")
    os.makedirs(dir, exist_ok=True)
    if overwrite:
        for old in os.listdir(dir):
            if re.match(r"^model(\.v\d+)?(\.b\d+)?\.mlir$", old) and old not in programs:
                os.remove(os.path.join(dir, old))
    for fname, data in programs.items():
        with open(os.path.join(dir, fname), "wb") as f:
            f.write(data)
    _safetensors.write(os.path.join(dir, "weights.safetensors"), list(zip(names, arrays)),
                       {"argument_order": json.dumps(names)})
    prov = collect_provenance(framework)
    prov["format"] = "StableHLO portable artifact" if format == "portable" else "StableHLO text"
    prov.update(provenance or {})
    prov["files"] = {f: _hash_file(os.path.join(dir, f))
                     for f in sorted(list(programs) + ["weights.safetensors"])}
    lines.append("provenance: " + yaml_flow(prov))
    with open(os.path.join(dir, "manifest.yaml"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return dir
