"""export_bundle(polymorphic=True): one shape-polymorphic model.mlir that the server refines per
compiled size and shape variant; served answers compared with jax's (test_serve's tolerance)."""

import os
import subprocess

import numpy as np
import pytest
import tritonclient.http as httpclient

import models
import reactant_export as rx
from test_serve import close

SEQ = dict(batch_sizes=[1, 2], input_names=["ids", "mask"], output_names=["hidden", "logits"],
           variable_axes={"ids": {1: "s"}, "mask": {1: "s"}}, polymorphic=True)


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("poly")
    rx.export_bundle(models.mlp, models.mlp_params(), [np.zeros((1, 4), np.float32)],
                     name="mlp", dir=root / "mlp", batch_sizes=[1, 4], input_names=["features"],
                     output_names=["logits", "probs"], polymorphic=True)
    rx.export_bundle(models.seq_model, models.seq_params(), [np.zeros((1, 4), np.int32)] * 2,
                     name="seq", dir=root / "seq", input_shapes=[{"s": 4}, {"s": 8}],
                     constraints=[f"s <= {models.MAX_SEQ}"], format="text", **SEQ)
    return root


def test_one_polymorphic_program(repo):
    for m in ("mlp", "seq"):
        assert sorted(os.listdir(repo / m)) == ["manifest.yaml", "model.mlir",
                                                "weights.safetensors"]
    text = (repo / "seq" / "model.mlir").read_text()
    assert "tensor<?x?xi32>" in text
    assert "shape_assertion" in text  # s <= 16, checked by the server at load
    manifest = (repo / "seq" / "manifest.yaml").read_text()
    assert '{name: "ids", dtype: "i32", shape: "sn", dims: {s: -1}}' in manifest
    assert 'input_shapes: [{"s": 4}, {"s": 8}]' in manifest


def test_validate_refines_every_program(repo, server_binary):
    r = subprocess.run([server_binary, "bundle", "validate", repo / "mlp", repo / "seq"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        "ok mlp batch_sizes=[1, 4] refined_from=model.mlir inputs=[features: f32[-1,4]] "
        "weights=4",
        "ok seq batch_sizes=[1, 2] shape_variants=[{s=4}, {s=8}] programs=4 "
        "refined_from=model.mlir inputs=[ids: i32[-1,-1], mask: i32[-1,-1]] weights=4"]


@pytest.mark.parametrize("n,s", [(1, 4), (3, 8)])  # 3 rows: padded to 4 / run as 2 + 1
def test_served_answers_equal_jax(repo, server_binary, n, s):
    rng = np.random.default_rng(60 + n)
    x = rng.standard_normal((n, 4)).astype(np.float32)
    ids = rng.integers(0, models.VOCAB, size=(n, s), dtype=np.int32)
    mask = np.ones((n, s), np.int32)
    with rx.Server(repo, binary=server_binary) as server:
        report = rx.verify(repo / "mlp", models.mlp, models.mlp_params(), [x],
                           url=server.http_url)
        assert max(report.values()) <= 1e-4, report
        client = httpclient.InferenceServerClient(url=server.http_url)
        try:
            req = []
            for name, a in (("ids", ids), ("mask", mask)):
                t = httpclient.InferInput(name, list(a.shape), "INT32")
                t.set_data_from_numpy(a)
                req.append(t)
            result = client.infer("seq", req)
        finally:
            client.close()
    hidden, logits = models.seq_model(ids, mask, models.seq_params())
    close(result.as_numpy("hidden"), hidden)
    close(result.as_numpy("logits"), logits)


def test_polymorphic_refusals(tmp_path):
    with pytest.raises(rx.ExportError, match=r"model\.mlir: jax\.export with symbolic shapes "
                                             r"failed \(a constraint such as 's <= 16' may be "
                                             r"missing\): TypeError: add got incompatible shapes"):
        rx.export_bundle(models.seq_model, models.seq_params(), [np.zeros((1, 4), np.int32)] * 2,
                         name="seq", dir=tmp_path / "seq", input_shapes=[{"s": 4}], **SEQ)
    with pytest.raises(rx.ExportError, match="polymorphic=True needs a batch axis or "
                                             "variable_axes"):
        rx.export_bundle(models.mlp, models.mlp_params(), [np.zeros((1, 4), np.float32)],
                         name="mlp", dir=tmp_path / "mlp", batch_axis=None,
                         input_names=["features"], output_names=["logits", "probs"],
                         polymorphic=True)
    with pytest.raises(rx.ExportError, match="constraints are for polymorphic=True"):
        rx.export_bundle(models.mlp, models.mlp_params(), [np.zeros((1, 4), np.float32)],
                         name="mlp", dir=tmp_path / "mlp", batch_sizes=[1],
                         input_names=["features"], output_names=["logits", "probs"],
                         constraints=["b <= 8"])
    assert os.listdir(tmp_path) == []
