"""The standard gRPC services beside KServe's: grpc.health.v1.Health (Check and Watch, as a
Kubernetes `grpc:` probe calls it) and server reflection (what grpcurl uses without a
.proto), through gRPC's own Python clients (grpcio-health-checking, grpcio-reflection)."""

import queue
import threading

import grpc
import pytest
from google.protobuf import descriptor_pool
from grpc_health.v1 import health_pb2, health_pb2_grpc
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
