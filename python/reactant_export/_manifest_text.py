"""The manifest's text: tensor specs with column-major letters and YAML flow scalars."""

import json

# Letters for fixed axes, in the order they are handed out (n and b mark the batch).
_FIXED_LETTERS = "cdefghijklmopqrtuvwxyzaACDEFGHIJKLMOPQRSTUVWXYZ"


def variant_shape(shape, batch_axis, n, var_axes, variant):
    """`shape` with the batch axis at n and each variable axis at the variant's size."""
    shape = list(shape)
    if batch_axis is not None:
        shape[batch_axis] = n
    for axis, letter in var_axes.items():
        shape[axis] = variant[letter]
    return tuple(shape)


def tensor_letters(rank, batch_axis, var_axes, fixed_sizes):
    """Row-major letters and dims of one tensor: n for the batch, the variable letters, then
    c, d, e... for the fixed axes (skipping letters already used)."""
    used = {"n", "b"} | set(var_axes.values())
    pool = (c for c in _FIXED_LETTERS if c not in used)
    letters, dims = [], {}
    for axis in range(rank):
        if axis == batch_axis:
            letters.append("n")
        elif axis in var_axes:
            letters.append(var_axes[axis])
            dims[var_axes[axis]] = -1
        else:
            letter = next(pool)
            letters.append(letter)
            dims[letter] = int(fixed_sizes[axis])
    return letters, dims


def spec_line(name, dtype, letters, dims):
    """One flow-style `executable_inputs`/`outputs` entry from row-major letters and dims."""
    # Column-major (batch last): the row-major letters reversed.
    shape = "".join(reversed(letters))
    dims_text = ", ".join(f"{k}: {dims[k]}" for k in reversed(letters) if k in dims)
    return (f'  - {{name: "{name}", dtype: "{dtype}", shape: "{shape}", '
            f'dims: {{{dims_text}}}}}')


def yaml_scalar(value):
    """A bool, number, None or string as a YAML flow scalar (strings double-quoted)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if value is None:
        return "null"
    return json.dumps(str(value))  # a JSON string is a YAML double-quoted scalar


def yaml_flow(value):
    """Dicts, lists and scalars as YAML flow text (also valid JSON)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{yaml_scalar(str(k))}: {yaml_flow(v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(yaml_flow(v) for v in value) + "]"
    return yaml_scalar(value)
