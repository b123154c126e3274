//===- protocol/service.cc - The contracts the front-ends call --------------===//
#include "protocol/service.h"

namespace rs::protocol {

std::function<std::string(const std::string &input)>
expectedDatatypes(const InferenceService &service, std::string model) {
  return [&service, model = std::move(model)](const std::string &input) -> std::string {
    Result<ModelMetadata> metadata = service.modelMetadata(model);
    if (!metadata.isOk())
      return "";
    for (const TensorSpec &spec : metadata->inputs)
      if (spec.name == input)
        return std::string(spec.datatype());
    return "";
  };
}

Result<ModelConfiguration> InferenceService::modelConfig(const std::string &model_name) const {
  return unimplemented() << "ModelConfig of '" << model_name
                         << "' is not implemented by this service";
}

std::vector<ModelIndexEntry> ModelControl::listModels() const { return {}; }

Status ModelControl::repositoryLoad(const std::string &name) {
  return unimplemented() << "RepositoryModelLoad of '" << name
                         << "' is not implemented by this service";
}

Status ModelControl::repositoryUnload(const std::string &name) {
  return unimplemented() << "RepositoryModelUnload of '" << name
                         << "' is not implemented by this service";
}

Result<std::vector<ModelStatistics>> ModelControl::modelStatistics(const std::string &name) const {
  return unimplemented() << "ModelStatistics of '" << name
                         << "' is not implemented by this service";
}

Result<ControlStatus> ModelControl::controlStatus() const {
  return unimplemented() << "ModelControlStatus is not implemented by this service";
}

Status ModelControl::setModelPolicy(const std::string &name, std::optional<double>) {
  return unimplemented() << "SetModelPolicy of '" << name << "' is not implemented by this service";
}

Result<Residency> ModelControl::setModelResidency(const std::string &name, Residency) {
  return unimplemented() << "SetModelResidency of '" << name
                         << "' is not implemented by this service";
}

ModelControl &noModelControl() {
  static ModelControl none;
  return none;
}

} // namespace rs::protocol
