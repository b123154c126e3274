"""bench/bench_inputs.py: what bench/xla_bench.py and bench/iree_bench.py both read from a
bundle and its golden directory. Needs numpy only (safetensors files are read here, by their
format: 8-byte little-endian header length, JSON header, raw little-endian data), so each
engine's venv can import it.

The program is BUNDLE/model.b{N}.mlir; its calling convention is main(inputs..., weights...):
the manifest's executable_inputs taken from GOLDEN_DIR/b{N}.safetensors, then the weights of
BUNDLE/weights.safetensors in its __metadata__.argument_order. The expected outputs are the
golden file's tensors named by the manifest's executable_outputs, in that order.
"""
import json
import os

import numpy as np

_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2",
           "I8": "i1", "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1", "BOOL": "?"}


def read_safetensors(path):
    """(tensors by name in file order, __metadata__ dict); raises on a dtype it does not know."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {}) or {}
    tensors = {}
    for name, t in header.items():
        if t["dtype"] == "BF16":
            import ml_dtypes
            dt = np.dtype(ml_dtypes.bfloat16)
        else:
            dt = np.dtype(_DTYPES[t["dtype"]])
        begin, end = t["data_offsets"]
        tensors[name] = np.frombuffer(data[begin:end], dtype=dt).reshape(t["shape"])
    return tensors, meta


def load_file(path):
    """The tensors of a safetensors file, by name."""
    return read_safetensors(path)[0]


def manifest_names(bundle, section):
    """Names listed under `section` (executable_inputs or executable_outputs), in order."""
    # The manifest is simple YAML; only the names of one list are needed.
    names, inside = [], False
    for line in open(os.path.join(bundle, "manifest.yaml")):
        if line.startswith(section + ":"):
            inside = True
            continue
        if inside:
            if line.startswith("  - "):
                name = line.split("name:", 1)[1].split(",", 1)[0].strip().strip('"')
                names.append(name)
            elif not line.startswith(" "):
                break
    return names


def manifest_inputs(bundle):
    return manifest_names(bundle, "executable_inputs")


class Cell:
    """One (bundle, batch size): program text, host arguments in call order, expected outputs."""

    def __init__(self, bundle, golden_dir, batch):
        self.name = os.path.basename(os.path.normpath(bundle))
        self.batch = batch
        self.text = open(os.path.join(bundle, f"model.b{batch}.mlir")).read()
        weights, meta = read_safetensors(os.path.join(bundle, "weights.safetensors"))
        order = json.loads(meta["argument_order"])
        self.golden_file = os.path.join(golden_dir, f"b{batch}.safetensors")
        golden = load_file(self.golden_file)
        inputs = manifest_inputs(bundle)
        self.n_inputs = len(inputs)
        # Host arrays as stored: scalars as [1], so callers reshape to the program's shapes.
        self.host = [np.asarray(golden[n]) for n in inputs] + [weights[n] for n in order]
        self.output_names = manifest_names(bundle, "executable_outputs")
        self.expected = [np.asarray(golden[n]) for n in self.output_names if n in golden]
