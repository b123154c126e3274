//===- protocol/model_config.cc - Triton's model configuration --------------===//
#include "protocol/model_config.h"

#include "protocol/proto/model_config.pb.h"
#include "support/dtype.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/util/json_util.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace rs::protocol {

Status checkModelVersion(std::string_view model, std::string_view version) {
  if (version.empty() || version == kModelVersion)
    return Status::ok();
  return notFound() << "model '" << model << "' has no version '" << version
                    << "' (its one version is '" << kModelVersion
                    << "'; an empty version names it too)";
}

std::string configDataTypeName(DType dtype) {
  // The config names are the wire names with a TYPE_ prefix, BYTES being TYPE_STRING
  // (Triton model_config.proto DataType).
  const std::string_view wire = dtypeWireName(dtype);
  if (wire.empty() || wire == "INVALID")
    return "TYPE_INVALID";
  return "TYPE_" + std::string(wire == "BYTES" ? "STRING" : wire);
}

namespace {

inference::DataType configDataType(const TensorSpec &spec) {
  inference::DataType out = inference::TYPE_INVALID;
  if (spec.bytes)
    return inference::TYPE_STRING;
  if (!inference::DataType_Parse(configDataTypeName(spec.dtype), &out))
    return inference::TYPE_INVALID;
  return out;
}

/// Rewrites the 64-bit integer fields of `message`'s JSON mapping `j` (strings there) as
/// numbers, recursing into message fields, as Triton's ModelConfigToJson does.
void int64FieldsAsNumbers(const google::protobuf::Descriptor &message, nlohmann::json &j) {
  using FD = google::protobuf::FieldDescriptor;
  if (!j.is_object())
    return;
  for (int i = 0; i < message.field_count(); ++i) {
    const FD &field = *message.field(i);
    auto it = j.find(field.name());
    if (it == j.end())
      continue;
    auto fix = [&field](nlohmann::json &v) {
      if (field.cpp_type() == FD::CPPTYPE_MESSAGE) {
        int64FieldsAsNumbers(*field.message_type(), v);
      } else if (v.is_string() && (field.cpp_type() == FD::CPPTYPE_INT64 ||
                                   field.cpp_type() == FD::CPPTYPE_UINT64)) {
        const std::string s = v.get<std::string>();
        if (field.cpp_type() == FD::CPPTYPE_INT64) {
          int64_t n = 0;
          if (std::from_chars(s.data(), s.data() + s.size(), n).ec == std::errc())
            v = n;
        } else {
          uint64_t n = 0;
          if (std::from_chars(s.data(), s.data() + s.size(), n).ec == std::errc())
            v = n;
        }
      }
    };
    if (field.is_repeated() && it->is_array())
      for (nlohmann::json &v : *it)
        fix(v);
    else
      fix(*it);
  }
}

} // namespace

void encodeModelConfig(const ModelConfiguration &config, inference::ModelConfig *out) {
  out->set_name(config.name);
  out->set_platform(config.platform);
  out->set_backend(config.backend);
  out->mutable_version_policy()->mutable_latest()->set_num_versions(1);
  out->set_max_batch_size(
      static_cast<int32_t>(std::clamp<int64_t>(config.max_batch_size, 0, INT32_MAX)));
  for (const TensorSpec &t : config.inputs) {
    inference::ModelInput *in = out->add_input();
    in->set_name(t.name);
    in->set_data_type(configDataType(t));
    for (int64_t d : t.shape)
      in->add_dims(d);
  }
  for (const TensorSpec &t : config.outputs) {
    inference::ModelOutput *o = out->add_output();
    o->set_name(t.name);
    o->set_data_type(configDataType(t));
    for (int64_t d : t.shape)
      o->add_dims(d);
  }
  if (config.dynamic_batching) {
    inference::ModelDynamicBatching *b = out->mutable_dynamic_batching();
    for (int64_t s : config.preferred_batch_sizes)
      b->add_preferred_batch_size(static_cast<int32_t>(std::clamp<int64_t>(s, 0, INT32_MAX)));
    b->set_max_queue_delay_microseconds(
        static_cast<uint64_t>(std::max<int64_t>(config.max_queue_delay_us, 0)));
  }
  inference::ModelInstanceGroup *group = out->add_instance_group();
  group->set_name(config.name + "_0");
  group->set_count(1);
  if (config.instance_kind == InstanceKind::kGpu) {
    group->set_kind(inference::ModelInstanceGroup::KIND_GPU);
    group->add_gpus(static_cast<int32_t>(config.device_ordinal));
  } else {
    group->set_kind(inference::ModelInstanceGroup::KIND_CPU);
  }
  out->mutable_model_transaction_policy()->set_decoupled(false);
  out->mutable_response_cache()->set_enable(false);
}

ModelConfiguration decodeModelConfig(const inference::ModelConfig &message) {
  ModelConfiguration out;
  out.name = message.name();
  out.platform = message.platform();
  out.backend = message.backend();
  out.max_batch_size = message.max_batch_size();
  auto specs = [](const auto &list, std::vector<TensorSpec> *dst) {
    for (const auto &t : list) {
      // The config name is the wire name with a TYPE_ prefix (configDataTypeName).
      std::string_view name = inference::DataType_Name(t.data_type());
      name.remove_prefix(std::min<size_t>(name.size(), 5));
      TensorSpec spec;
      spec.name = t.name();
      spec.dtype = dtypeFromWireName(name).value_or(DType::kInvalid);
      spec.bytes = name == "STRING";
      spec.shape.assign(t.dims().begin(), t.dims().end());
      dst->push_back(std::move(spec));
    }
  };
  specs(message.input(), &out.inputs);
  specs(message.output(), &out.outputs);
  out.dynamic_batching = message.has_dynamic_batching();
  out.preferred_batch_sizes.assign(message.dynamic_batching().preferred_batch_size().begin(),
                                   message.dynamic_batching().preferred_batch_size().end());
  out.max_queue_delay_us =
      static_cast<int64_t>(message.dynamic_batching().max_queue_delay_microseconds());
  if (message.instance_group_size() > 0 &&
      message.instance_group(0).kind() == inference::ModelInstanceGroup::KIND_GPU) {
    out.instance_kind = InstanceKind::kGpu;
    if (message.instance_group(0).gpus_size() > 0)
      out.device_ordinal = message.instance_group(0).gpus(0);
  }
  return out;
}

std::string modelConfigJson(const ModelConfiguration &config) {
  inference::ModelConfig message;
  encodeModelConfig(config, &message);
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string text;
  // Printing a message of a linked-in type cannot fail.
  (void)google::protobuf::util::MessageToJsonString(message, &text, options);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  int64FieldsAsNumbers(*inference::ModelConfig::descriptor(), j);
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace rs::protocol
