"""The standard gRPC services beside KServe's: grpc.health.v1.Health (Check and Watch, as a
Kubernetes `grpc:` probe calls it) and server reflection, v1alpha and v1 (what grpcurl uses
without a .proto), through gRPC's own Python clients (grpcio-health-checking,
grpcio-reflection; its messages, which v1 shares, for v1)."""

import queue
import threading

import grpc
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase)

import tritonclient.http as httpclient

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


@pytest.fixture
def channel(worker):
    with grpc.insecure_channel(worker.grpc_url) as ch:
        yield ch


def test_health_check(channel):
    stub = health_pb2_grpc.HealthStub(channel)
    for service in ("", "digits_cnn", "iris_mlp"):
        assert stub.Check(health_pb2.HealthCheckRequest(service=service),
                          timeout=10).status == SERVING
    with pytest.raises(grpc.RpcError) as e:
        stub.Check(health_pb2.HealthCheckRequest(service="no_such_model"), timeout=10)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


def test_health_watch_follows_unload_and_load(channel, worker):
    stub = health_pb2_grpc.HealthStub(channel)
    call = stub.Watch(health_pb2.HealthCheckRequest(service="iris_mlp"), timeout=60)
    seen = queue.Queue()

    def read():
        try:
            for response in call:
                seen.put(response.status)
        except grpc.RpcError:
            pass  # cancelled below

    reader = threading.Thread(target=read)
    reader.start()
    http = httpclient.InferenceServerClient(worker.http_url)
    try:
        assert seen.get(timeout=30) == SERVING
        http.unload_model("iris_mlp")
        assert seen.get(timeout=30) == NOT_SERVING
        http.load_model("iris_mlp")
        assert seen.get(timeout=30) == SERVING
    finally:
        call.cancel()
        reader.join(timeout=30)
        http.load_model("iris_mlp")
        http.close()


def test_reflection_lists_and_describes_the_services(channel):
    database = ProtoReflectionDescriptorDatabase(channel)
    services = set(database.get_services())
    assert {"inference.GRPCInferenceService", "grpc.health.v1.Health"} <= services
    pool = descriptor_pool.DescriptorPool(database)
    service = pool.FindServiceByName("inference.GRPCInferenceService")
    methods = {m.name for m in service.methods}
    assert {"ServerLive", "ServerReady", "ModelReady", "ServerMetadata", "ModelMetadata",
            "ModelInfer", "ModelStreamInfer", "ModelConfig", "ModelStatistics",
            "RepositoryIndex", "RepositoryModelLoad", "RepositoryModelUnload",
            "SystemSharedMemoryStatus", "SystemSharedMemoryRegister",
            "SystemSharedMemoryUnregister"} <= methods
    infer = service.FindMethodByName("ModelInfer")
    assert infer.input_type.full_name == "inference.ModelInferRequest"
    fields = {f.name: f.number for f in infer.input_type.fields}
    assert fields["model_name"] == 1 and fields["raw_input_contents"] == 7


def reflect(channel, version, requests):
    """ServerReflectionInfo of grpc.reflection.<version> with `requests` on one stream: the
    responses, in order. v1 and v1alpha have the same messages, so grpcio-reflection's
    v1alpha ones serve both."""
    call = channel.stream_stream(
        f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo",
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString)
    return list(call(iter(requests), timeout=30))


def test_reflection_v1_answers_as_v1alpha(channel):
    """grpcurl and newer gRPC tools ask grpc.reflection.v1 first: it answers each query with
    the bytes v1alpha answers as a stream's first query, a file followed by its imports, an
    unknown symbol NOT_FOUND. On one stream each v1 answer holds only its own files (grpc++
    1.51's v1alpha adds each answer's files to the earlier ones')."""
    R = reflection_pb2.ServerReflectionRequest
    requests = [R(list_services=""),
                R(file_containing_symbol="inference.GRPCInferenceService"),
                R(file_by_filename="model_config.proto"),
                R(file_containing_symbol="inference.ModelInferRequest"),
                R(all_extension_numbers_of_type="inference.ModelInferRequest"),
                R(file_containing_symbol="nope.Nothing")]
    alone = []
    for r in requests:
        (v1,) = reflect(channel, "v1", [r])
        (v1alpha,) = reflect(channel, "v1alpha", [r])
        assert v1.SerializeToString() == v1alpha.SerializeToString(), r
        alone.append(v1.SerializeToString())
    on_one_stream = reflect(channel, "v1", requests)
    assert [r.SerializeToString() for r in on_one_stream] == alone
    names = {s.name for s in on_one_stream[0].list_services_response.service}
    assert {"grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection"} <= names

    def files(response):
        return [descriptor_pb2.FileDescriptorProto.FromString(b).name
                for b in response.file_descriptor_response.file_descriptor_proto]

    assert files(on_one_stream[1]) == ["grpc_service.proto", "model_config.proto"]
    assert files(on_one_stream[2]) == ["model_config.proto"]
    assert files(on_one_stream[3]) == ["grpc_service.proto", "model_config.proto"]
    assert on_one_stream[4].all_extension_numbers_response.base_type_name == (
        "inference.ModelInferRequest")
    assert (on_one_stream[5].error_response.error_code,
            on_one_stream[5].error_response.error_message) == (
        grpc.StatusCode.NOT_FOUND.value[0], "Symbol not found.")
