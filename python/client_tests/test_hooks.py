"""model.py pre/post-processing hooks (docs/hooks.md) over both protocols with tritonclient:
the digits_softmax example of examples/hooks_repo, BYTES in and out, and the failure cases
(a hook that raises, crashes with SIGSEGV, hangs past hooks.timeout_ms, or returns the wrong
shape or dtype), each with its documented error while every other model keeps serving; the
regulated profile's determinism warm-up; and meta models (digits_top3 and its internal
digits_probs, callees that fail the meta's load)."""

import json
import os
import re
import shutil

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

import reactant_export as rx
from conftest import ROOT, SHARED
from tritonclient_fixtures import client, protocol  # noqa: F401 (pytest fixtures)

EXAMPLES = os.path.join(ROOT, "examples")
DIGITS = os.path.join(EXAMPLES, "model_repo", "digits_cnn")
MODULES = {"http": httpclient, "grpc": grpcclient}
TIMEOUT_MS = 2000

# The faulty bundles: digits_cnn's program behind a model.py that misbehaves when the first
# pixel of the image is 1.0 (the sentinel) and otherwise returns the logits.
FAULTS = {
    "hook_raise": "raise RuntimeError('postprocess failed on purpose')",
    "hook_crash": "os.kill(os.getpid(), 11)",
    "hook_hang": "while True: pass",
    "hook_bad_shape": "return {'logits': outputs['logits'][:, :5]}",
    "hook_bad_dtype": "return {'logits': outputs['logits'].astype(np.float64)}",
}
FAULTY_MODEL = """import os
import numpy as np
SENTINEL = {{"flag": False}}

def preprocess(inputs):
    SENTINEL["flag"] = bool(inputs["image"].reshape(-1)[0] == 1.0)
    return inputs

def postprocess(outputs):
    if SENTINEL["flag"]:
        {fault}
    return {{"logits": outputs["logits"]}}

register_model("faulty", preprocess=preprocess, postprocess=postprocess)
"""
FAULTY_MANIFEST = """format_version: "2.0"
executable_inputs:
  - {name: "image", dtype: "f32", shape: "edcn", dims: {c: 8, d: 8, e: 1}}
executable_outputs:
  - {name: "logits", dtype: "f32", shape: "cn", dims: {c: 10}}
  - {name: "probs", dtype: "f32", shape: "cn", dims: {c: 10}}
client_outputs:
  - {name: "logits", dtype: "f32", shape: "cn", dims: {c: 10}}
batching: {compiled_batch_sizes: [1, 4, 8]}
"""
# A BYTES input: each element is the 64 pixels (0..16) as comma-separated text.
TEXT_MODEL = """import numpy as np

def preprocess(inputs):
    rows = [np.array([int(v) for v in t.decode().split(",")], np.float32) for t in
            inputs["text"].reshape(-1)]
    return {"image": (np.stack(rows) / np.float32(16)).reshape(-1, 8, 8, 1)}

def postprocess(outputs):
    label = outputs["logits"].argmax(axis=1)
    return {"answer": np.array([f"digit {int(k)}" for k in label], dtype=object)}

register_model("digits_text", preprocess=preprocess, postprocess=postprocess)
"""
TEXT_MANIFEST = FAULTY_MANIFEST.replace(
    "client_outputs:\n  - {name: \"logits\", dtype: \"f32\", shape: \"cn\", dims: {c: 10}}",
    "client_inputs:\n  - {name: \"text\", dtype: \"bytes\", shape: \"n\"}\n"
    "client_outputs:\n  - {name: \"answer\", dtype: \"bytes\", shape: \"n\"}")
# Not a function of its input: the regulated profile's warm-up refuses it.
NOISY_MODEL = """import numpy as np

def postprocess(outputs):
    return {"logits": outputs["logits"] + np.random.default_rng().random(1, np.float32)}

register_model("noisy", postprocess=postprocess)
"""

NOISY_META = """import numpy as np

def run(inputs, call):
    probs = call("digits_probs", {"pixels": inputs["pixels"]})["probs"]
    classes = np.argsort(-probs, axis=1, kind="stable")[:, :3]
    noise = np.random.default_rng().random(1, np.float32)
    return {"classes": classes.astype(np.int64),
            "scores": np.take_along_axis(probs, classes, axis=1) + noise}

register_meta_model("meta_noisy", run=run)
"""


def write_bundle(repo, name, manifest, model_py):
    d = repo / name
    d.mkdir()
    for f in ("model.b1.mlir", "model.b4.mlir", "model.b8.mlir", "weights.safetensors"):
        os.symlink(os.path.join(DIGITS, f), d / f)
    (d / "manifest.yaml").write_text(manifest)
    (d / "model.py").write_text(model_py)


@pytest.fixture(scope="module")
def worker(server_binary, tmp_path_factory):
    repo = tmp_path_factory.mktemp("hooks_repo")
    # Copies (the example's links followed), so that the executable cache writes here.
    shutil.copytree(os.path.join(EXAMPLES, "hooks_repo", "digits_softmax"),
                    repo / "digits_softmax")
    shutil.copytree(DIGITS, repo / "digits_cnn")
    shutil.copytree(os.path.join(EXAMPLES, "model_repo", "iris_mlp"), repo / "iris_mlp")
    shutil.copytree(os.path.join(EXAMPLES, "hooks_repo", "text_bert"), repo / "text_bert")
    shutil.copytree(os.path.join(EXAMPLES, "hooks_repo", "digits_top3"), repo / "digits_top3")
    shutil.copytree(os.path.join(EXAMPLES, "hooks_repo", "digits_probs"), repo / "digits_probs")
    top3_manifest = (repo / "digits_top3" / "manifest.yaml").read_text()
    # meta_bad calls a model outside its meta.calls; meta_missing and meta_of_meta name a
    # callee that is not in the repository and one that is a meta model (their loads fail).
    for name, calls, code in (
            ("meta_bad", "digits_probs", "call('iris_mlp', inputs)"),
            ("meta_missing", "no_such_model", "inputs"),
            ("meta_of_meta", "digits_top3", "call('digits_top3', inputs)")):
        meta = repo / name
        meta.mkdir()
        (meta / "manifest.yaml").write_text(
            top3_manifest.replace("calls: [digits_probs]", f"calls: [{calls}]"))
        (meta / "model.py").write_text(
            f"register_meta_model('{name}', run=lambda inputs, call: {code})\n")
    shutil.copytree(os.path.join(SHARED, "fixtures", "bundles", "tiny_bert"), repo / "tiny_bert",
                    ignore=shutil.ignore_patterns("generic", "portable"))
    for bundle in ("text_bert", "tiny_bert"):  # the fixtures are read-only
        os.chmod(repo / bundle, 0o755)
    for name, fault in FAULTS.items():
        write_bundle(repo, name, FAULTY_MANIFEST, FAULTY_MODEL.format(fault=fault))
    write_bundle(repo, "digits_text", TEXT_MANIFEST, TEXT_MODEL)
    log = tmp_path_factory.mktemp("worker") / "server.log"
    with rx.Server(str(repo), binary=server_binary, log_path=str(log),
                   settings={"hooks": {"timeout_ms": TIMEOUT_MS},
                             "runtime": {"executable_cache": True}}) as s:
        yield s


@pytest.fixture(scope="module")
def image():
    with open(os.path.join(EXAMPLES, "requests", "digit_0.json")) as f:
        tensor = json.load(f)["inputs"][0]
    return np.array(tensor["data"], np.float32).reshape(tensor["shape"])


def infer(client, protocol, model, named_arrays):
    ins = []
    for name, array in named_arrays:
        datatype = "BYTES" if array.dtype == object else {
            np.dtype(np.float32): "FP32", np.dtype(np.uint8): "UINT8",
            np.dtype(np.int32): "INT32"}[array.dtype]
        x = MODULES[protocol].InferInput(name, list(array.shape), datatype)
        x.set_data_from_numpy(array)
        ins.append(x)
    return client.infer(model, ins)


def failure(client, protocol, model, named_arrays):
    with pytest.raises(InferenceServerException) as e:
        infer(client, protocol, model, named_arrays)
    return e.value.status(), e.value.message()


def status(protocol, http, grpc):
    return str(http) if protocol == "http" else f"StatusCode.{grpc}"


def softmax(logits):  # the example's postprocess, step for step
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def assert_others_serve(client, protocol, image):
    iris = infer(client, protocol, "iris_mlp", [("features", np.zeros((1, 4), np.float32))])
    assert iris.as_numpy("logits").shape == (1, 3)
    plain = infer(client, protocol, "digits_cnn", [("image", image)])
    assert plain.as_numpy("logits").argmax() == 5


def test_softmax_example(client, protocol, image):
    batch = np.concatenate([image, image[:, ::-1]])  # two rows
    logits = infer(client, protocol, "digits_cnn", [("image", batch)]).as_numpy("logits")
    pixels = np.round(batch * 16).astype(np.uint8)
    r = infer(client, protocol, "digits_softmax", [("pixels", pixels)])
    np.testing.assert_array_equal(r.as_numpy("probs"), softmax(logits))
    np.testing.assert_array_equal(r.as_numpy("label"), logits.argmax(axis=1).astype(np.int64))
    names = [b"zero", b"one", b"two", b"three", b"four", b"five", b"six", b"seven", b"eight",
             b"nine"]
    assert list(r.as_numpy("label_name")) == [names[k] for k in logits.argmax(axis=1)]
    assert r.as_numpy("label")[0] == 5


def test_metadata_reports_the_wire_facing_tensors(client, protocol):
    md = client.get_model_metadata("digits_softmax")
    want_in = [("pixels", "UINT8", [-1, 8, 8, 1])]
    want_out = [("probs", "FP32", [-1, 10]), ("label", "INT64", [-1]), ("label_name", "BYTES", [-1])]
    if protocol == "http":
        got_in = [(t["name"], t["datatype"], t["shape"]) for t in md["inputs"]]
        got_out = [(t["name"], t["datatype"], t["shape"]) for t in md["outputs"]]
        config = client.get_model_config("digits_softmax")
        assert [o["data_type"] for o in config["output"]] == ["TYPE_FP32", "TYPE_INT64",
                                                              "TYPE_STRING"]
    else:
        got_in = [(t.name, t.datatype, list(t.shape)) for t in md.inputs]
        got_out = [(t.name, t.datatype, list(t.shape)) for t in md.outputs]
    assert (got_in, got_out) == (want_in, want_out)


def test_bytes_in_and_out(client, protocol, image):
    pixels = np.round(image * 16).astype(np.int64).reshape(-1)
    text = np.array([",".join(str(v) for v in pixels).encode()] * 3, dtype=object)
    r = infer(client, protocol, "digits_text", [("text", text)])
    assert list(r.as_numpy("answer")) == [b"digit 5"] * 3


def test_wire_inputs_are_checked_before_any_hook(client, protocol, image):
    got = failure(client, protocol, "digits_softmax", [("pixels", image)])
    assert got == (status(protocol, 400, "INVALID_ARGUMENT"),
                   "model 'digits_softmax': input 'pixels': datatype FP32 does not match the "
                   "model's UINT8 (u8[-1,8,8,1])")


def test_preprocess_that_raises_is_a_bad_request(client, protocol, image):
    pixels = np.round(image * 16).astype(np.uint8)
    pixels[0, 0, 0, 0] = 99
    got = failure(client, protocol, "digits_softmax", [("pixels", pixels)])
    assert got == (status(protocol, 400, "INVALID_ARGUMENT"),
                   "model 'digits_softmax': preprocess raised ValueError: pixels must be in "
                   "0..16, got 99")
    assert_others_serve(client, protocol, image)


def sentinel(image):
    flagged = image.copy()
    flagged[0, 0, 0, 0] = 1.0
    return flagged


def test_postprocess_that_raises_is_an_internal_error(client, protocol, image):
    got = failure(client, protocol, "hook_raise", [("image", sentinel(image))])
    assert got == (status(protocol, 500, "INTERNAL"),
                   "model 'hook_raise': postprocess raised RuntimeError: postprocess failed on "
                   "purpose")
    assert_others_serve(client, protocol, image)


def test_a_crashing_hook_is_restarted(client, protocol, image):
    code, message = failure(client, protocol, "hook_crash", [("image", sentinel(image))])
    assert code == status(protocol, 500, "INTERNAL")
    assert re.fullmatch(r"model 'hook_crash': postprocess: the hook process \(pid \d+\) killed "
                        r"by signal 11 \(SIGSEGV\) while it ran; it is restarted", message), message
    # The same model answers the next request on a fresh process; the others never stopped.
    r = infer(client, protocol, "hook_crash", [("image", image)])
    assert r.as_numpy("logits").argmax() == 5
    assert_others_serve(client, protocol, image)


def test_a_hanging_hook_is_killed_at_the_timeout(client, protocol, image):
    code, message = failure(client, protocol, "hook_hang", [("image", sentinel(image))])
    assert code == status(protocol, 504, "DEADLINE_EXCEEDED")
    assert re.fullmatch(rf"model 'hook_hang': postprocess did not finish within "
                        rf"hooks.timeout_ms {TIMEOUT_MS}: the hook process \(pid \d+\) was killed "
                        r"and is restarted", message), message
    r = infer(client, protocol, "hook_hang", [("image", image)])
    assert r.as_numpy("logits").argmax() == 5
    assert_others_serve(client, protocol, image)


def test_wrong_shape_and_dtype_name_the_tensor(client, protocol, image):
    got = failure(client, protocol, "hook_bad_shape", [("image", sentinel(image))])
    assert got == (status(protocol, 500, "INTERNAL"),
                   "model 'hook_bad_shape': postprocess output 'logits': shape [1,5] does not "
                   "match the model's [-1,10] (f32[-1,10])")
    got = failure(client, protocol, "hook_bad_dtype", [("image", sentinel(image))])
    assert got == (status(protocol, 500, "INTERNAL"),
                   "model 'hook_bad_dtype': postprocess output 'logits': datatype FP64 does not "
                   "match the model's FP32 (f32[-1,10])")
    assert_others_serve(client, protocol, image)


def test_regulated_profile_refuses_a_nondeterministic_hook(server_binary, tmp_path_factory):
    repo = tmp_path_factory.mktemp("regulated_repo")
    for name in ("digits_softmax", "digits_probs", "digits_top3"):
        os.symlink(os.path.join(EXAMPLES, "hooks_repo", name), repo / name)
    write_bundle(repo, "noisy", FAULTY_MANIFEST, NOISY_MODEL)
    # A meta whose run is not a function of its input.
    meta_noisy = repo / "meta_noisy"
    meta_noisy.mkdir()
    (meta_noisy / "manifest.yaml").write_text(
        open(os.path.join(EXAMPLES, "hooks_repo", "digits_top3", "manifest.yaml")).read())
    (meta_noisy / "model.py").write_text(NOISY_META)
    log = tmp_path_factory.mktemp("regulated") / "server.log"
    with rx.Server(str(repo), binary=server_binary, log_path=str(log),
                   settings={"runtime": {"profile": "regulated"}}) as s:
        c = httpclient.InferenceServerClient(s.http_url)
        assert c.is_model_ready("digits_softmax")
        assert not c.is_model_ready("noisy")
        assert c.is_model_ready("digits_top3")
        assert not c.is_model_ready("meta_noisy")
        text = s.log()
    assert ("hook warm-up identical dir=" + str(repo / "digits_top3") + " stage=run" in text)
    assert ("meta_noisy/model.py: run gave different results for the same input on two runs "
            "(tensor 'scores' differs); runtime.profile regulated needs hooks whose output is a "
            "function of their input") in text
    assert ("hook warm-up identical dir=" + str(repo / "digits_softmax") + " stage=postprocess"
            in text)
    assert ("noisy/model.py: postprocess gave different results for the same input on two runs "
            "(tensor 'logits' differs); runtime.profile regulated needs hooks whose output is a "
            "function of their input") in text


def test_evidence_names_the_hooks_and_their_environment(worker):
    import hashlib
    import platform
    import urllib.request

    with urllib.request.urlopen(f"http://{worker.http_url}/v2/evidence") as r:
        doc = json.load(r)
    hooks = doc["models"]["digits_softmax"]["hooks"]
    with open(os.path.join(EXAMPLES, "hooks_repo", "digits_softmax", "model.py"), "rb") as f:
        model_py = hashlib.sha256(f.read()).hexdigest()
    assert hooks["files"] == {"model.py": model_py}
    assert hooks["runtime"] == "cpython " + platform.python_version()
    assert "numpy==" + np.__version__ in hooks["packages"]
    assert re.fullmatch(r"[0-9a-f]{64}", hooks["sha256"])
    assert "hooks" not in doc["models"]["digits_cnn"]
    # The same program behind hooks is another executable cache entry.
    keys = lambda m: {k: p["cache_key"] for k, p in doc["models"][m]["programs"].items()}
    assert keys("digits_softmax").keys() == keys("digits_cnn").keys()
    assert all(keys("digits_softmax")[k] != keys("digits_cnn")[k] for k in keys("digits_cnn"))


def text_bert_hooks():
    """The example's model.py as a module: its tokenizer and postprocess."""
    path = os.path.join(EXAMPLES, "hooks_repo", "text_bert", "model.py")
    namespace = {"__file__": path, "register_model": lambda *a, **k: None}
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), namespace)
    return namespace


def test_text_classifier_tokenizes_and_labels(client, protocol):
    hooks = text_bert_hooks()
    vocab = hooks["VOCAB"]
    ids, mask = hooks["encode"]("Hello, world!")
    assert ids.tolist() == [101, vocab["hello"], vocab[","], vocab["world"], vocab["!"], 102] + [0] * 10
    assert mask.tolist() == [1] * 6 + [0] * 10
    assert hooks["wordpiece"]("foxes") == [vocab["fox"], vocab["##e"], vocab["##s"]]
    assert hooks["wordpiece"]("\u2603") == [vocab["[UNK]"]]
    assert hooks["basic_tokens"]("Café, OK?") == ["cafe", ",", "ok", "?"]
    texts = ["Hello, world!", "The quick brown fox jumps over the lazy dog.", "a terrible movie"]
    encoded = [hooks["encode"](t) for t in texts]
    plain = infer(client, protocol, "tiny_bert",
                  [("input_ids", np.stack([e[0] for e in encoded])),
                   ("attention_mask", np.stack([e[1] for e in encoded]))])
    want = hooks["postprocess"]({"pooled": plain.as_numpy("pooled")})
    r = infer(client, protocol, "text_bert",
              [("text", np.array([t.encode() for t in texts], dtype=object))])
    assert list(r.as_numpy("label")) == list(want["label"])
    np.testing.assert_array_equal(r.as_numpy("score"), want["score"])
    assert set(r.as_numpy("label")) <= {b"negative", b"neutral", b"positive"}


def test_meta_model_calls_its_sub_models(client, protocol, image):
    batch = np.concatenate([image, image[:, ::-1]])
    pixels = np.round(batch * 16).astype(np.uint8)
    probs = infer(client, protocol, "digits_softmax", [("pixels", pixels)]).as_numpy("probs")
    r = infer(client, protocol, "digits_top3", [("pixels", pixels)])
    classes = np.argsort(-probs, axis=1, kind="stable")[:, :3]
    np.testing.assert_array_equal(r.as_numpy("classes"), classes)
    np.testing.assert_array_equal(r.as_numpy("scores"), np.take_along_axis(probs, classes, 1))
    assert r.as_numpy("classes")[0].tolist() == [5, 8, 3]
    md = client.get_model_metadata("digits_top3")
    names = [t["name"] for t in md["outputs"]] if protocol == "http" else \
        [t.name for t in md.outputs]
    assert names == ["classes", "scores"]


def index_of(client, protocol):
    """name -> (state, reason) of the repository index."""
    if protocol == "http":
        return {m["name"]: (m.get("state", ""), m.get("reason", ""))
                for m in client.get_model_repository_index()}
    return {m.name: (m.state, m.reason) for m in client.get_model_repository_index().models}


INTERNAL = ("model 'digits_probs' is internal to meta model 'digits_top3' and is not served "
            "directly")


def test_sub_models_are_internal_to_their_meta(client, protocol, image):
    index = index_of(client, protocol)
    assert "digits_probs" not in index
    assert index["digits_top3"][0] == "READY"
    assert index["digits_softmax"][0] == "READY"
    pixels = np.round(image * 16).astype(np.uint8)
    got = failure(client, protocol, "digits_probs", [("pixels", pixels)])
    assert got[0] == status(protocol, 404, "NOT_FOUND")
    assert INTERNAL in got[1]
    with pytest.raises(InferenceServerException) as e:
        client.get_model_metadata("digits_probs")
    assert INTERNAL in e.value.message()
    if protocol == "http":
        assert not client.is_model_ready("digits_probs")
    else:
        with pytest.raises(InferenceServerException) as e:
            client.is_model_ready("digits_probs")
        assert INTERNAL in e.value.message()
    # The meta still reaches it.
    r = infer(client, protocol, "digits_top3", [("pixels", pixels)])
    assert r.as_numpy("classes")[0].tolist() == [5, 8, 3]


def test_a_missing_or_meta_callee_fails_the_metas_load(client, protocol, image):
    index = index_of(client, protocol)
    assert index["meta_missing"] == (
        "UNAVAILABLE", "meta model 'meta_missing': meta.calls names model 'no_such_model', "
                       "which is not in the repository")
    assert index["meta_of_meta"] == (
        "UNAVAILABLE", "meta model 'meta_of_meta': meta.calls names model 'digits_top3', which "
                       "is itself a meta model (a meta model may call only models with programs)")
    assert_others_serve(client, protocol, image)


def test_meta_model_may_call_only_its_meta_calls(client, protocol, image):
    pixels = np.round(image * 16).astype(np.uint8)
    got = failure(client, protocol, "meta_bad", [("pixels", pixels)])
    assert got == (status(protocol, 500, "INTERNAL"),
                   "model 'meta_bad': run raised SubCallError: call of model 'iris_mlp': not in "
                   "meta.calls of 'meta_bad'")
    assert_others_serve(client, protocol, image)
