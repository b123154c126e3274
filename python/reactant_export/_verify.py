"""verify: run a function in jax and its bundle on a reactant-server, compare the outputs."""

import os
import shutil
import tempfile

import jax
import numpy as np

from ._export import flat_function, flatten_params, resolve_model


def _tritonclient_http():
    """tritonclient.http, or an ImportError that says how to install it."""
    try:
        import tritonclient.http as httpclient
    except ImportError as e:
        raise ImportError("reactant_export.verify needs tritonclient's HTTP client: "
                          "pip install './python[verify]' (or tritonclient[http])") from e
    return httpclient


def served_tensors(url, model):
    """([(input name, wire datatype)], [output name]) from the server's ModelMetadata, in the
    manifest's order. Raises RuntimeError with the server's reason when the model is not ready."""
    httpclient = _tritonclient_http()
    from tritonclient.utils import InferenceServerException

    client = httpclient.InferenceServerClient(url=url)
    try:
        try:
            ready = client.is_model_ready(model)
        except InferenceServerException as e:
            ready, reason = False, str(e)
        if not ready:
            reason = ""
            try:
                for entry in client.get_model_repository_index():
                    if entry.get("name") == model:
                        reason = entry.get("reason", entry.get("state", ""))
            except InferenceServerException as e:
                reason = str(e)
            raise RuntimeError(f"model {model!r} is not ready on {url}: "
                               f"{reason or 'the server does not serve it'}")
        meta = client.get_model_metadata(model)
    finally:
        client.close()
    return ([(t["name"], t["datatype"]) for t in meta["inputs"]],
            [t["name"] for t in meta["outputs"]])


def infer_http(url, model, inputs, outputs):
    """One KServe V2 request with tritonclient's HTTP client: inputs [(name, datatype, array)]
    with KServe datatypes (FP32, INT64, ...)."""
    httpclient = _tritonclient_http()

    client = httpclient.InferenceServerClient(url=url)
    try:
        req = []
        for name, dtype, array in inputs:
            x = httpclient.InferInput(name, list(array.shape), dtype)
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
    _tritonclient_http()  # before starting a server

    def ask(where):
        in_specs, out_names = served_tensors(where, model)
        if len(in_specs) != len(inputs):
            raise ValueError(f"{len(inputs)} inputs given but model {model!r} has "
                             f"{len(in_specs)}: {[n for n, _ in in_specs]}")
        from tritonclient.utils import triton_to_np_dtype

        # As jax does, send each input in the type the model takes (float64 as FP32, ...).
        req = [(n, d, x.astype(triton_to_np_dtype(d), copy=False))
               for (n, d), x in zip(in_specs, inputs)]
        return out_names, infer_http(where, model, req, out_names)

    if url is None:
        from ._server import Server

        repo = tempfile.mkdtemp(prefix="reactant_export_verify_")
        try:
            os.symlink(bundle_dir, os.path.join(repo, model))
            with Server(repo, binary=server, wait="started") as s:
                out_names, got = ask(s.http_url)
        finally:
            shutil.rmtree(repo, ignore_errors=True)
    else:
        out_names, got = ask(url)
    if len(out_names) != len(expected):
        raise ValueError(f"the function returns {len(expected)} arrays but model {model!r} has "
                         f"{len(out_names)} outputs: {out_names}")
    report = {}
    for name, want in zip(out_names, expected):
        have = got[name]
        if have.shape != want.shape:
            report[name] = float("inf")
        else:
            d = np.abs(have.astype(np.float64) - want.astype(np.float64))
            report[name] = float(d.max()) if d.size else 0.0
    return report
