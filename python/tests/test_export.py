"""export_bundle without a server: files, manifest, weights, provenance, refusals."""

import hashlib
import json
import os
import re
import subprocess
import sys

import jax.numpy as jnp
import numpy as np
import pytest

import models
import reactant_export as rx
from reactant_export import _safetensors


def export_mlp(tmp_path, **kw):
    args = dict(name="mlp", dir=tmp_path / "mlp", batch_sizes=[1, 4], input_names=["features"],
                output_names=["logits", "probs"])
    args.update(kw)
    return rx.export_bundle(models.mlp, models.mlp_params(), [np.zeros((2, 4), np.float32)],
                            **args)


def test_files_manifest_weights_and_provenance(tmp_path):
    d = export_mlp(tmp_path)
    assert sorted(os.listdir(d)) == ["manifest.yaml", "model.b1.mlir", "model.b4.mlir",
                                     "weights.safetensors"]
    for f in ("model.b1.mlir", "model.b4.mlir"):
        with open(os.path.join(d, f), "rb") as fh:
            assert fh.read(4) == b"ML\xefR"  # StableHLO portable artifact
    text = open(os.path.join(d, "manifest.yaml")).read()
    assert 'format_version: "2.0"' in text
    assert '{name: "features", dtype: "f32", shape: "cn", dims: {c: 4}}' in text
    assert '{name: "probs", dtype: "f32", shape: "cn", dims: {c: 3}}' in text
    assert "batching: {compiled_batch_sizes: [1, 4]}" in text
    tensors, meta = _safetensors.read(os.path.join(d, "weights.safetensors"))
    order = json.loads(meta["argument_order"])
    # jax's flatten order of the params dict (keys sorted) is the argument order.
    assert order == ["hidden.b", "hidden.w", "out.b", "out.w"]
    np.testing.assert_array_equal(tensors["hidden.w"], models.mlp_params()["hidden"]["w"])
    prov = text.split("provenance: ", 1)[1]
    for key in ("jax_version", "jaxlib_version", "reactant_export_version", "git_commit",
                "git_dirty", "exported_at"):
        assert f'"{key}"' in prov
    # This test file lives in the repository: its commit is the caller's.
    head = subprocess.run(["git", "-C", os.path.dirname(__file__), "rev-parse", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    if head:
        assert f'"git_commit": "{head}"' in prov
    for f in ("model.b1.mlir", "model.b4.mlir", "weights.safetensors"):
        digest = hashlib.sha256(open(os.path.join(d, f), "rb").read()).hexdigest()
        assert f'"{f}": "sha256:{digest}"' in prov


def test_text_format_and_arity_of_main(tmp_path):
    d = export_mlp(tmp_path, format="text", batch_sizes=[2])
    text = open(os.path.join(d, "model.b2.mlir")).read()
    assert rx.main_arity(text) == 1 + 4
    assert "tensor<2x4xf32>" in text


def test_basename_must_equal_name(tmp_path):
    with pytest.raises(rx.ExportError, match="basename"):
        export_mlp(tmp_path, dir=tmp_path / "other")
    assert not (tmp_path / "other").exists()


def test_unused_weight_is_kept_so_the_arity_holds(tmp_path):
    p = models.mlp_params()
    p["unused"] = np.ones(3, np.float32)
    d = rx.export_bundle(models.mlp, p, [np.zeros((1, 4), np.float32)], name="mlp",
                         dir=tmp_path / "mlp", batch_sizes=[1], input_names=["features"],
                         output_names=["logits", "probs"], format="text")
    assert rx.main_arity(open(os.path.join(d, "model.b1.mlir")).read()) == 1 + 5


def test_arity_check_refuses_an_unservable_bundle(tmp_path, monkeypatch):
    # A module whose main lost an argument (as jax does for unused ones without keep_unused).
    from reactant_export import _export

    real = _export.main_arity
    monkeypatch.setattr(_export, "main_arity", lambda text: real(text) - 1)
    with pytest.raises(rx.ExportError, match=r"main takes 4 arguments but the bundle has 1 "
                                             r"inputs and 4 weights \(5 expected\)"):
        export_mlp(tmp_path)
    assert not (tmp_path / "mlp").exists()


def test_wrong_output_count_and_names_are_refused(tmp_path):
    with pytest.raises(rx.ExportError, match="returns 2 arrays but 1 output names"):
        export_mlp(tmp_path, output_names=["logits"])
    with pytest.raises(rx.ExportError, match="not a valid tensor name"):
        export_mlp(tmp_path, input_names=["bad name"])
    with pytest.raises(rx.ExportError, match="already holds a bundle"):
        export_mlp(tmp_path)
        export_mlp(tmp_path)


def test_variable_axis_letters(tmp_path):
    d = rx.export_bundle(models.seq_model, models.seq_params(),
                         [np.zeros((1, 4), np.int32)] * 2, name="seq", dir=tmp_path / "seq",
                         batch_sizes=[1, 2], input_names=["ids", "mask"],
                         output_names=["hidden", "logits"],
                         variable_axes={"ids": {1: "s"}, "mask": {1: "s"}},
                         input_shapes=[{"s": 4}, {"s": 8}])
    assert sorted(f for f in os.listdir(d) if f.endswith(".mlir")) == [
        "model.v0.b1.mlir", "model.v0.b2.mlir", "model.v1.b1.mlir", "model.v1.b2.mlir"]
    text = open(os.path.join(d, "manifest.yaml")).read()
    assert '{name: "ids", dtype: "i32", shape: "sn", dims: {s: -1}}' in text
    assert '{name: "hidden", dtype: "f32", shape: "csn", dims: {c: 8, s: -1}}' in text
    assert 'input_shapes: [{"s": 4}, {"s": 8}]' in text
    _, meta = _safetensors.read(os.path.join(d, "weights.safetensors"))
    assert json.loads(meta["argument_order"]) == ["head.0", "head.1", "positions", "tokens"]


def test_cli_help():
    r = subprocess.run([sys.executable, "-m", "reactant_export", "--help"], capture_output=True,
                       text=True, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert r.returncode == 0, r.stderr
    assert "export_bundle" in r.stdout or "MODULE:FUNCTION" in r.stdout
