//===- server/model_metadata.h - A loaded model as the wire describes it ----===//
//
// KServe ModelMetadata of a loaded model: its name, its one version
// (protocol::kModelVersion), the backend's platform, and its wire-facing inputs and outputs
// (the manifest's client_inputs/client_outputs when a model.py bundle declares them, else
// the executable's; bundle::Manifest::wireInputs) in manifest order with row-major shapes,
// -1 on the batch axis and on variable axes (bundle::TensorSpec::wireShape), each with its
// batch axis; a `bytes` spec is datatype BYTES (TYPE_STRING in the configuration).
//
// Triton's model configuration of a loaded model (protocol/model_config.h): platform
// `reactant_stablehlo`, backend `reactant`; the model batches when it has compiled batch
// sizes and every wire-facing input and output has its batch axis first (Triton's batch axis
// is always axis 0); then max_batch_size is its largest compiled size, capped by
// scheduler.models.<m>.max_batch_size, dims leave the batch axis out, and dynamic batching
// lists the compiled sizes up to that as preferred sizes with
// scheduler.max_queue_delay_microseconds as the queue delay. Otherwise max_batch_size is 0,
// dims are the metadata's shapes and there is no dynamic batching. One instance group: one
// instance on the worker's device (KIND_GPU with its ordinal on a GPU backend, else
// KIND_CPU).
//
// Thread safety: a pure function.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/inference.h"
#include "protocol/model_config.h"
#include "runtime/model_repository.h"

#include <cstdint>
#include <optional>

namespace rs::server {

/// The metadata of `model` (see the file comment).
protocol::ModelMetadata modelMetadataOf(const runtime::LoadedModel &model);

/// What a model's configuration takes from the worker's configuration.
struct ModelConfigSettings {
  /// scheduler.models.<m>.max_batch_size; unset = the largest compiled size.
  std::optional<int64_t> max_batch_size;
  /// scheduler.max_queue_delay_microseconds.
  int64_t max_queue_delay_us = 0;
  /// runtime.device_ordinal (the instance group's GPU on a GPU backend).
  int64_t device_ordinal = 0;
};

/// Triton's model configuration of `model` (see the file comment).
protocol::ModelConfiguration modelConfigOf(const runtime::LoadedModel &model,
                                           const ModelConfigSettings &settings);

} // namespace rs::server
