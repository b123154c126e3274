"""A minimal safetensors writer and reader (the format of docs/bundles.md's weights file)."""

import json
import struct

import numpy as np

_DTYPES = {
    "F16": np.dtype(np.float16), "F32": np.dtype(np.float32), "F64": np.dtype(np.float64),
    "I8": np.dtype(np.int8), "I16": np.dtype(np.int16), "I32": np.dtype(np.int32),
    "I64": np.dtype(np.int64), "U8": np.dtype(np.uint8), "U16": np.dtype(np.uint16),
    "U32": np.dtype(np.uint32), "U64": np.dtype(np.uint64), "BOOL": np.dtype(np.bool_),
}
try:  # bfloat16 comes with jax (ml_dtypes)
    import ml_dtypes

    _DTYPES["BF16"] = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    pass
_NAMES = {v: k for k, v in _DTYPES.items()}


def dtype_code(dtype):
    """The safetensors dtype code of a numpy dtype; ValueError if it has none."""
    dtype = np.dtype(dtype)
    if dtype not in _NAMES:
        raise ValueError(f"dtype {dtype} has no safetensors code")
    return _NAMES[dtype]


def write(path, tensors, metadata=None):
    """tensors: list of (name, array). Written sorted by name, like the safetensors library."""
    header = {}
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    blobs = []
    offset = 0
    for name, array in sorted(tensors, key=lambda t: t[0]):
        array = np.asarray(array)
        data = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": dtype_code(array.dtype), "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def read(path):
    """Returns (dict name -> array, metadata dict)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    metadata = header.pop("__metadata__", {})
    base = 8 + n
    out = {}
    for name, entry in header.items():
        start, end = entry["data_offsets"]
        dtype = _DTYPES[entry["dtype"]].newbyteorder("<")
        out[name] = np.frombuffer(raw[base + start:base + end], dtype=dtype).reshape(
            entry["shape"]).astype(dtype.newbyteorder("="))
    return out, metadata
