"""Triton's own Python clients (tritonclient.http and tritonclient.grpc, unmodified) against a
live worker on examples/model_repo: health, metadata, inference, the repository extension and
the statistics extension, each case over both protocols (docs/protocols.md)."""

import queue

import numpy as np
import pytest
from tritonclient.utils import InferenceServerException

from clients import connect, inputs, outputs
from expected import (DIGIT_0_CLASS, EXTENSIONS, assert_both_models_ready, assert_close,
                      assert_digits_cnn_metadata, assert_same)
from tritonclient_fixtures import client, protocol  # noqa: F401 (pytest fixtures)


def error_status(protocol, http_status, grpc_code):
    """The status() an InferenceServerException carries for the given HTTP / gRPC answer."""
    return str(http_status) if protocol == "http" else f"StatusCode.{grpc_code}"


def test_live_and_ready(client, protocol):
    assert client.is_server_live()
    assert client.is_server_ready()
    assert client.is_model_ready("digits_cnn")
    assert client.is_model_ready("iris_mlp")
    if protocol == "http":  # 404: the HTTP client answers False
        assert client.is_model_ready("no_such_model") is False
    else:
        with pytest.raises(InferenceServerException) as e:
            client.is_model_ready("no_such_model")
        assert e.value.status() == "StatusCode.NOT_FOUND"
        assert e.value.message() == "unknown model 'no_such_model'"


def test_server_metadata(client, protocol, server_binary):
    import subprocess

    version = subprocess.run([server_binary, "--version"], capture_output=True, text=True,
                             check=True).stdout.splitlines()[0].split()[1]
    md = client.get_server_metadata()
    if protocol == "http":
        assert md == {"name": "ReactantServer", "version": version, "extensions": EXTENSIONS}
    else:
        assert (md.name, md.version, list(md.extensions)) == ("ReactantServer", version,
                                                              EXTENSIONS)


def test_model_metadata(client, protocol):
    assert_digits_cnn_metadata(protocol, client.get_model_metadata("digits_cnn"))


def test_unknown_model_metadata(client, protocol):
    with pytest.raises(InferenceServerException) as e:
        client.get_model_metadata("no_such_model")
    assert e.value.status() == error_status(protocol, 404, "NOT_FOUND")
    assert e.value.message() == "unknown model 'no_such_model'"


def test_digit_0_is_class_5(client, protocol, digit_0, worker):
    result = client.infer("digits_cnn", inputs(protocol, [("image", digit_0)]),
                          request_id="digit-0")
    probs = result.as_numpy("probs")
    assert probs.shape == (1, 10)
    assert int(np.argmax(probs[0])) == DIGIT_0_CLASS
    assert int(np.argmax(result.as_numpy("logits")[0])) == DIGIT_0_CLASS
    response = result.get_response()
    assert (response["id"] if protocol == "http" else response.id) == "digit-0"


@pytest.mark.parametrize("batch", [1, 4, 8])
def test_infer_matches_the_golden(client, protocol, golden, batch):
    g = golden(batch)
    result = client.infer("digits_cnn", inputs(protocol, [("image", g["image"])]))
    assert_close(result.as_numpy("logits"), g["logits"])
    assert_close(result.as_numpy("probs"), g["probs"])


def test_a_padded_batch_answers_its_rows(client, protocol, golden):
    g = golden(4)  # 3 rows run in the compiled batch of 4
    result = client.infer("digits_cnn", inputs(protocol, [("image", g["image"][:3])]))
    assert_close(result.as_numpy("logits"), g["logits"][:3])


def test_every_path_answers_bit_identically(worker, golden):
    """JSON and binary HTTP, gRPC raw contents, sync and async: one answer, bit for bit."""
    image = golden(4)["image"]
    answers = []
    for protocol, binary in (("http", True), ("http", False), ("grpc", True)):
        c = connect(protocol, worker)
        try:
            result = c.infer("digits_cnn", inputs(protocol, [("image", image)], binary),
                             outputs=outputs(protocol, ["probs", "logits"], binary))
            answers.append((result.as_numpy("logits"), result.as_numpy("probs")))
        finally:
            c.close()
    for logits, probs in answers[1:]:
        assert_same(logits, answers[0][0])
        assert_same(probs, answers[0][1])


def test_outputs_select_and_order(client, protocol, digit_0):
    result = client.infer("digits_cnn", inputs(protocol, [("image", digit_0)]),
                          outputs=outputs(protocol, ["probs"]))
    response = result.get_response()
    names = ([o["name"] for o in response["outputs"]] if protocol == "http"
             else [o.name for o in response.outputs])
    assert names == ["probs"]
    assert result.as_numpy("logits") is None


def test_async_infer_answers_every_request(client, protocol, digit_0, golden):
    """Eight requests in flight at once (tritonclient's async_infer) each get the answer a
    single request gets."""
    images = golden(8)["image"]
    want = client.infer("digits_cnn", inputs(protocol, [("image", images)])).as_numpy("probs")
    results = []
    if protocol == "http":
        pending = [client.async_infer("digits_cnn", inputs(protocol, [("image", images[i:i + 1])]),
                                      request_id=str(i)) for i in range(8)]
        for p in pending:
            r = p.get_result()  # once: it reads the reply's body
            results.append((int(r.get_response()["id"]), r))
    else:
        done = queue.Queue()
        for i in range(8):
            client.async_infer("digits_cnn", inputs(protocol, [("image", images[i:i + 1])]),
                               callback=lambda result, error: done.put((result, error)),
                               request_id=str(i))
        for _ in range(8):
            r, e = done.get(timeout=60)
            assert e is None, e
            results.append((int(r.get_response().id), r))
    assert sorted(i for i, _ in results) == list(range(8))
    for i, r in results:
        assert_same(r.as_numpy("probs"), want[i:i + 1])


def test_bad_requests_name_what_was_wrong(client, protocol):
    wrong_rank = np.zeros((1, 8, 8), np.float32)
    with pytest.raises(InferenceServerException) as e:
        client.infer("digits_cnn", inputs(protocol, [("image", wrong_rank)]), request_id="r1")
    assert e.value.status() == error_status(protocol, 400, "INVALID_ARGUMENT")
    assert e.value.message() == ("model 'digits_cnn', request 'r1': input 'image': shape "
                                 "[1,8,8] does not match the model's [-1,8,8,1]")
    with pytest.raises(InferenceServerException) as e:
        client.infer("no_such_model", inputs(protocol, [("image", wrong_rank)]))
    assert e.value.status() == error_status(protocol, 404, "NOT_FOUND")
    assert e.value.message() == "unknown model 'no_such_model'"
    # The worker still serves.
    assert client.is_model_ready("digits_cnn")


def test_repository_index(client, protocol):
    assert_both_models_ready(protocol, client.get_model_repository_index())


def test_unload_then_load(client, protocol):
    features = np.array([[0.5, -1.0, 1.25, 0.75]], np.float32)
    before = client.infer("iris_mlp", inputs(protocol, [("features", features)]))
    client.unload_model("iris_mlp")
    try:
        assert client.is_model_ready("iris_mlp") is False
        index = client.get_model_repository_index()
        if protocol == "http":
            assert index[1] == {"name": "iris_mlp", "version": "1", "state": "UNAVAILABLE",
                                "reason": "unloaded"}
        else:
            m = index.models[1]
            assert (m.name, m.state, m.reason) == ("iris_mlp", "UNAVAILABLE", "unloaded")
        with pytest.raises(InferenceServerException) as e:
            client.infer("iris_mlp", inputs(protocol, [("features", features)]))
        assert e.value.status() == error_status(protocol, 404, "NOT_FOUND")
        assert e.value.message() == ("model 'iris_mlp' was unloaded: new requests are "
                                     "refused until it is loaded again")
    finally:
        client.load_model("iris_mlp")
    assert client.is_model_ready("iris_mlp")
    after = client.infer("iris_mlp", inputs(protocol, [("features", features)]))
    assert_same(after.as_numpy("logits"), before.as_numpy("logits"))


def _counts(protocol, stats):
    """(inference_count, execution_count, success.count, batch-1 compute_infer count)."""
    if protocol == "http":
        (m,) = stats["model_stats"]
        b1 = [b for b in m["batch_stats"] if b["batch_size"] == 1]
        return (m["inference_count"], m["execution_count"],
                m["inference_stats"]["success"]["count"],
                b1[0]["compute_infer"]["count"] if b1 else 0)
    (m,) = stats.model_stats
    b1 = [b for b in m.batch_stats if b.batch_size == 1]
    return (m.inference_count, m.execution_count, m.inference_stats.success.count,
            b1[0].compute_infer.count if b1 else 0)


def test_statistics_count_each_request(client, protocol, digit_0):
    before = _counts(protocol, client.get_inference_statistics("digits_cnn"))
    for _ in range(3):  # one at a time: three executions of batch 1
        client.infer("digits_cnn", inputs(protocol, [("image", digit_0)]))
    after = _counts(protocol, client.get_inference_statistics("digits_cnn"))
    assert [a - b for a, b in zip(after, before)] == [3, 3, 3, 3]
    stats = client.get_inference_statistics("digits_cnn")
    name = stats["model_stats"][0]["name"] if protocol == "http" else stats.model_stats[0].name
    assert name == "digits_cnn"
    with pytest.raises(InferenceServerException) as e:
        client.get_inference_statistics("no_such_model")
    assert e.value.status() == error_status(protocol, 404, "NOT_FOUND")
