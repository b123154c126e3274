"""Exports four models, serves them with one `reactant-server serve`, sends requests with
tritonclient's HTTP client and compares with jax's own outputs.

Tolerance: the CPU executor computes in f32 like XLA:CPU but sums in its own order, so each
output must satisfy |server - jax| <= ATOL + RTOL * max|jax| (ATOL = RTOL = 1e-5)."""

import os
import subprocess

import jax
import numpy as np
import pytest
import tritonclient.http as httpclient

import models
import reactant_export as rx

ATOL = 1e-5
RTOL = 1e-5


def close(have, want):
    want = np.asarray(want)
    assert have.shape == want.shape
    bound = ATOL + RTOL * float(np.max(np.abs(want)))
    diff = float(np.max(np.abs(have.astype(np.float64) - want.astype(np.float64))))
    assert diff <= bound, f"max |diff| {diff} > {bound}"


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("repo")
    rx.export_bundle(models.mlp, models.mlp_params(), [np.zeros((1, 4), np.float32)],
                     name="mlp", dir=root / "mlp", batch_sizes=[1, 4],
                     input_names=["features"], output_names=["logits", "probs"])
    module, variables = models.cnn()
    rx.export_bundle(module, variables, [np.zeros((1, 8, 8, 1), np.float32)], name="cnn",
                     dir=root / "cnn", batch_sizes=[1, 2], input_names=["image"],
                     output_names=["logits"], format="text")
    rx.export_bundle(models.encoder_block(), None, [np.zeros((1, 6, 16), np.float32)],
                     name="encoder", dir=root / "encoder", batch_sizes=[1, 2],
                     input_names=["x"], output_names=["y"])
    rx.export_bundle(models.seq_model, models.seq_params(), [np.zeros((1, 4), np.int32)] * 2,
                     name="seq", dir=root / "seq", batch_sizes=[1, 2],
                     input_names=["ids", "mask"], output_names=["hidden", "logits"],
                     variable_axes={"ids": {1: "s"}, "mask": {1: "s"}},
                     input_shapes=[{"s": 4}, {"s": 8}])
    return root


@pytest.fixture(scope="module")
def server(repo, server_binary):
    with rx.Server(repo, binary=server_binary) as s:
        yield s


def infer(server, model, inputs, outputs):
    client = httpclient.InferenceServerClient(url=server.http_url)
    try:
        req = []
        for name, array in inputs:
            wire = {np.dtype(np.float32): "FP32", np.dtype(np.int32): "INT32"}[array.dtype]
            x = httpclient.InferInput(name, list(array.shape), wire)
            x.set_data_from_numpy(array)
            req.append(x)
        result = client.infer(model, req)
        return [result.as_numpy(n) for n in outputs]
    finally:
        client.close()


def test_bundles_validate(repo, server_binary):
    r = subprocess.run([server_binary, "bundle", "validate"] +
                       [str(repo / m) for m in ("mlp", "cnn", "encoder", "seq")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("ok ") == 4, r.stdout


def test_flax_weight_names_and_letters(repo):
    import json

    from reactant_export import _safetensors

    _, meta = _safetensors.read(str(repo / "cnn" / "weights.safetensors"))
    assert json.loads(meta["argument_order"]) == [
        "params.Conv_0.bias", "params.Conv_0.kernel", "params.Conv_1.bias",
        "params.Conv_1.kernel", "params.Dense_0.bias", "params.Dense_0.kernel"]
    text = (repo / "cnn" / "manifest.yaml").read_text()
    assert '{name: "image", dtype: "f32", shape: "edcn", dims: {e: 1, d: 8, c: 8}}' in text
    assert '"source_framework": "flax.linen"' in text
    _, meta = _safetensors.read(str(repo / "encoder" / "weights.safetensors"))
    names = json.loads(meta["argument_order"])
    assert "ln1.scale" in names and "ff1.kernel" in names
    assert any(n.startswith("attn.query.") for n in names), names
    assert '"source_framework": "flax.nnx"' in (repo / "encoder" / "manifest.yaml").read_text()


def test_all_models_ready(server):
    client = httpclient.InferenceServerClient(url=server.http_url)
    try:
        for m in ("mlp", "cnn", "encoder", "seq"):
            assert client.is_model_ready(m), server.log()
    finally:
        client.close()


@pytest.mark.parametrize("n", [1, 3])  # 3: padded to the compiled 4
def test_mlp(server, n):
    x = np.random.default_rng(10 + n).standard_normal((n, 4)).astype(np.float32)
    logits, probs = infer(server, "mlp", [("features", x)], ["logits", "probs"])
    want = models.mlp(x, models.mlp_params())
    close(logits, want["logits"])
    close(probs, want["probs"])


@pytest.mark.parametrize("n", [1, 2])
def test_cnn_linen(server, n):
    module, variables = models.cnn()
    x = np.random.default_rng(20 + n).standard_normal((n, 8, 8, 1)).astype(np.float32)
    (logits,) = infer(server, "cnn", [("image", x)], ["logits"])
    close(logits, module.apply(variables, x))


@pytest.mark.parametrize("n", [1, 2])
def test_encoder_block_nnx(server, n):
    block = models.encoder_block()
    x = np.random.default_rng(30 + n).standard_normal((n, 6, 16)).astype(np.float32)
    (y,) = infer(server, "encoder", [("x", x)], ["y"])
    from flax import nnx

    close(y, nnx.jit(lambda m, v: m(v))(block, x))


@pytest.mark.parametrize("n,s", [(1, 4), (2, 8), (2, 4)])
def test_variable_sequence_axis(server, n, s):
    rng = np.random.default_rng(40 + n * s)
    ids = rng.integers(0, models.VOCAB, size=(n, s), dtype=np.int32)
    mask = np.ones((n, s), np.int32)
    mask[:, s - 1:] = 0
    hidden, logits = infer(server, "seq", [("ids", ids), ("mask", mask)], ["hidden", "logits"])
    want_hidden, want_logits = models.seq_model(ids, mask, models.seq_params())
    close(hidden, want_hidden)
    close(logits, want_logits)


def test_unserved_sequence_length_is_refused(server):
    ids = np.zeros((1, 5), np.int32)
    with pytest.raises(Exception, match="matches no shape variant"):
        infer(server, "seq", [("ids", ids), ("mask", ids)], ["hidden", "logits"])


def test_verify_against_the_running_server(server, repo):
    x = np.random.default_rng(50).standard_normal((2, 6, 16)).astype(np.float32)
    report = rx.verify(repo / "encoder", models.encoder_block(), None, [x], url=server.http_url)
    assert set(report) == {"y"}
    assert report["y"] <= 1e-4, report


def test_verify_starts_its_own_server(repo, server_binary):
    x = np.random.default_rng(51).standard_normal((3, 4)).astype(np.float32)
    report = rx.verify(repo / "mlp", models.mlp, models.mlp_params(), [x], server=server_binary)
    assert set(report) == {"logits", "probs"}
    assert max(report.values()) <= 1e-4, report


def test_verify_names_why_a_bundle_did_not_load(tmp_path, repo, server_binary):
    # The started server comes up with the bundle failed: verify reports the load error at
    # once instead of waiting for a readiness that never comes.
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(repo / "mlp", broken)
    text = (broken / "manifest.yaml").read_text().replace("name: mlp", "name: broken")
    (broken / "manifest.yaml").write_text(text)
    with open(broken / "weights.safetensors", "r+b") as f:
        f.truncate(200)
    x = np.zeros((1, 4), np.float32)
    with pytest.raises(RuntimeError, match=r"^model 'broken' is not ready on 127\.0\.0\.1:\d+: "
                                           r"weights\.safetensors: truncated: header length 344 "
                                           r"exceeds the 192 bytes after the length field$"):
        rx.verify(broken, models.mlp, models.mlp_params(), [x], server=server_binary)


def test_verify_reads_a_hand_written_manifest_and_casts_inputs(server, tmp_path, repo):
    # Tensor names and types come from the server's metadata, so a manifest in block style (as
    # a hand-written one for a shape-polymorphic model.mlir) works; float64 inputs are sent as
    # the FP32 the model takes, as jax computes them.
    import shutil

    d = tmp_path / "mlp"
    shutil.copytree(repo / "mlp", d)
    lines = (d / "manifest.yaml").read_text().splitlines()
    spec = [i for i, l in enumerate(lines) if l.startswith("executable_inputs:")][0] + 1
    lines[spec] = "  - name: features\n    dtype: f32\n    shape: cn\n    dims:\n      c: 4"
    (d / "manifest.yaml").write_text("\n".join(lines) + "\n")
    x = np.random.default_rng(52).standard_normal((2, 4))
    report = rx.verify(d, models.mlp, models.mlp_params(), [x], url=server.http_url)
    assert set(report) == {"logits", "probs"}
    assert max(report.values()) <= 1e-4, report
