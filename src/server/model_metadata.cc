//===- server/model_metadata.cc - A loaded model as the wire describes it ---===//
#include "server/model_metadata.h"

#include <algorithm>

namespace rs::server {
namespace {

std::vector<protocol::TensorSpec> wireSpecs(const std::vector<bundle::TensorSpec> &specs) {
  std::vector<protocol::TensorSpec> out;
  for (const auto &s : specs)
    out.push_back({s.name, s.dtype, s.wireShape(), s.batch_axis, s.bytes});
  return out;
}

} // namespace

protocol::ModelMetadata modelMetadataOf(const runtime::LoadedModel &model) {
  protocol::ModelMetadata out;
  out.name = model.name;
  out.versions = {protocol::kModelVersion};
  out.platform = model.platform;
  out.inputs = wireSpecs(model.manifest.wireInputs());
  out.outputs = wireSpecs(model.manifest.wireOutputs());
  return out;
}

protocol::ModelConfiguration modelConfigOf(const runtime::LoadedModel &model,
                                           const ModelConfigSettings &settings) {
  protocol::ModelConfiguration out;
  out.name = model.name;
  out.platform = "reactant_stablehlo";
  out.backend = "reactant";
  const bundle::Manifest &m = model.manifest;
  auto batchFirst = [](const std::vector<bundle::TensorSpec> &specs) {
    return std::all_of(specs.begin(), specs.end(),
                       [](const bundle::TensorSpec &s) { return s.batch_axis == 0; });
  };
  const bool batches =
      !model.batch_sizes.empty() && batchFirst(m.wireInputs()) && batchFirst(m.wireOutputs());
  out.inputs = wireSpecs(m.wireInputs());
  out.outputs = wireSpecs(m.wireOutputs());
  if (batches) {
    out.max_batch_size = model.batch_sizes.back();
    if (settings.max_batch_size && *settings.max_batch_size > 0)
      out.max_batch_size = std::min(out.max_batch_size, *settings.max_batch_size);
    for (std::vector<protocol::TensorSpec> *specs : {&out.inputs, &out.outputs})
      for (protocol::TensorSpec &s : *specs)
        s.shape.erase(s.shape.begin());
    out.dynamic_batching = true;
    for (int64_t b : model.batch_sizes)
      if (b <= out.max_batch_size)
        out.preferred_batch_sizes.push_back(b);
    out.max_queue_delay_us = settings.max_queue_delay_us;
  }
  out.instance_kind =
      model.platform == "cpu" ? protocol::InstanceKind::kCpu : protocol::InstanceKind::kGpu;
  out.device_ordinal = settings.device_ordinal;
  return out;
}

} // namespace rs::server
