//===- protocol/http_codec.cc - KServe V2 REST bodies <-> request types ------===//
//
// The server side of protocol/http_codec.h: inference requests decoded (request
// parameters, inputs, requested outputs), responses and metadata encoded. The body parts
// both sides share are http_body.cc's (protocol/http_codec_impl.h).
//
//===----------------------------------------------------------------------===//
#include "protocol/http_codec.h"

#include "protocol/deadline.h"
#include "protocol/http_codec_impl.h"
#include "protocol/json_packed.h"
#include "protocol/wire_tensor.h"

#include <nlohmann/json.hpp>

#include <limits>
#include <set>

namespace rs::protocol {
namespace {

using namespace http_codec_detail;
using nlohmann::json;

/// Parameter `key` of `params` as a bool; `what` names the owner ("" for the request).
Result<bool> boolParameter(const json &params, const std::string &what, const char *key,
                           bool fallback) {
  auto it = params.find(key);
  if (it == params.end())
    return fallback;
  if (!it->is_boolean())
    return invalidArgument() << what << (what.empty() ? "" : ": ") << "parameter '" << key
                             << "' must be a boolean";
  return it->get<bool>();
}

Status decodeOutputs(const json &outputs, const DecodeOptions &options, HttpInferRequest &out) {
  if (!outputs.is_array())
    return invalidArgument() << "'outputs' must be an array";
  std::set<std::string> seen;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const json &o = outputs[i];
    if (!o.is_object())
      return invalidArgument() << "requested output #" << i << " is not an object";
    auto name = o.find("name");
    if (name == o.end() || !name->is_string() || name->get<std::string>().empty())
      return invalidArgument() << "requested output #" << i << " has no name";
    std::string n = name->get<std::string>();
    std::string what = outputWhat(n);
    if (!seen.insert(n).second)
      return invalidArgument() << what << " is requested more than once";
    out.request.requested_outputs.push_back(n);
    auto params = o.find("parameters");
    if (params == o.end())
      continue;
    if (!params->is_object())
      return invalidArgument() << what << ": 'parameters' must be an object";
    if (params->contains("classification"))
      return unimplemented() << what << ": the classification extension is not supported";
    RS_ASSIGN_OR_RETURN(std::optional<SharedMemoryRef> shm,
                        sharedMemoryParameters(what, *params, options.shared_memory));
    if (shm) {
      RS_ASSIGN_OR_RETURN(
          SharedMemoryOutput bound,
          bindSharedMemoryOutput(*options.shared_memory, options.shared_memory_owner, n, *shm));
      out.shared_memory_outputs.push_back(std::move(bound));
    }
    if (params->contains("binary_data")) {
      RS_ASSIGN_OR_RETURN(bool b, boolParameter(*params, what, "binary_data", false));
      out.output_encoding.per_output.emplace_back(n, b);
    }
  }
  return Status::ok();
}

Status decodeRequestJson(const json &root, std::string_view binary, bool has_header,
                         const DecodeOptions &options, HttpInferRequest &out) {
  const Clock::time_point now = options.now;
  auto params = root.find("parameters");
  if (params != root.end()) {
    if (!params->is_object())
      return invalidArgument() << "'parameters' must be an object";
    RS_ASSIGN_OR_RETURN(out.output_encoding.binary_by_default,
                        boolParameter(*params, "", "binary_data_output", false));
    auto timeout = params->find(kTimeoutParameter);
    if (timeout != params->end()) {
      if (timeout->is_number_unsigned())
        out.request.deadline = deadlineAfter(
            static_cast<int64_t>(std::min<uint64_t>(timeout->get<uint64_t>(), INT64_MAX)), now);
      else if (timeout->is_number_integer())
        out.request.deadline = deadlineAfter(timeout->get<int64_t>(), now);
      else
        return invalidArgument() << "parameter '" << kTimeoutParameter << "' must be an integer";
    }
  }
  auto inputs = root.find("inputs");
  if (inputs == root.end() || !inputs->is_array())
    return invalidArgument() << "request has no 'inputs' array";
  RS_RETURN_IF_ERROR(
      decodeTensorList(*inputs, true, binary, has_header, &options, out.request.inputs));
  auto outputs = root.find("outputs");
  if (outputs != root.end())
    RS_RETURN_IF_ERROR(decodeOutputs(*outputs, options, out));
  return Status::ok();
}

json specsJson(const std::vector<TensorSpec> &specs) {
  json arr = json::array();
  for (const auto &s : specs)
    arr.push_back({{"name", s.name}, {"datatype", std::string(s.datatype())}, {"shape", s.shape}});
  return arr;
}

std::string requestPrefix(const std::string &model, const std::string &id) {
  std::string s = "model '" + model + "'";
  if (!id.empty())
    s += ", request '" + id + "'";
  return s;
}

} // namespace

bool OutputEncoding::binaryFor(std::string_view name) const {
  for (const auto &[n, b] : per_output)
    if (n == name)
      return b;
  return binary_by_default;
}

Result<HttpInferRequest> decodeHttpInferRequest(const ModelRef &model, std::string_view body,
                                                std::optional<std::string_view> header_length,
                                                Clock::time_point now) {
  DecodeOptions options;
  options.now = now;
  return decodeHttpInferRequest(model, body, header_length, options);
}

Result<HttpInferRequest> decodeHttpInferRequest(const ModelRef &model, std::string_view body,
                                                std::optional<std::string_view> header_length,
                                                const DecodeOptions &options) {
  HttpInferRequest out;
  out.request.model_name = model.name;
  out.request.model_version = model.version;
  std::string prefix = requestPrefix(model.name, "");
  if (model.name.empty())
    return invalidArgument() << "model name is empty";
  std::string_view json_part, binary_part;
  Status s = splitBody(body, header_length, json_part, binary_part);
  if (!s.isOk())
    return s.withPrefix(prefix);
  // Inputs' data packed while parsing (protocol/json_packed.h): no DOM node per element.
  Result<json> root = parseInferJson(json_part);
  if (!root.isOk())
    return root.status().withPrefix(prefix);
  if (!root->is_object())
    return invalidArgument() << prefix << ": request body must be a JSON object";
  auto id = root->find("id");
  if (id != root->end()) {
    if (!id->is_string())
      return invalidArgument() << prefix << ": 'id' must be a string";
    out.request.id = id->get<std::string>();
    prefix = requestPrefix(model.name, out.request.id);
  }
  s = decodeRequestJson(*root, binary_part, header_length.has_value(), options, out);
  if (!s.isOk())
    return s.withPrefix(prefix);
  return out;
}

HttpBody encodeHttpInferResponse(const InferResponse &response, const OutputEncoding &encoding) {
  return encodeHttpInferResponse(response, encoding, {});
}

HttpBody encodeHttpInferResponse(const InferResponse &response, const OutputEncoding &encoding,
                                 std::span<const SharedMemoryOutput> shared_memory) {
  std::string text = "{\"model_name\":" + jsonString(response.model_name) +
                     ",\"model_version\":" + jsonString(response.model_version);
  if (!response.id.empty())
    text += ",\"id\":" + jsonString(response.id);
  text += ",\"outputs\":[";
  std::vector<const NamedTensor *> binary;
  for (size_t i = 0; i < response.outputs.size(); ++i) {
    const NamedTensor &o = response.outputs[i];
    if (i)
      text.push_back(',');
    const SharedMemoryOutput *shm = nullptr;
    for (const SharedMemoryOutput &s : shared_memory)
      if (s.name == o.name)
        shm = &s;
    if (appendTensorEntry(o, encoding.binaryFor(o.name), text, shm))
      binary.push_back(&o);
  }
  text += "]}";
  return finishBody(std::move(text), binary);
}

std::string serverMetadataJson(const ServerMetadata &metadata) {
  json j = {
      {"name", metadata.name}, {"version", metadata.version}, {"extensions", metadata.extensions}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string modelMetadataJson(const ModelMetadata &metadata) {
  json j = {{"name", metadata.name},
            {"versions", metadata.versions},
            {"platform", metadata.platform},
            {"inputs", specsJson(metadata.inputs)},
            {"outputs", specsJson(metadata.outputs)}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace rs::protocol
