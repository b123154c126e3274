#!/usr/bin/env python3
"""Helpers of scripts/gpu_acceptance.sh (plain Python 3, no packages: runs here and on the
GPU machine).

  split GOLDEN OUTPUTS DEST [MANIFEST]
                              write DEST with the tensors of GOLDEN (b{N}.safetensors: the
                              inputs and the CPU outputs) that OUTPUTS (b{N}.gpu.safetensors)
                              does not hold, i.e. the request's inputs; goldens store scalars
                              as [1], so an input whose MANIFEST shape is "" gets shape []
  compare GOT WANT            exit 0 when every tensor of WANT is in GOT with the same dtype,
                              shape and bytes; prints BIT-IDENTICAL or how it differs
  blank GOLDEN N DEST         write DEST like GOLDEN's outputs with batch N, all zero: a
                              timing-only placeholder for reactant-gpu-check (never compared)
"""
import json
import re
import struct
import sys


def read(path):
    """(header dict without __metadata__, raw data bytes) of a .safetensors file."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n])
    header.pop("__metadata__", None)
    return header, blob[8 + n :]


def tensor_bytes(header, data, name):
    start, end = header[name]["data_offsets"]
    return data[start:end]


def write(path, tensors):
    """tensors: list of (name, dtype, shape, bytes)."""
    header, offset = {}, 0
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(t[3] for t in tensors))


def scalar_inputs(manifest):
    """Names of the manifest's executable_inputs declared with shape "" (rank 0)."""
    if manifest is None:
        return set()
    text = open(manifest).read().split("executable_outputs:")[0]
    return set(re.findall(r'name:\s*"([^"]+)"[^}]*shape:\s*""', text))


def split(golden, outputs, dest, manifest=None):
    header, data = read(golden)
    out_header, _ = read(outputs)
    scalars = scalar_inputs(manifest)
    tensors = [
        (name, h["dtype"], [] if name in scalars else h["shape"], tensor_bytes(header, data, name))
        for name, h in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0])
        if name not in out_header
    ]
    if not tensors:
        sys.exit(f"{golden}: no input tensors besides the outputs of {outputs}")
    write(dest, tensors)


def compare(got, want):
    gh, gd = read(got)
    wh, wd = read(want)
    bad = []
    for name, w in wh.items():
        g = gh.get(name)
        if g is None:
            bad.append(f"{name}: missing")
        elif g["dtype"] != w["dtype"] or g["shape"] != w["shape"]:
            bad.append(f"{name}: {g['dtype']}{g['shape']} expected {w['dtype']}{w['shape']}")
        else:
            a, b = tensor_bytes(gh, gd, name), tensor_bytes(wh, wd, name)
            if a != b:
                diff = sum(1 for i in range(0, len(a), 4) if a[i : i + 4] != b[i : i + 4])
                bad.append(f"{name}: {diff} of {len(a) // 4} elements differ")
    print("BIT-IDENTICAL" if not bad else "DIFFERS (" + "; ".join(bad) + ")")
    return 0 if not bad else 1


def blank(golden, batch, dest):
    header, _ = read(golden)
    tensors = []
    for name, h in header.items():
        shape = [int(batch)] + h["shape"][1:]
        count = 1
        for d in shape:
            count *= d
        tensors.append((name, h["dtype"], shape, bytes(4 * count)))
    write(dest, tensors)


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "split" and len(sys.argv) in (5, 6):
        split(*sys.argv[2:])
    elif cmd == "compare" and len(sys.argv) == 4:
        sys.exit(compare(*sys.argv[2:]))
    elif cmd == "blank" and len(sys.argv) == 5:
        blank(*sys.argv[2:])
    else:
        sys.exit(__doc__)
