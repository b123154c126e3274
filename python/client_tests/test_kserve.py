"""The KServe Python SDK's own clients (kserve.InferenceRESTClient with the v2 protocol and
kserve.InferenceGRPCClient, both asyncio) against a live worker: readiness, inference in JSON
and binary form, errors, and the V2 metadata RPCs through the SDK's generated gRPC stub (its
clients have no metadata call). Its own process: kserve's protobuf module registers the
`inference` package that tritonclient.grpc registers too."""

import asyncio

import grpc
import httpx
import numpy as np
import pytest
from kserve import InferenceGRPCClient, InferenceRESTClient, InferInput, InferRequest, RESTConfig
from kserve.protocol.grpc import grpc_predict_v2_pb2 as pb
from kserve.protocol.grpc.grpc_predict_v2_pb2_grpc import GRPCInferenceServiceStub

from expected import DIGIT_0_CLASS, EXTENSIONS, assert_close, assert_same


def run(coroutine):
    return asyncio.run(coroutine)


def request(image, request_id, binary):
    x = InferInput("image", list(image.shape), "FP32")
    x.set_data_from_numpy(image, binary_data=binary)
    return InferRequest(model_name="digits_cnn", infer_inputs=[x], request_id=request_id)


def outputs_of(response):
    return {o.name: o.as_numpy() for o in response.outputs}


async def rest(worker, call):
    client = InferenceRESTClient(RESTConfig(protocol="v2", retries=0, timeout=60))
    try:
        return await call(client, f"http://{worker.http_url}")
    finally:
        await client.close()


async def grpc_call(worker, call):
    client = InferenceGRPCClient(worker.grpc_url, retries=0, timeout=60)
    try:
        return await call(client)
    finally:
        await client.close()


def test_rest_readiness(worker):
    async def call(c, url):
        return (await c.is_server_live(url), await c.is_server_ready(url),
                await c.is_model_ready(url, "digits_cnn"),
                await c.is_model_ready(url, "no_such_model"))
    assert run(rest(worker, call)) == (True, True, True, False)


def test_grpc_readiness(worker):
    async def call(c):
        ready = (await c.is_server_live(), await c.is_server_ready(),
                 await c.is_model_ready("digits_cnn"))
        with pytest.raises(grpc.RpcError) as e:
            await c.is_model_ready("no_such_model")
        return ready, e.value.code(), e.value.details()
    assert run(grpc_call(worker, call)) == ((True, True, True), grpc.StatusCode.NOT_FOUND,
                                            "unknown model 'no_such_model'")


@pytest.mark.parametrize("binary", [False, True])
def test_rest_infer(worker, golden, digit_0, binary):
    g = golden(4)

    async def call(c, url):
        return (await c.infer(url, request(g["image"], "k-4", binary), model_name="digits_cnn"),
                await c.infer(url, request(digit_0, "k-0", binary), model_name="digits_cnn"))
    batch, single = run(rest(worker, call))
    assert (batch.id, batch.model_name, single.id) == ("k-4", "digits_cnn", "k-0")
    out = outputs_of(batch)
    assert_close(out["logits"], g["logits"])
    assert_close(out["probs"], g["probs"])
    assert int(np.argmax(outputs_of(single)["probs"][0])) == DIGIT_0_CLASS


def test_grpc_infer_equals_rest(worker, golden):
    image = golden(8)["image"]

    async def via_grpc(c):
        return await c.infer(request(image, "g-8", True))

    async def via_rest(c, url):
        return await c.infer(url, request(image, "r-8", True), model_name="digits_cnn")
    g_out = run(grpc_call(worker, via_grpc))
    r_out = run(rest(worker, via_rest))
    assert g_out.id == "g-8"
    assert_close(outputs_of(g_out)["logits"], golden(8)["logits"])
    for name in ("logits", "probs"):
        assert_same(outputs_of(g_out)[name], outputs_of(r_out)[name])


def test_errors_reach_the_sdk(worker):
    wrong = np.zeros((1, 8, 8), np.float32)

    async def via_rest(c, url):
        with pytest.raises(httpx.HTTPStatusError) as e:
            await c.infer(url, request(wrong, "bad", False), model_name="digits_cnn")
        return e.value.response.status_code, e.value.response.json()

    async def via_grpc(c):
        with pytest.raises(grpc.RpcError) as e:
            await c.infer(request(wrong, "bad", True))
        return e.value.code(), e.value.details()
    message = ("model 'digits_cnn', request 'bad': input 'image': shape [1,8,8] does not "
               "match the model's [-1,8,8,1]")
    assert run(rest(worker, via_rest)) == (400, {"error": message})
    assert run(grpc_call(worker, via_grpc)) == (grpc.StatusCode.INVALID_ARGUMENT, message)


def test_metadata_through_the_sdk_stub(worker):
    async def call():
        async with grpc.aio.insecure_channel(worker.grpc_url) as channel:
            stub = GRPCInferenceServiceStub(channel)
            return (await stub.ServerMetadata(pb.ServerMetadataRequest()),
                    await stub.ModelMetadata(pb.ModelMetadataRequest(name="digits_cnn")))
    server, model = run(call())
    assert server.name == "ReactantServer"
    assert list(server.extensions) == EXTENSIONS
    assert (model.name, model.platform, list(model.versions)) == ("digits_cnn", "cpu", ["1"])
    assert [(t.name, t.datatype, list(t.shape)) for t in model.inputs] == [
        ("image", "FP32", [-1, 8, 8, 1])]
    assert [(t.name, t.datatype, list(t.shape)) for t in model.outputs] == [
        ("logits", "FP32", [-1, 10]), ("probs", "FP32", [-1, 10])]
