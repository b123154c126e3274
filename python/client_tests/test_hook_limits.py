"""The hook processes' memory limit and environment (docs/hooks.md, "Process model" and
"Environment") on a live worker: a postprocess that keeps memory each call is restarted under
hooks.max_memory_mb and every request still succeeds; a helper module found through
hooks.python_path; an import that hooks.allowed_packages does not allow fails that model's load
with its message while the others serve."""

import json
import time
import urllib.request

import numpy as np
import pytest
import tritonclient.http as httpclient

import reactant_export as rx
from test_hooks import FAULTY_MANIFEST, write_bundle

# 160 MiB more per call under a limit of 280 MiB: the first call of a process stays below
# (an interpreter with numpy holds well under 120 MiB), the second crosses it.
LEAKY_MODEL = """import numpy as np
HELD = []

def postprocess(outputs):
    HELD.append(bytearray(b"\\x01") * (160 << 20))  # written, so resident
    return {"logits": outputs["logits"]}

register_model("leaky", postprocess=postprocess)
"""
HELPER_MODEL = """import numpy as np
import rs_shared_helper

def postprocess(outputs):
    return {"logits": rs_shared_helper.scaled(outputs["logits"])}

register_model("with_helper", postprocess=postprocess)
"""
NOT_ALLOWED_MODEL = """import numpy as np
import yaml

register_model("not_allowed")
"""
LIMIT_MB = 280
OVER = "hook process over its memory limit model=leaky"


@pytest.fixture(scope="module")
def worker(server_binary, tmp_path_factory):
    repo = tmp_path_factory.mktemp("limits_repo")
    lib = tmp_path_factory.mktemp("shared_lib")
    (lib / "rs_shared_helper.py").write_text("def scaled(x):\n    return x * 2\n")
    write_bundle(repo, "leaky", FAULTY_MANIFEST, LEAKY_MODEL)
    write_bundle(repo, "with_helper", FAULTY_MANIFEST, HELPER_MODEL)
    write_bundle(repo, "not_allowed", FAULTY_MANIFEST, NOT_ALLOWED_MODEL)
    write_bundle(repo, "plain", FAULTY_MANIFEST,
                 "register_model('plain', postprocess=lambda o: {'logits': o['logits']})\n")
    log = tmp_path_factory.mktemp("limits_worker") / "server.log"
    with rx.Server(str(repo), binary=server_binary, log_path=str(log),
                   settings={"hooks": {"max_memory_mb": LIMIT_MB, "python_path": [str(lib)],
                                       "allowed_packages": ["numpy"]}}) as s:
        s.shared_lib = str(lib)
        yield s


def logits_of(client, model):
    x = httpclient.InferInput("image", [1, 8, 8, 1], "FP32")
    x.set_data_from_numpy(np.full((1, 8, 8, 1), 0.5, np.float32))
    return client.infer(model, [x]).as_numpy("logits")


def wait_for(condition, what, timeout=30.0):
    """Polls `condition` until it holds; fails naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_leaking_hook_is_restarted_and_every_request_succeeds(worker):
    c = httpclient.InferenceServerClient(worker.http_url)
    expected = logits_of(c, "plain")
    # The second call of each process crosses the limit: after calls 1..5 the log holds
    # 0, 1, 1, 2, 2 such lines (each awaited, the log being written by the server).
    for count in (0, 1, 1, 2, 2):
        np.testing.assert_array_equal(logits_of(c, "leaky"), expected)
        wait_for(lambda: worker.log().count(OVER) == count, f"{count} memory-limit lines")
    assert worker.log().count(OVER) == 2
    text = worker.log()
    assert (f"above hooks.max_memory_mb {LIMIT_MB}: restarted") in text
    assert "hook process of model 'leaky' used " in text
    wait_for(lambda: worker.log().count("hook process started model=leaky") == 2,
             "the two restarts' start lines")
    np.testing.assert_array_equal(logits_of(c, "plain"), expected)


def test_python_path_and_allowed_packages(worker):
    c = httpclient.InferenceServerClient(worker.http_url)
    np.testing.assert_array_equal(logits_of(c, "with_helper"), 2 * logits_of(c, "plain"))
    with urllib.request.urlopen(f"http://{worker.http_url}/v2/evidence") as r:
        hooks = json.load(r)["models"]["with_helper"]["hooks"]
    assert hooks["python_path"] == [worker.shared_lib]
    assert hooks["allowed_packages"] == ["numpy"]
    assert not c.is_model_ready("not_allowed")
    assert ("not_allowed/model.py: ImportError: module 'yaml' is not in hooks.allowed_packages "
            "[numpy]") in worker.log()
