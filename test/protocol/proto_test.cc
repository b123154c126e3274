//===- test/protocol/proto_test.cc - grpc_service.proto matches the standard ===//
//
// An unmodified Triton or KServe client only interoperates if every message, field name
// and field number matches the standard inference.GRPCInferenceService (KServe V2
// open_inference_grpc.proto; Triton common/protobuf/grpc_service.proto). This table is
// that standard; the test fails on any accidental edit of the .proto.
//
//===----------------------------------------------------------------------===//
#include "protocol/proto/grpc_service.grpc.pb.h"

#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

namespace {

struct Field {
  const char *message;
  const char *field;
  int number;
};

constexpr Field kStandardFields[] = {
    {"ServerLiveResponse", "live", 1},
    {"ServerReadyResponse", "ready", 1},
    {"ModelReadyRequest", "name", 1},
    {"ModelReadyRequest", "version", 2},
    {"ModelReadyResponse", "ready", 1},
    {"ServerMetadataResponse", "name", 1},
    {"ServerMetadataResponse", "version", 2},
    {"ServerMetadataResponse", "extensions", 3},
    {"ModelMetadataRequest", "name", 1},
    {"ModelMetadataRequest", "version", 2},
    {"ModelMetadataResponse", "name", 1},
    {"ModelMetadataResponse", "versions", 2},
    {"ModelMetadataResponse", "platform", 3},
    {"ModelMetadataResponse", "inputs", 4},
    {"ModelMetadataResponse", "outputs", 5},
    {"ModelMetadataResponse.TensorMetadata", "name", 1},
    {"ModelMetadataResponse.TensorMetadata", "datatype", 2},
    {"ModelMetadataResponse.TensorMetadata", "shape", 3},
    {"InferParameter", "bool_param", 1},
    {"InferParameter", "int64_param", 2},
    {"InferParameter", "string_param", 3},
    {"InferParameter", "double_param", 4},
    {"InferParameter", "uint64_param", 5},
    {"InferTensorContents", "bool_contents", 1},
    {"InferTensorContents", "int_contents", 2},
    {"InferTensorContents", "int64_contents", 3},
    {"InferTensorContents", "uint_contents", 4},
    {"InferTensorContents", "uint64_contents", 5},
    {"InferTensorContents", "fp32_contents", 6},
    {"InferTensorContents", "fp64_contents", 7},
    {"InferTensorContents", "bytes_contents", 8},
    {"ModelInferRequest", "model_name", 1},
    {"ModelInferRequest", "model_version", 2},
    {"ModelInferRequest", "id", 3},
    {"ModelInferRequest", "parameters", 4},
    {"ModelInferRequest", "inputs", 5},
    {"ModelInferRequest", "outputs", 6},
    {"ModelInferRequest", "raw_input_contents", 7},
    {"ModelInferRequest.InferInputTensor", "name", 1},
    {"ModelInferRequest.InferInputTensor", "datatype", 2},
    {"ModelInferRequest.InferInputTensor", "shape", 3},
    {"ModelInferRequest.InferInputTensor", "parameters", 4},
    {"ModelInferRequest.InferInputTensor", "contents", 5},
    {"ModelInferRequest.InferRequestedOutputTensor", "name", 1},
    {"ModelInferRequest.InferRequestedOutputTensor", "parameters", 2},
    {"ModelInferResponse", "model_name", 1},
    {"ModelInferResponse", "model_version", 2},
    {"ModelInferResponse", "id", 3},
    {"ModelInferResponse", "parameters", 4},
    {"ModelInferResponse", "outputs", 5},
    {"ModelInferResponse", "raw_output_contents", 6},
    {"ModelInferResponse.InferOutputTensor", "name", 1},
    {"ModelInferResponse.InferOutputTensor", "datatype", 2},
    {"ModelInferResponse.InferOutputTensor", "shape", 3},
    {"ModelInferResponse.InferOutputTensor", "parameters", 4},
    {"ModelInferResponse.InferOutputTensor", "contents", 5},
    {"ModelRepositoryParameter", "bool_param", 1},
    {"ModelRepositoryParameter", "int64_param", 2},
    {"ModelRepositoryParameter", "string_param", 3},
    {"ModelRepositoryParameter", "bytes_param", 4},
    {"RepositoryIndexRequest", "repository_name", 1},
    {"RepositoryIndexRequest", "ready", 2},
    {"RepositoryIndexResponse", "models", 1},
    {"RepositoryIndexResponse.ModelIndex", "name", 1},
    {"RepositoryIndexResponse.ModelIndex", "version", 2},
    {"RepositoryIndexResponse.ModelIndex", "state", 3},
    {"RepositoryIndexResponse.ModelIndex", "reason", 4},
    {"RepositoryModelLoadRequest", "repository_name", 1},
    {"RepositoryModelLoadRequest", "model_name", 2},
    {"RepositoryModelLoadRequest", "parameters", 3},
    {"RepositoryModelUnloadRequest", "repository_name", 1},
    {"RepositoryModelUnloadRequest", "model_name", 2},
    {"RepositoryModelUnloadRequest", "parameters", 3},
    {"SystemSharedMemoryStatusRequest", "name", 1},
    {"SystemSharedMemoryStatusResponse", "regions", 1},
    {"SystemSharedMemoryStatusResponse.RegionStatus", "name", 1},
    {"SystemSharedMemoryStatusResponse.RegionStatus", "key", 2},
    {"SystemSharedMemoryStatusResponse.RegionStatus", "offset", 3},
    {"SystemSharedMemoryStatusResponse.RegionStatus", "byte_size", 4},
    {"SystemSharedMemoryRegisterRequest", "name", 1},
    {"SystemSharedMemoryRegisterRequest", "key", 2},
    {"SystemSharedMemoryRegisterRequest", "offset", 3},
    {"SystemSharedMemoryRegisterRequest", "byte_size", 4},
    {"SystemSharedMemoryUnregisterRequest", "name", 1},
    {"CudaSharedMemoryStatusRequest", "name", 1},
    {"CudaSharedMemoryStatusResponse", "regions", 1},
    {"CudaSharedMemoryStatusResponse.RegionStatus", "name", 1},
    {"CudaSharedMemoryStatusResponse.RegionStatus", "device_id", 2},
    {"CudaSharedMemoryStatusResponse.RegionStatus", "byte_size", 3},
    {"CudaSharedMemoryRegisterRequest", "name", 1},
    {"CudaSharedMemoryRegisterRequest", "raw_handle", 2},
    {"CudaSharedMemoryRegisterRequest", "device_id", 3},
    {"CudaSharedMemoryRegisterRequest", "byte_size", 4},
    {"CudaSharedMemoryUnregisterRequest", "name", 1},
    // Triton's model configuration extension (common/protobuf/model_config.proto) and
    // streaming (grpc_service.proto).
    {"ModelConfigRequest", "name", 1},
    {"ModelConfigRequest", "version", 2},
    {"ModelConfigResponse", "config", 1},
    {"ModelStreamInferResponse", "error_message", 1},
    {"ModelStreamInferResponse", "infer_response", 2},
    {"ModelConfig", "name", 1},
    {"ModelConfig", "platform", 2},
    {"ModelConfig", "backend", 17},
    {"ModelConfig", "runtime", 25},
    {"ModelConfig", "version_policy", 3},
    {"ModelConfig", "max_batch_size", 4},
    {"ModelConfig", "input", 5},
    {"ModelConfig", "output", 6},
    {"ModelConfig", "dynamic_batching", 11},
    {"ModelConfig", "instance_group", 7},
    {"ModelConfig", "default_model_filename", 8},
    {"ModelConfig", "model_transaction_policy", 19},
    {"ModelConfig", "response_cache", 24},
    {"ModelInput", "name", 1},
    {"ModelInput", "data_type", 2},
    {"ModelInput", "format", 3},
    {"ModelInput", "dims", 4},
    {"ModelInput", "is_shape_tensor", 6},
    {"ModelInput", "allow_ragged_batch", 7},
    {"ModelInput", "optional", 8},
    {"ModelOutput", "name", 1},
    {"ModelOutput", "data_type", 2},
    {"ModelOutput", "dims", 3},
    {"ModelOutput", "label_filename", 4},
    {"ModelOutput", "is_shape_tensor", 6},
    {"ModelInstanceGroup", "name", 1},
    {"ModelInstanceGroup", "kind", 4},
    {"ModelInstanceGroup", "count", 2},
    {"ModelInstanceGroup", "gpus", 3},
    {"ModelInstanceGroup", "passive", 7},
    {"ModelInstanceGroup", "host_policy", 9},
    {"ModelVersionPolicy", "latest", 1},
    {"ModelVersionPolicy", "all", 2},
    {"ModelVersionPolicy", "specific", 3},
    {"ModelVersionPolicy.Latest", "num_versions", 1},
    {"ModelVersionPolicy.Specific", "versions", 1},
    {"ModelDynamicBatching", "preferred_batch_size", 1},
    {"ModelDynamicBatching", "max_queue_delay_microseconds", 2},
    {"ModelDynamicBatching", "preserve_ordering", 3},
    {"ModelDynamicBatching", "priority_levels", 4},
    {"ModelDynamicBatching", "default_priority_level", 5},
    {"ModelTransactionPolicy", "decoupled", 1},
    {"ModelResponseCache", "enable", 1},
};

/// Triton's enum values (model_config.proto DataType and ModelInstanceGroup.Kind).
struct EnumValue {
  const char *enum_name;
  const char *value;
  int number;
};

constexpr EnumValue kStandardEnumValues[] = {
    {"DataType", "TYPE_INVALID", 0},
    {"DataType", "TYPE_BOOL", 1},
    {"DataType", "TYPE_UINT8", 2},
    {"DataType", "TYPE_UINT16", 3},
    {"DataType", "TYPE_UINT32", 4},
    {"DataType", "TYPE_UINT64", 5},
    {"DataType", "TYPE_INT8", 6},
    {"DataType", "TYPE_INT16", 7},
    {"DataType", "TYPE_INT32", 8},
    {"DataType", "TYPE_INT64", 9},
    {"DataType", "TYPE_FP16", 10},
    {"DataType", "TYPE_FP32", 11},
    {"DataType", "TYPE_FP64", 12},
    {"DataType", "TYPE_STRING", 13},
    {"DataType", "TYPE_BF16", 14},
    {"ModelInstanceGroup.Kind", "KIND_AUTO", 0},
    {"ModelInstanceGroup.Kind", "KIND_GPU", 1},
    {"ModelInstanceGroup.Kind", "KIND_CPU", 2},
    {"ModelInstanceGroup.Kind", "KIND_MODEL", 3},
    {"ModelInput.Format", "FORMAT_NONE", 0},
    {"ModelInput.Format", "FORMAT_NHWC", 1},
    {"ModelInput.Format", "FORMAT_NCHW", 2},
};

TEST(GrpcServiceProto, ModelConfigEnumsAreTritons) {
  const auto *pool = google::protobuf::DescriptorPool::generated_pool();
  for (const EnumValue &e : kStandardEnumValues) {
    const std::string full = std::string("inference.") + e.enum_name;
    const google::protobuf::EnumDescriptor *d = pool->FindEnumTypeByName(full);
    ASSERT_NE(d, nullptr) << full;
    const google::protobuf::EnumValueDescriptor *v = d->FindValueByName(e.value);
    ASSERT_NE(v, nullptr) << full << "." << e.value;
    EXPECT_EQ(v->number(), e.number) << full << "." << e.value;
  }
}

TEST(GrpcServiceProto, FieldNumbersAreTheStandardOnes) {
  const auto *pool = google::protobuf::DescriptorPool::generated_pool();
  for (const Field &f : kStandardFields) {
    std::string full = std::string("inference.") + f.message;
    const google::protobuf::Descriptor *m = pool->FindMessageTypeByName(full);
    ASSERT_NE(m, nullptr) << full;
    const google::protobuf::FieldDescriptor *fd = m->FindFieldByName(f.field);
    ASSERT_NE(fd, nullptr) << full << "." << f.field;
    EXPECT_EQ(fd->number(), f.number) << full << "." << f.field;
  }
}

TEST(GrpcServiceProto, ServiceAndMethods) {
  const auto *s = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
      "inference.GRPCInferenceService");
  ASSERT_NE(s, nullptr);
  for (const char *rpc :
       {"ServerLive", "ServerReady", "ModelReady", "ServerMetadata", "ModelMetadata", "ModelInfer",
        "ModelConfig", "RepositoryIndex", "RepositoryModelLoad", "RepositoryModelUnload",
        "SystemSharedMemoryStatus", "SystemSharedMemoryRegister", "SystemSharedMemoryUnregister",
        "CudaSharedMemoryStatus", "CudaSharedMemoryRegister", "CudaSharedMemoryUnregister"}) {
    const google::protobuf::MethodDescriptor *m = s->FindMethodByName(rpc);
    ASSERT_NE(m, nullptr) << rpc;
    EXPECT_FALSE(m->client_streaming()) << rpc;
    EXPECT_FALSE(m->server_streaming()) << rpc;
    EXPECT_EQ(m->input_type()->full_name(), std::string("inference.") + rpc + "Request");
    EXPECT_EQ(m->output_type()->full_name(), std::string("inference.") + rpc + "Response");
  }
}

TEST(GrpcServiceProto, ModelStreamInferIsBidirectional) {
  const auto *s = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
      "inference.GRPCInferenceService");
  ASSERT_NE(s, nullptr);
  const google::protobuf::MethodDescriptor *m = s->FindMethodByName("ModelStreamInfer");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(m->client_streaming());
  EXPECT_TRUE(m->server_streaming());
  EXPECT_EQ(m->input_type()->full_name(), "inference.ModelInferRequest");
  EXPECT_EQ(m->output_type()->full_name(), "inference.ModelStreamInferResponse");
}

} // namespace
