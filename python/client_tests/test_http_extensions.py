"""HTTP beyond JSON, with tritonclient and plain HTTP requests against a live worker: BYTES
tensors refused by a numeric model, Triton's raw binary request, 415 for an unknown
Content-Encoding, and CORS for a browser client on another origin (docs/protocols.md)."""

import gzip
import json
import struct

import numpy as np
import pytest
import requests
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from clients import PROTOCOLS, connect, inputs
from conftest import start_worker
from expected import DIGIT_0_CLASS, assert_same

ORIGIN = "http://app.example"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_bytes_input_to_a_numeric_model_is_refused(worker, protocol):
    client = connect(protocol, worker)
    try:
        from clients import MODULES

        x = MODULES[protocol].InferInput("image", [1, 8, 8, 1], "BYTES")
        x.set_data_from_numpy(np.array([b"a"] * 64, dtype=np.object_).reshape(1, 8, 8, 1))
        with pytest.raises(InferenceServerException) as e:
            client.infer("digits_cnn", [x], request_id="b1")
        assert e.value.status() == ("400" if protocol == "http"
                                    else "StatusCode.INVALID_ARGUMENT")
        assert e.value.message() == ("model 'digits_cnn', request 'b1': input 'image': "
                                     "datatype BYTES does not match the model's FP32")
        assert client.is_model_ready("digits_cnn")
    finally:
        client.close()


def split_binary_reply(response):
    """(the JSON part, the bytes after it) of a binary-extension reply."""
    n = int(response.headers["Inference-Header-Content-Length"])
    return json.loads(response.content[:n]), response.content[n:]


def test_raw_binary_request(worker, digit_0):
    """`Inference-Header-Content-Length: 0`: the whole body is the single input's bytes;
    every output comes back binary."""
    url = f"http://{worker.http_url}/v2/models/digits_cnn/infer"
    r = requests.post(url, data=digit_0.tobytes(), timeout=30,
                      headers={"Inference-Header-Content-Length": "0",
                               "Content-Type": "application/octet-stream"})
    assert r.status_code == 200, r.text
    header, raw = split_binary_reply(r)
    assert [(o["name"], o["datatype"], o["shape"], o["parameters"]["binary_data_size"])
            for o in header["outputs"]] == [("logits", "FP32", [1, 10], 40),
                                            ("probs", "FP32", [1, 10], 40)]
    logits = np.frombuffer(raw[:40], np.float32).reshape(1, 10)
    probs = np.frombuffer(raw[40:80], np.float32).reshape(1, 10)
    assert len(raw) == 80
    client = httpclient.InferenceServerClient(worker.http_url)
    try:
        want = client.infer("digits_cnn", inputs("http", [("image", digit_0)]))
    finally:
        client.close()
    assert_same(logits, want.as_numpy("logits"))
    assert_same(probs, want.as_numpy("probs"))
    assert int(np.argmax(probs[0])) == DIGIT_0_CLASS
    # A body that is not one image is refused with the sizes.
    r = requests.post(url, data=b"\0" * 12, timeout=30,
                      headers={"Inference-Header-Content-Length": "0"})
    assert r.status_code == 400
    assert "digits_cnn" in r.json()["error"]


def test_content_encodings(worker, digit_0):
    url = f"http://{worker.http_url}/v2/models/digits_cnn/infer"
    body = json.dumps({"inputs": [{"name": "image", "shape": [1, 8, 8, 1], "datatype": "FP32",
                                   "data": digit_0.ravel().tolist()}]}).encode()
    r = requests.post(url, data=gzip.compress(body), timeout=30,
                      headers={"Content-Encoding": "gzip", "Content-Type": "application/json"})
    assert r.status_code == 200, r.text
    probs = np.array(r.json()["outputs"][1]["data"], np.float32)
    assert int(np.argmax(probs)) == DIGIT_0_CLASS
    r = requests.post(url, data=body, timeout=30,
                      headers={"Content-Encoding": "br", "Content-Type": "application/json"})
    assert r.status_code == 415
    assert "br" in r.json()["error"]


@pytest.fixture(scope="module")
def cors_worker(server_binary, tmp_path_factory):
    with start_worker(server_binary, tmp_path_factory,
                      endpoints={"cors_allowed_origins": [ORIGIN]}) as s:
        yield s


def test_cors_preflight_and_answers(cors_worker):
    base = f"http://{cors_worker.http_url}"
    pre = requests.options(f"{base}/v2/models/digits_cnn/infer", timeout=30,
                           headers={"Origin": ORIGIN, "Access-Control-Request-Method": "POST",
                                    "Access-Control-Request-Headers": "content-type"})
    assert pre.status_code in (200, 204), pre.text
    assert pre.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert "POST" in pre.headers["Access-Control-Allow-Methods"]
    assert "content-type" in pre.headers["Access-Control-Allow-Headers"].lower()
    r = requests.get(f"{base}/v2", headers={"Origin": ORIGIN}, timeout=30)
    assert r.status_code == 200
    assert r.headers["Access-Control-Allow-Origin"] == ORIGIN
    other = requests.get(f"{base}/v2", headers={"Origin": "http://elsewhere.example"},
                         timeout=30)
    assert other.status_code == 200
    assert "Access-Control-Allow-Origin" not in other.headers


def test_no_cors_unless_configured(worker):
    r = requests.get(f"http://{worker.http_url}/v2", headers={"Origin": ORIGIN}, timeout=30)
    assert r.status_code == 200
    assert "Access-Control-Allow-Origin" not in r.headers
