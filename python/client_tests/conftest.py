"""Fixtures of the client tests: a real `reactant-server serve` on examples/model_repo, the
request and golden files they send and compare with.

Each test file is its own ctest entry (python/CMakeLists.txt), so each starts its own worker
and runs in its own Python process (the KServe SDK and tritonclient.grpc register the same
protobuf names, which one process cannot hold)."""

import json
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))  # reactant_export from this checkout
sys.path.insert(0, HERE)  # clients.py, expected.py

import reactant_export as rx  # noqa: E402

MODEL_REPO = os.path.join(ROOT, "examples", "model_repo")
SHARED = os.environ.get("RS_SHARED_DIR", os.path.join(os.path.dirname(ROOT), "shared"))


def _required(variable):
    path = os.environ.get(variable)
    if not path or not os.access(path, os.X_OK):
        raise RuntimeError(f"{variable} must name an executable (ctest sets it; "
                           "docs/testing.md 'The client tests')")
    return path


@pytest.fixture(scope="session")
def server_binary():
    return _required("REACTANT_SERVER")


@pytest.fixture(scope="session")
def perf_analyzer_binary():
    return _required("PERF_ANALYZER")


def start_worker(binary, tmp_path_factory, **settings):
    """A worker on examples/model_repo with the node-file worker keys `settings`."""
    log = tmp_path_factory.mktemp("worker") / "server.log"
    return rx.Server(MODEL_REPO, binary=binary, log_path=str(log), settings=settings)


@pytest.fixture(scope="module")
def worker(server_binary, tmp_path_factory):
    """The worker most tests use: load/unload allowed, system shared memory offered."""
    with start_worker(server_binary, tmp_path_factory, model_control_mode="explicit",
                      endpoints={"shared_memory": "system"}) as s:
        yield s


@pytest.fixture(scope="session")
def digit_0():
    """examples/requests/digit_0.json's image as an FP32 [1, 8, 8, 1] array."""
    with open(os.path.join(ROOT, "examples", "requests", "digit_0.json")) as f:
        tensor = json.load(f)["inputs"][0]
    return np.array(tensor["data"], np.float32).reshape(tensor["shape"])


@pytest.fixture(scope="session")
def golden():
    """digits_cnn's XLA:CPU goldens: golden(batch) -> {"image", "logits", "probs"}."""
    from reactant_export import _safetensors

    def load(batch):
        tensors, _ = _safetensors.read(
            os.path.join(SHARED, "fixtures", "golden", "digits_cnn", f"b{batch}.safetensors"))
        return tensors

    return load
