"""python -m reactant_export: export one function of a module as a bundle (the common case).

Example:
  python -m reactant_export mymodel:predict --params mymodel:init_params \\
      --input features:f32:4 --output logits --batch-sizes 1,8,32 --dir repo/iris_mlp

FUNCTION is called as FUNCTION(inputs..., params). --params names an attribute of a module:
a callable (called without arguments) or a value (a pytree of arrays). If FUNCTION is a
flax.nnx Module (or a callable returning one, with --params omitted), its state is the weights.
Each --input is NAME:DTYPE:SHAPE with SHAPE the row-major shape of one item without the batch
axis (e.g. 8x8x1; empty for a scalar item); the batch axis is axis 0. Variable axes and linen
modules need the Python API (reactant_export.export_bundle)."""

import argparse
import importlib
import importlib.util
import inspect
import os
import sys


# --input dtypes: the manifest's tokens (docs/bundles.md) and their numpy names.
_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
           "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
           "u16": "uint16", "u32": "uint32", "u64": "uint64", "bool": "bool"}


def _load(spec):
    """MODULE:ATTR where MODULE is a dotted module name or a path to a .py file."""
    if ":" not in spec:
        raise SystemExit(f"{spec!r}: expected MODULE:NAME")
    mod, attr = spec.rsplit(":", 1)
    try:
        return _load_attr(mod, attr)
    except (ImportError, OSError, AttributeError) as e:
        raise SystemExit(f"python -m reactant_export: error: {spec!r}: {type(e).__name__}: {e}")


def _load_attr(mod, attr):
    if mod.endswith(".py") or os.sep in mod:
        name = os.path.splitext(os.path.basename(mod))[0]
        s = importlib.util.spec_from_file_location(name, mod)
        module = importlib.util.module_from_spec(s)
        sys.path.insert(0, os.path.dirname(os.path.abspath(mod)))
        s.loader.exec_module(module)
    else:
        sys.path.insert(0, os.getcwd())
        module = importlib.import_module(mod)
    obj = module
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _source_dir(obj):
    """The directory of the file defining obj (a function, a Module or its class), or None."""
    for candidate in (obj, type(obj)):
        try:
            path = inspect.getsourcefile(candidate)
        except TypeError:
            continue
        if path:
            return os.path.dirname(os.path.abspath(path))
    return None


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m reactant_export",
        description="Export FUNCTION(inputs..., params) as a reactant-server bundle "
                    "(reactant_export.export_bundle for the common case).",
        epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("function", metavar="MODULE:FUNCTION", help="the model function (or nnx Module)")
    p.add_argument("--params", metavar="MODULE:NAME", help="the parameters (value or callable)")
    p.add_argument("--input", action="append", required=True, metavar="NAME:DTYPE:SHAPE",
                   help="an input, in argument order (repeat)")
    p.add_argument("--output", action="append", required=True, metavar="NAME",
                   help="an output name, in the order the function returns them (repeat)")
    p.add_argument("--batch-sizes", default="1", help="compiled batch sizes, e.g. 1,8,32 "
                   "(default 1); 'none' for an unbatched model.mlir")
    p.add_argument("--dir", required=True, help="bundle directory; its basename is the name")
    p.add_argument("--format", choices=["portable", "text"], default="portable")
    p.add_argument("--description")
    p.add_argument("--overwrite", action="store_true")
    args = p.parse_args(argv)

    import numpy as np

    from . import ExportError, collect_provenance, export_bundle

    fn = _load(args.function)
    # The git state of the model's file (the calling file of export_bundle is this one).
    source_dir = _source_dir(fn)
    params = None
    if args.params:
        params = _load(args.params)
        if callable(params):
            params = params()
    else:
        try:
            from flax import nnx

            if not isinstance(fn, nnx.Module) and callable(fn):
                made = fn()
                if isinstance(made, nnx.Module):
                    fn = made
        except ImportError:
            pass
    unbatched = args.batch_sizes.strip().lower() == "none"
    try:
        sizes = None if unbatched else [int(s) for s in args.batch_sizes.split(",")]
    except ValueError:
        p.error(f"--batch-sizes {args.batch_sizes!r}: expected integers separated by commas "
                f"(e.g. 1,8,32) or 'none'")
    names, examples = [], []
    for spec in args.input:
        parts = spec.split(":")
        if len(parts) != 3:
            p.error(f"--input {spec!r}: expected NAME:DTYPE:SHAPE")
        name, dtype, shape = parts
        try:
            dims = [int(d) for d in shape.split("x")] if shape else []
        except ValueError:
            p.error(f"--input {spec!r}: shape {shape!r} is not sizes joined by x (e.g. 8x8x1)")
        dt = _DTYPES.get(dtype, dtype if dtype in _DTYPES.values() else None)
        if dt is None:
            p.error(f"--input {spec!r}: dtype {dtype!r} is not one of {', '.join(_DTYPES)}")
        if dt == "bfloat16":
            import ml_dtypes

            dt = ml_dtypes.bfloat16
        names.append(name)
        examples.append(np.zeros(dims if unbatched else [1] + dims, dtype=dt))
    d = os.path.abspath(args.dir)
    git = {}
    if source_dir:
        git = {k: v for k, v in collect_provenance("jax", caller_dir=source_dir).items()
               if k.startswith("git_")}
    try:
        export_bundle(fn, params, examples, name=os.path.basename(d), dir=d, batch_sizes=sizes,
                      input_names=names, output_names=args.output,
                      batch_axis=None if unbatched else 0, format=args.format,
                      description=args.description, overwrite=args.overwrite, provenance=git)
    except ExportError as e:
        print(f"python -m reactant_export: error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
