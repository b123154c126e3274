"""Triton's model configuration, the version rule and ModelStreamInfer through tritonclient
(HTTP and gRPC), against a live worker on examples/model_repo (docs/protocols.md)."""

import queue

import numpy as np
import pytest
from tritonclient.utils import InferenceServerException

from clients import connect, inputs
from expected import DIGIT_0_CLASS, assert_same
from tritonclient_fixtures import client, protocol  # noqa: F401 (pytest fixtures)

# scheduler.max_queue_delay_microseconds' default (docs/configuration.md).
QUEUE_DELAY_US = 0


def config_of(protocol, client, model, version=""):
    """The model configuration as a dict of Triton's JSON form (gRPC: the message's fields)."""
    if protocol == "http":
        return client.get_model_config(model, version)
    from google.protobuf.json_format import MessageToDict

    return MessageToDict(client.get_model_config(model, version).config,
                         preserving_proto_field_name=True)


def test_digits_cnn_configuration(client, protocol):
    config = config_of(protocol, client, "digits_cnn")
    tensors = lambda c, key: [(t["name"], t["data_type"], [int(d) for d in t["dims"]])
                             for t in c[key]]
    assert (config["name"], config["platform"], config["backend"]) == (
        "digits_cnn", "reactant_stablehlo", "reactant")
    assert int(config["max_batch_size"]) == 8
    assert tensors(config, "input") == [("image", "TYPE_FP32", [8, 8, 1])]
    assert tensors(config, "output") == [("logits", "TYPE_FP32", [10]),
                                         ("probs", "TYPE_FP32", [10])]
    batching = config["dynamic_batching"]
    assert [int(s) for s in batching["preferred_batch_size"]] == [1, 4, 8]
    assert int(batching.get("max_queue_delay_microseconds", 0)) == QUEUE_DELAY_US
    (group,) = config["instance_group"]
    assert (group["name"], group["kind"], int(group["count"])) == (
        "digits_cnn_0", "KIND_CPU", 1)


def test_iris_mlp_configuration(client, protocol):
    config = config_of(protocol, client, "iris_mlp", "1")
    assert int(config["max_batch_size"]) == 32
    assert [int(s) for s in config["dynamic_batching"]["preferred_batch_size"]] == [1, 8, 32]
    assert [(t["name"], [int(d) for d in t["dims"]]) for t in config["input"]] == [
        ("features", [4])]


def test_unknown_model_and_version_have_no_configuration(client, protocol):
    with pytest.raises(InferenceServerException) as e:
        config_of(protocol, client, "no_such_model")
    assert e.value.status() == ("404" if protocol == "http" else "StatusCode.NOT_FOUND")
    assert e.value.message() == "unknown model 'no_such_model'"
    with pytest.raises(InferenceServerException) as e:
        config_of(protocol, client, "digits_cnn", "2")
    assert e.value.status() == ("404" if protocol == "http" else "StatusCode.NOT_FOUND")
    assert e.value.message() == ("model 'digits_cnn' has no version '2' (its one version is "
                                 "'1'; an empty version names it too)")


def test_the_one_version(client, protocol, digit_0):
    md = client.get_model_metadata("digits_cnn", "1")
    versions = md["versions"] if protocol == "http" else list(md.versions)
    assert versions == ["1"]
    plain = client.infer("digits_cnn", inputs(protocol, [("image", digit_0)]))
    named = client.infer("digits_cnn", inputs(protocol, [("image", digit_0)]),
                         model_version="1")
    assert_same(named.as_numpy("probs"), plain.as_numpy("probs"))
    response = named.get_response()
    version = response["model_version"] if protocol == "http" else response.model_version
    assert version == "1"
    with pytest.raises(InferenceServerException) as e:
        client.infer("digits_cnn", inputs(protocol, [("image", digit_0)]), model_version="7",
                     request_id="v7")
    assert e.value.status() == ("404" if protocol == "http" else "StatusCode.NOT_FOUND")
    assert e.value.message() == ("model 'digits_cnn', request 'v7' has no version '7' (its one "
                                 "version is '1'; an empty version names it too)")


def test_stream_answers_in_order_and_survives_an_error(worker, digit_0, golden):
    """ModelStreamInfer: one response per request in order; a bad request gets its error as
    its response and the stream goes on."""
    client = connect("grpc", worker)
    answers = queue.Queue()
    try:
        client.start_stream(callback=lambda result, error: answers.put((result, error)))
        images = golden(4)["image"]
        for i in range(4):
            client.async_stream_infer("digits_cnn", inputs("grpc", [("image", images[i:i + 1])]),
                                      request_id=f"s{i}")
            if i == 1:
                client.async_stream_infer(
                    "digits_cnn", inputs("grpc", [("image", np.zeros((1, 8, 8), np.float32))]),
                    request_id="bad")
        client.async_stream_infer("digits_cnn", inputs("grpc", [("image", digit_0)]),
                                  request_id="digit")
        got = [answers.get(timeout=60) for _ in range(6)]
    finally:
        client.stop_stream()
    want = client.infer("digits_cnn", inputs("grpc", [("image", images)])).as_numpy("probs")
    client.close()
    ids = []
    for result, error in got:
        if error is not None:
            ids.append(("error", error.message()))
        else:
            ids.append(("ok", result.get_response().id))
    assert ids == [("ok", "s0"), ("ok", "s1"),
                   ("error", "model 'digits_cnn', request 'bad': input 'image': shape "
                             "[1,8,8] does not match the model's [-1,8,8,1]"),
                   ("ok", "s2"), ("ok", "s3"), ("ok", "digit")]
    ok = [r for r, e in got if e is None]
    for i in range(4):
        assert_same(ok[i].as_numpy("probs"), want[i:i + 1])
    assert int(np.argmax(ok[4].as_numpy("probs")[0])) == DIGIT_0_CLASS
