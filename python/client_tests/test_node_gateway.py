"""Triton's own Python clients (tritonclient.grpc and tritonclient.http, unmodified) against a
node's gateway: `reactant-server node` with two CPU workers on examples/model_repo and the
embedded gateway in front, round robin (docs/gateway.md, docs/protocols.md "Through the
gateway"). Inference, model metadata, model configuration, the repository index, streaming
inference and the gateway's answer for a model no worker serves, each over both protocols
where tritonclient has it; Triton's CUDA shared-memory calls forwarded over gRPC, and system
shared memory registered with both workers through the gateway."""

import os
import queue

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.utils.shared_memory as shm
from google.protobuf.json_format import MessageToDict
from tritonclient.utils import InferenceServerException

from clients import connect, inputs
from conftest import MODEL_REPO
from expected import (DIGIT_0_CLASS, assert_both_models_ready, assert_close,
                      assert_digits_cnn_metadata, assert_same)
from node import Node
from tritonclient_fixtures import client, protocol  # noqa: F401 (pytest fixtures)

WORKERS = ("w0", "w1")


@pytest.fixture(scope="module")
def node(server_binary, tmp_path_factory):
    log = tmp_path_factory.mktemp("node") / "node.log"
    with Node(MODEL_REPO, binary=server_binary, log_path=str(log), names=WORKERS,
              settings={"endpoints": {"shared_memory": "system"}}) as n:
        yield n


@pytest.fixture(scope="module")
def worker(node):
    """What tritonclient_fixtures' `client` connects to: here the node's gateway."""
    return node


def error_status(protocol, http_status, grpc_code):
    return str(http_status) if protocol == "http" else f"StatusCode.{grpc_code}"


def test_infer_on_both_workers(client, protocol, node, digit_0, golden):
    """Round robin sends consecutive requests to both workers; every answer is the golden's,
    and the same bits from either worker."""
    g = golden(4)
    before = node.served("digits_cnn")
    answers = [client.infer("digits_cnn", inputs(protocol, [("image", g["image"])]))
               for _ in range(4)]
    after = node.served("digits_cnn")
    assert {w: after[w] - before[w] for w in WORKERS} == {"w0": 2, "w1": 2}
    for a in answers:
        assert_close(a.as_numpy("logits"), g["logits"])
        assert_same(a.as_numpy("probs"), answers[0].as_numpy("probs"))
    one = client.infer("digits_cnn", inputs(protocol, [("image", digit_0)]), request_id="d0")
    assert int(np.argmax(one.as_numpy("probs")[0])) == DIGIT_0_CLASS
    response = one.get_response()
    assert (response["id"] if protocol == "http" else response.id) == "d0"


def test_model_metadata(client, protocol):
    assert_digits_cnn_metadata(protocol, client.get_model_metadata("digits_cnn"))


def test_model_config(client, protocol):
    if protocol == "http":
        config = client.get_model_config("digits_cnn")
    else:
        config = MessageToDict(client.get_model_config("digits_cnn").config,
                               preserving_proto_field_name=True)
    assert (config["name"], config["platform"], config["backend"]) == (
        "digits_cnn", "reactant_stablehlo", "reactant")
    assert int(config["max_batch_size"]) == 8
    assert [(t["name"], t["data_type"], [int(d) for d in t["dims"]])
            for t in config["input"]] == [("image", "TYPE_FP32", [8, 8, 1])]
    assert [t["name"] for t in config["output"]] == ["logits", "probs"]
    assert [int(s) for s in config["dynamic_batching"]["preferred_batch_size"]] == [1, 4, 8]
    (group,) = config["instance_group"]
    assert (group["name"], group["kind"]) == ("digits_cnn_0", "KIND_CPU")


def test_repository_index(client, protocol):
    assert_both_models_ready(protocol, client.get_model_repository_index())


def test_stream_answers_in_order(node, golden):
    """ModelStreamInfer through the gateway: one answer per request, in order, each the
    unary answer; a request for a model no worker serves carries its error and the stream
    goes on."""
    images = golden(8)["image"]
    client = connect("grpc", node)
    try:
        want = client.infer("digits_cnn", inputs("grpc", [("image", images)])).as_numpy("probs")
        answers = queue.Queue()
        client.start_stream(callback=lambda result, error: answers.put((result, error)))
        for i in range(6):
            if i == 3:
                client.async_stream_infer("nope", inputs("grpc", [("image", images[:1])]),
                                          request_id="nope")
            else:
                client.async_stream_infer("digits_cnn",
                                          inputs("grpc", [("image", images[i:i + 1])]),
                                          request_id=str(i))
        got = [answers.get(timeout=60) for _ in range(6)]
        client.stop_stream()
    finally:
        client.close()
    for i, (result, error) in enumerate(got):
        if i == 3:
            assert result is None
            assert isinstance(error, InferenceServerException)
            assert error.message() == "model 'nope' is not served by any ready worker"
            continue
        assert error is None, error
        assert result.get_response().id == str(i)
        assert_same(result.as_numpy("probs"), want[i:i + 1])


def test_a_model_no_worker_serves(client, protocol, digit_0):
    with pytest.raises(InferenceServerException) as e:
        client.infer("nope", inputs(protocol, [("image", digit_0)]))
    assert e.value.status() == error_status(protocol, 404, "NOT_FOUND")
    assert e.value.message() == "model 'nope' is not served by any ready worker"
    with pytest.raises(InferenceServerException) as e:
        client.get_model_metadata("nope")
    assert e.value.status() == error_status(protocol, 404, "NOT_FOUND")
    assert e.value.message() == "model 'nope' is not served by any worker"
    if protocol == "http":  # 404: the HTTP client answers False
        assert client.is_model_ready("nope") is False
    # The gateway goes on serving.
    assert client.is_model_ready("digits_cnn")


def test_statistics_are_summed_over_the_workers(client, protocol, node, digit_0):
    """get_inference_statistics through the gateway: the sum of both workers' statistics,
    so 4 requests spread over them add exactly 4 (docs/gateway.md "Statistics")."""
    def counts():
        # gRPC as JSON leaves out zero fields and writes uint64 as strings.
        as_json = {"as_json": True} if protocol == "grpc" else {}
        (m,) = client.get_inference_statistics("digits_cnn", **as_json)["model_stats"]
        success = m.get("inference_stats", {}).get("success", {})
        return (int(m.get("inference_count", 0)), int(m.get("execution_count", 0)),
                int(success.get("count", 0)))

    before = counts()
    served = node.served("digits_cnn")
    for _ in range(4):
        client.infer("digits_cnn", inputs(protocol, [("image", digit_0)]))
    after_served = node.served("digits_cnn")
    assert {w: after_served[w] - served[w] for w in WORKERS} == {"w0": 2, "w1": 2}
    assert tuple(a - b for a, b in zip(counts(), before)) == (4, 4, 4)


def test_cuda_shared_memory_is_forwarded(node):
    """tritonclient.grpc's CUDA shared-memory calls reach a worker through the gateway and
    come back with its answers."""
    client = connect("grpc", node)
    try:
        assert dict(client.get_cuda_shared_memory_status().regions) == {}
        client.unregister_cuda_shared_memory()
        with pytest.raises(InferenceServerException) as e:
            client.register_cuda_shared_memory("gpu0", b"AAAA", 0, 64)
        assert e.value.status() == "StatusCode.INVALID_ARGUMENT"
        assert e.value.message() == ('cuda shared memory region "gpu0": CUDA shared memory is '
                                     "not offered (system shared memory is)")
    finally:
        client.close()


def test_system_shared_memory_through_the_gateway(node, digit_0):
    """tritonclient.grpc registers regions through the gateway, which registers them with
    both workers: requests naming them are answered by either worker (round robin) with the
    inline answer's bits, written into the output region; unregistering reaches both. The
    gateway's REST routes say to use gRPC or a worker (docs/gateway.md "Shared memory")."""
    tag = str(os.getpid())
    image_bytes, out_bytes = 8 * 8 * 4, 10 * 4
    handles = [shm.create_shared_memory_region(f"gw_in_{tag}", f"/rs_gw_in_{tag}", image_bytes),
               shm.create_shared_memory_region(f"gw_out_{tag}", f"/rs_gw_out_{tag}", out_bytes)]
    client = connect("grpc", node)
    try:
        inline = client.infer("digits_cnn", inputs("grpc", [("image", digit_0)]))
        shm.set_shared_memory_region(handles[0], [digit_0])
        client.register_system_shared_memory(f"gw_in_{tag}", f"/rs_gw_in_{tag}", image_bytes)
        client.register_system_shared_memory(f"gw_out_{tag}", f"/rs_gw_out_{tag}", out_bytes)
        assert sorted(client.get_system_shared_memory_status().regions) == [
            f"gw_in_{tag}", f"gw_out_{tag}"]
        before = node.served("digits_cnn")
        for _ in range(2):
            image = grpcclient.InferInput("image", [1, 8, 8, 1], "FP32")
            image.set_shared_memory(f"gw_in_{tag}", image_bytes)
            probs = grpcclient.InferRequestedOutput("probs")
            probs.set_shared_memory(f"gw_out_{tag}", out_bytes)
            client.infer("digits_cnn", [image], outputs=[probs])
            got = shm.get_contents_as_numpy(handles[1], np.float32, [1, 10])
            assert_same(got, inline.as_numpy("probs"))
        after = node.served("digits_cnn")
        assert {w: after[w] - before[w] for w in WORKERS} == {"w0": 1, "w1": 1}
        client.unregister_system_shared_memory()
        assert dict(client.get_system_shared_memory_status().regions) == {}
        rest = connect("http", node)
        with pytest.raises(InferenceServerException) as e:
            rest.get_system_shared_memory_status()
        rest.close()
        assert e.value.status() == "501"
    finally:
        client.unregister_system_shared_memory()
        client.close()
        for handle in handles:
            shm.destroy_shared_memory_region(handle)
