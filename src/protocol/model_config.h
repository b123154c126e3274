//===- protocol/model_config.h - Triton's model configuration ---------------===//
//
// Triton's model configuration extension: the ModelConfig RPC (gRPC) and
// GET /v2/models/{m}[/versions/{v}]/config (HTTP), which tritonclient's get_model_config,
// perf_analyzer and Model Analyzer read before anything else. ModelConfiguration is the
// protocol-neutral description the service gives (server/model_metadata.h derives it from
// the manifest and the worker configuration); the encoders write it as Triton's
// `inference.ModelConfig` message (protocol/proto/model_config.proto) and as the JSON Triton
// returns over HTTP: the message's protobuf JSON mapping with the proto field names and
// every scalar field printed (defaults included), and the 64-bit integers (dims,
// max_queue_delay_microseconds ...) as JSON numbers, not strings, as Triton fixes them
// (triton-inference-server/core, model_config_utils.cc ModelConfigToJson).
//
// Also the rule for `model_version` on every route and RPC that takes one (docs/protocols.md
// "Versions"): a model has exactly one version, kModelVersion, which its metadata lists;
// "" and that version are accepted, any other is NotFound naming the model's version.
//
// Thread safety: pure functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/inference.h"
#include "support/status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace inference {
class ModelConfig;
} // namespace inference

namespace rs::protocol {

/// The one version every model has: its metadata lists it, its statistics and its
/// repository index entry carry it, and a request may name it or leave the version empty.
/// Numeric, as Triton's versions are (perf_analyzer parses the statistics' version as an
/// integer).
inline constexpr char kModelVersion[] = "1";

/// OK when `version` is "" or kModelVersion; otherwise NotFound naming the model and its
/// version: `model 'm' has no version '2' (its one version is '1'; an empty version names
/// it too)`.
Status checkModelVersion(std::string_view model, std::string_view version);

/// Where the instances of a model run (Triton's ModelInstanceGroup.Kind).
enum class InstanceKind : uint8_t { kCpu, kGpu };

/// A model as Triton's model configuration describes it.
struct ModelConfiguration {
  std::string name;
  std::string platform; // Triton's `platform`: names this server's model format
  std::string backend;  // Triton's `backend`: names this server
  /// The largest batch one execution takes when the model batches (its batch axis is
  /// axis 0 of every batched tensor); 0 when it does not.
  int64_t max_batch_size = 0;
  /// Shapes without the batch axis when max_batch_size > 0, else the whole shape; -1 marks
  /// a variable axis.
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  /// Dynamic batching (set when the model batches): the compiled batch sizes, ascending,
  /// and the coalescing wait (scheduler.max_queue_delay_microseconds).
  bool dynamic_batching = false;
  std::vector<int64_t> preferred_batch_sizes;
  int64_t max_queue_delay_us = 0;
  /// The one instance group: one instance on the worker's device.
  InstanceKind instance_kind = InstanceKind::kCpu;
  int64_t device_ordinal = 0; // the GPU of a kGpu group
};

/// Triton's config data_type name of `dtype`: "TYPE_FP32", ..., "TYPE_STRING" for BYTES;
/// "TYPE_INVALID" for a type the wire has no name for.
std::string configDataTypeName(DType dtype);

/// Writes `config` as Triton's ModelConfig message (version_policy latest 1, one instance
/// group named `<model>_0`, not decoupled, no response cache).
void encodeModelConfig(const ModelConfiguration &config, inference::ModelConfig *out);

/// Reads back a message encodeModelConfig wrote (the gateway's REST front-end turns a
/// worker's ModelConfig answer into the JSON of GET /v2/models/{m}/config):
/// encodeModelConfig(decodeModelConfig(m)) is `m` for every such message. A data type
/// the wire has no numeric name for (TYPE_STRING among them) reads as DType::kInvalid; fields
/// encodeModelConfig never sets are ignored.
ModelConfiguration decodeModelConfig(const inference::ModelConfig &message);

/// The JSON body of GET /v2/models/{m}/config (see the file comment).
std::string modelConfigJson(const ModelConfiguration &config);

} // namespace rs::protocol
