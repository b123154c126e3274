"""verify: run a function in jax and its bundle on a reactant-server, compare the outputs."""

import os
import re
import shutil
import tempfile

import jax
import numpy as np

from ._export import flat_function, flatten_params, resolve_model

_WIRE = {"f16": "FP16", "f32": "FP32", "f64": "FP64", "bf16": "BF16", "i8": "INT8",
         "i16": "INT16", "i32": "INT32", "i64": "INT64", "u8": "UINT8", "u16": "UINT16",
         "u32": "UINT32", "u64": "UINT64", "bool": "BOOL"}


def manifest_tensors(bundle_dir):
    """[(section, name, dtype)] of a manifest written by export_bundle (flow-style specs)."""
    out = []
    section = None
    with open(os.path.join(bundle_dir, "manifest.yaml")) as f:
        for line in f:
            if re.match(r"^executable_(inputs|outputs):", line):
                section = line.split(":")[0]
            elif re.match(r"^\S", line):
                section = None
            m = re.search(r'name:\s*"([^"]+)",\s*dtype:\s*"([^"]+)"', line)
            if section and m:
                out.append((section, m.group(1), m.group(2)))
    return out


def infer_http(url, model, inputs, outputs):
    """One KServe V2 request with tritonclient's HTTP client: inputs [(name, dtype, array)]."""
    import tritonclient.http as httpclient

    client = httpclient.InferenceServerClient(url=url)
    try:
        req = []
        for name, dtype, array in inputs:
            x = httpclient.InferInput(name, list(array.shape), _WIRE[dtype])
            x.set_data_from_numpy(np.ascontiguousarray(array), binary_data=True)
            req.append(x)
        outs = [httpclient.InferRequestedOutput(n, binary_data=True) for n in outputs]
        result = client.infer(model, req, outputs=outs)
        return {n: result.as_numpy(n) for n in outputs}
    finally:
        client.close()


def verify(bundle_dir, fn, params, inputs, url=None, server=None):
    """Runs fn(*inputs, params) in jax and the bundle on a server; returns
    {output name: largest absolute difference} (inf when shapes differ).

    url: host:port of a running server's HTTP endpoint that serves the bundle (under its folder
    name). Without it a `reactant-server serve` is started on free ports over a temporary
    repository holding only this bundle (`server`: the binary, else $REACTANT_SERVER or PATH)."""
    bundle_dir = os.path.abspath(bundle_dir)
    model = os.path.basename(bundle_dir)
    call, params, _ = resolve_model(fn, params)
    _, arrays, treedef = flatten_params(params)
    inputs = [np.asarray(x) for x in inputs]
    flat = flat_function(call, treedef, len(inputs))
    expected = [np.asarray(y) for y in jax.jit(flat)(*inputs, *arrays)]
    tensors = manifest_tensors(bundle_dir)
    in_specs = [(n, d) for s, n, d in tensors if s == "executable_inputs"]
    out_names = [n for s, n, _ in tensors if s == "executable_outputs"]
    if len(in_specs) != len(inputs):
        raise ValueError(f"{len(inputs)} inputs but the manifest has {len(in_specs)}")
    req = [(n, d, x) for (n, d), x in zip(in_specs, inputs)]
    if url is None:
        from ._server import Server

        repo = tempfile.mkdtemp(prefix="reactant_export_verify_")
        try:
            os.symlink(bundle_dir, os.path.join(repo, model))
            with Server(repo, binary=server) as s:
                got = infer_http(s.http_url, model, req, out_names)
        finally:
            shutil.rmtree(repo, ignore_errors=True)
    else:
        got = infer_http(url, model, req, out_names)
    report = {}
    for name, want in zip(out_names, expected):
        have = got[name]
        if have.shape != want.shape:
            report[name] = float("inf")
        else:
            d = np.abs(have.astype(np.float64) - want.astype(np.float64))
            report[name] = float(d.max()) if d.size else 0.0
    return report
