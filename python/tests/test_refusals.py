"""export_bundle and the command line on bad arguments: each refusal names what was wrong and
nothing is written; the dtypes written are the ones jax computes in."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import models
import reactant_export as rx
from reactant_export import _safetensors

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def export(tmp_path, fn=models.mlp, params=None, inputs=None, **kw):
    args = dict(name="m", dir=tmp_path / "m", batch_sizes=[1, 4], input_names=["features"],
                output_names=["logits", "probs"])
    args.update(kw)
    return rx.export_bundle(fn, models.mlp_params() if params is None else params,
                            inputs or [np.zeros((1, 4), np.float32)], **args)


def test_float64_inputs_and_python_scalars_are_written_in_jax_dtypes(tmp_path):
    # jax_enable_x64 is off: jax computes float64 as float32 and a Python int as int32, so
    # main takes those types and the manifest and weights file must say so.
    p = models.mlp_params()
    p["hidden"]["w"] = p["hidden"]["w"].astype(np.float64)
    p["scale"] = 2
    d = export(tmp_path, fn=lambda x, q: models.mlp(x * q["scale"], q), params=p,
               inputs=[np.zeros((1, 4), np.float64)], format="text")
    text = open(os.path.join(d, "manifest.yaml")).read()
    assert '{name: "features", dtype: "f32", shape: "cn", dims: {c: 4}}' in text
    tensors, meta = _safetensors.read(os.path.join(d, "weights.safetensors"))
    assert tensors["hidden.w"].dtype == np.float32
    assert tensors["scale"].dtype == np.int32 and tensors["scale"].shape == ()
    main = open(os.path.join(d, "model.b1.mlir")).read()
    assert "tensor<1x4xf32>" in main and "tensor<i32>" in main


def test_float64_bundle_validates(tmp_path, server_binary):
    d = export(tmp_path, inputs=[np.zeros((1, 4), np.float64)])
    r = subprocess.run([server_binary, "bundle", "validate", d], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("ok m batch_sizes=[1, 4] inputs=[features: f32[-1,4]]")


@pytest.mark.parametrize("kw,message", [
    (dict(batch_sizes="1,4"), "batch_sizes must be a list of integers, not '1,4'"),
    (dict(batch_sizes=[1.5, 4]), r"batch_sizes must be a list of integers, not \[1.5, 4\]"),
    (dict(batch_sizes=[0, 4]), "batch sizes must be > 0, not 0"),
    (dict(platforms=("cpu", "cuda")), r"platforms must name one platform, not \['cpu', 'cuda'\] "
                                      r"\(with several, jax's main takes a platform index"),
    (dict(fn=lambda x, p: None, output_names=[]),
     r"the function returns no arrays \(a bundle needs at least one output\)"),
    (dict(fn=lambda x, p: "logits"), "the function's result is a str, not an array"),
    (dict(fn=lambda x, p: {"logits": x, "probs": "p"}),
     r"output \['probs'\] of the function is a str, not an array"),
    (dict(params={"hidden": {"w": np.zeros((4, 8), np.float32)}}),
     r"calling the function on \(features: float32\[5, 4\]\) and the params failed: "
     r"KeyError: 'b'"),
    (dict(params={"w": np.zeros(3, np.float32), "note": "v2"}),
     r"weight 'note' is a str, not an array"),
    (dict(inputs=[np.array([["a", "b", "c", "d"]])]),
     "example input 'features' has dtype <U1, not a numeric or bool array"),
])
def test_refusals_say_what_is_wrong(tmp_path, kw, message):
    with pytest.raises(rx.ExportError, match=message):
        export(tmp_path, **kw)
    assert not (tmp_path / "m").exists()


def test_a_list_example_input_is_an_array(tmp_path):
    d = export(tmp_path, inputs=[[[0.0, 0.0, 0.0, 0.0]]], batch_sizes=[2])
    text = open(os.path.join(d, "manifest.yaml")).read()
    assert '{name: "features", dtype: "f32", shape: "cn", dims: {c: 4}}' in text


def cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "reactant_export", *args], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, "PYTHONPATH": PYTHON_DIR})


@pytest.fixture()
def model_file(tmp_path):
    # A model file outside any git repository (tmp_path is not in the checkout).
    f = tmp_path / "iris.py"
    f.write_text("import jax, numpy as np\n"
                 "def init_params():\n"
                 "    return {'w': np.ones((4, 3), np.float32)}\n"
                 "def predict(x, p):\n"
                 "    return x @ p['w']\n")
    return f


@pytest.mark.parametrize("extra,rc,message", [
    (["--batch-sizes", "1,x"], 2, "--batch-sizes '1,x': expected integers separated by commas"),
    (["--batch-sizes", "0"], 1, "error: batch sizes must be > 0, not 0"),
    (["--input", "mask:f99:4"], 2, "--input 'mask:f99:4': dtype 'f99' is not one of f16, bf16"),
    (["--input", "mask:f32:4xq"], 2, "--input 'mask:f32:4xq': shape '4xq' is not sizes joined"),
])
def test_cli_errors_are_one_line(tmp_path, model_file, extra, rc, message):
    r = cli(f"{model_file}:predict", "--params", f"{model_file}:init_params", "--input",
            "features:f32:4", "--output", "logits", "--dir", str(tmp_path / "iris"), *extra,
            cwd=tmp_path)
    assert r.returncode == rc, r.stderr
    assert message in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "iris").exists()


def test_cli_missing_function_is_named(tmp_path, model_file):
    r = cli(f"{model_file}:nope", "--input", "features:f32:4", "--output", "logits", "--dir",
            str(tmp_path / "iris"), cwd=tmp_path)
    assert r.returncode == 1
    assert f"error: '{model_file}:nope': AttributeError: module 'iris' has no attribute 'nope'" \
        in r.stderr


def test_cli_provenance_is_the_model_files_repository(tmp_path, model_file):
    # Run from inside the checkout: the git state is still that of the model's file.
    r = cli(f"{model_file}:predict", "--params", f"{model_file}:init_params", "--input",
            "features:f32:4", "--output", "logits", "--dir", str(tmp_path / "iris"),
            cwd=PYTHON_DIR)
    assert r.returncode == 0, r.stderr
    prov = (tmp_path / "iris" / "manifest.yaml").read_text().split("provenance: ", 1)[1]
    prov = json.loads(prov)
    assert (prov["git_commit"], prov["git_branch"], prov["git_dirty"]) == \
        ("unknown", "unknown", "unknown")


def test_verify_without_tritonclient_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "tritonclient.http", None)  # import raises ImportError
    with pytest.raises(ImportError, match=r"^reactant_export\.verify needs tritonclient's HTTP "
                                          r"client: pip install '\./python\[verify\]'"):
        rx.verify("unused", models.mlp, models.mlp_params(), [np.zeros((1, 4), np.float32)])


def test_linen_module_without_variables_is_refused(tmp_path):
    module, _ = models.cnn()
    with pytest.raises(rx.ExportError, match=r"^a flax\.linen Module needs its variables as "
                                             r"params: pass module\.init\(rng, \*example_inputs\)$"):
        rx.export_bundle(module, None, [np.zeros((1, 8, 8, 1), np.float32)], name="cnn",
                         dir=tmp_path / "cnn", batch_sizes=[1], input_names=["image"],
                         output_names=["logits"])
