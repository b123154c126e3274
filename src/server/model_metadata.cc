//===- server/model_metadata.cc - A loaded model as the wire describes it ---===//
#include "server/model_metadata.h"

namespace rs::server {
namespace {

std::vector<protocol::TensorSpec> wireSpecs(const std::vector<bundle::TensorSpec> &specs) {
  std::vector<protocol::TensorSpec> out;
  for (const auto &s : specs)
    out.push_back({s.name, s.dtype, s.wireShape(), s.batch_axis});
  return out;
}

} // namespace

protocol::ModelMetadata modelMetadataOf(const runtime::LoadedModel &model) {
  protocol::ModelMetadata out;
  out.name = model.name;
  out.platform = model.platform;
  out.inputs = wireSpecs(model.manifest.executable_inputs);
  out.outputs = wireSpecs(model.manifest.executable_outputs);
  return out;
}

} // namespace rs::server
