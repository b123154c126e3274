//===- protocol/http_codec.cc - KServe V2 REST bodies <-> request types ------===//
#include "protocol/http_codec.h"

#include "protocol/deadline.h"
#include "protocol/json_packed.h"
#include "protocol/json_tensor.h"
#include "protocol/wire_tensor.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <limits>
#include <set>

namespace rs::protocol {
namespace {

using nlohmann::json;

std::string jsonString(std::string_view s) {
  return json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<json> parseJson(std::string_view text) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception &e) {
    return invalidArgument() << "invalid JSON: " << e.what();
  }
}

/// Splits `body` into its JSON and binary parts according to the header value.
Status splitBody(std::string_view body, std::optional<std::string_view> header_length,
                 std::string_view &json_part, std::string_view &binary_part) {
  if (!header_length) {
    json_part = body;
    binary_part = {};
    return Status::ok();
  }
  std::string_view v = *header_length;
  uint64_t len = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), len);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size())
    return invalidArgument() << kInferenceHeaderContentLength << " '" << v
                             << "' is not a decimal byte count";
  if (len > body.size())
    return invalidArgument() << kInferenceHeaderContentLength << " " << len
                             << " exceeds the body size " << body.size();
  if (len == 0)
    return invalidArgument() << kInferenceHeaderContentLength
                             << " 0 (a body without a JSON header) is not supported";
  json_part = body.substr(0, len);
  binary_part = body.substr(len);
  return Status::ok();
}

/// One tensor entry of "inputs" or "outputs", checked but not yet holding data.
struct TensorEntry {
  std::string name;
  std::string what;
  WireTensorLayout layout;
  const json *data = nullptr;         // JSON data, or
  std::optional<int64_t> binary_size; // binary_data_size, or
  std::optional<SharedMemoryRef> shm; // shared memory parameters
};

Result<int64_t> nonNegativeInteger(const std::string &what, const json &v, std::string_view key) {
  if (v.is_number_unsigned() && v.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX))
    return static_cast<int64_t>(v.get<uint64_t>());
  if (v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() >= 0)
    return v.get<int64_t>();
  return invalidArgument() << what << ": " << key << " must be a non-negative integer, got "
                           << v.dump(-1, ' ', false, json::error_handler_t::replace);
}

/// The tensor's shared-memory parameters, when `params` names a region (shared_memory.h).
Result<std::optional<SharedMemoryRef>>
sharedMemoryParameters(const std::string &what, const json &params,
                       const SharedMemoryRegistry *registry) {
  ShmParameterView view;
  if (auto region = params.find(kShmRegionParameter); region != params.end()) {
    view.has_region = true;
    if (region->is_string())
      view.region = region->get<std::string>();
  }
  auto integer = [&](const char *key) -> std::function<Result<uint64_t>()> {
    auto it = params.find(key);
    if (it == params.end())
      return {};
    return [&what, &value = *it, key]() -> Result<uint64_t> {
      RS_ASSIGN_OR_RETURN(int64_t n, nonNegativeInteger(what, value, key));
      return static_cast<uint64_t>(n);
    };
  };
  view.byte_size = integer(kShmByteSizeParameter);
  view.offset = integer(kShmOffsetParameter);
  return checkShmParameters(what, view, registry);
}

Result<TensorEntry> parseTensorEntry(const json &e, bool input, size_t index,
                                     const DecodeOptions *decode) {
  const SharedMemoryRegistry *registry = decode ? decode->shared_memory : nullptr;
  std::string kind = input ? "input" : "output";
  if (!e.is_object())
    return invalidArgument() << kind << " #" << index << " is not an object";
  auto name = e.find("name");
  if (name == e.end() || !name->is_string() || name->get<std::string>().empty())
    return invalidArgument() << kind << " #" << index << " has no name";
  TensorEntry t;
  t.name = name->get<std::string>();
  t.what = input ? inputWhat(t.name) : outputWhat(t.name);
  auto datatype = e.find("datatype");
  if (datatype == e.end() || !datatype->is_string())
    return invalidArgument() << t.what << ": 'datatype' must be a string";
  auto shape_json = e.find("shape");
  if (shape_json == e.end() || !shape_json->is_array())
    return invalidArgument() << t.what << ": 'shape' must be an array of integers";
  if (static_cast<int64_t>(shape_json->size()) > kMaxWireRank)
    return invalidArgument() << t.what << ": rank " << shape_json->size() << " exceeds the maximum "
                             << kMaxWireRank;
  Shape shape;
  for (const json &d : *shape_json) {
    if (d.is_number_unsigned() && d.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX))
      shape.push_back(static_cast<int64_t>(d.get<uint64_t>()));
    else if (d.is_number_integer() && !d.is_number_unsigned())
      shape.push_back(d.get<int64_t>()); // negative: checkWireTensor reports it
    else
      return invalidArgument() << t.what << ": 'shape' must be an array of integers, got "
                               << shape_json->dump(-1, ' ', false, json::error_handler_t::replace);
  }
  const std::string received = datatype->get<std::string>();
  Result<WireTensorLayout> checked = checkWireTensor(t.what, received, shape);
  if (!checked.isOk())
    return dtypeFromWireName(received) || !input || !decode
               ? checked.status()
               : withDatatypes(checked.status(), *decode, t.name, received);
  t.layout = std::move(*checked);
  auto params = e.find("parameters");
  if (params != e.end()) {
    if (!params->is_object())
      return invalidArgument() << t.what << ": 'parameters' must be an object";
    RS_ASSIGN_OR_RETURN(t.shm, sharedMemoryParameters(t.what, *params, registry));
    auto size = params->find("binary_data_size");
    if (size != params->end()) {
      RS_ASSIGN_OR_RETURN(int64_t n, nonNegativeInteger(t.what, *size, "binary_data_size"));
      t.binary_size = n;
    }
  }
  auto data = e.find("data");
  if (data != e.end())
    t.data = &*data;
  if (t.binary_size && t.data)
    return invalidArgument() << t.what << ": has both 'data' and binary_data_size";
  if (t.shm && (t.binary_size || t.data))
    return invalidArgument() << t.what << ": has shared memory parameters and "
                             << (t.data ? "'data'" : "binary_data_size");
  if (t.shm)
    return t;
  if (!t.binary_size && !t.data)
    return invalidArgument() << t.what << ": has neither 'data' nor binary_data_size";
  if (t.binary_size && !t.layout.bytes && *t.binary_size != t.layout.byte_size)
    return invalidArgument() << t.what << ": binary_data_size is " << *t.binary_size
                             << " bytes but " << describeLayout(t.layout) << " needs "
                             << t.layout.byte_size << " bytes";
  return t;
}

/// Decodes every entry of `list` ("inputs" or "outputs") taking binary parts from `binary`
/// and shared-memory data through `options` (nullptr: none).
Status decodeTensorList(const json &list, bool input, std::string_view binary, bool has_header,
                        const DecodeOptions *options, std::vector<NamedTensor> &out) {
  std::vector<TensorEntry> entries;
  std::set<std::string> seen;
  uint64_t declared = 0; // never exceeds binary.size(), so it cannot overflow
  for (size_t i = 0; i < list.size(); ++i) {
    RS_ASSIGN_OR_RETURN(TensorEntry t, parseTensorEntry(list[i], input, i, options));
    if (!seen.insert(t.name).second)
      return invalidArgument() << t.what << " appears more than once";
    if (t.binary_size) {
      if (!has_header)
        return invalidArgument() << t.what << ": binary_data_size given but there is no "
                                 << kInferenceHeaderContentLength << " header";
      // Name the first tensor whose bytes would run past the body.
      if (static_cast<uint64_t>(*t.binary_size) > binary.size() - declared)
        return invalidArgument() << t.what << ": binary_data_size " << *t.binary_size
                                 << " runs past the end of the body (" << binary.size()
                                 << " bytes after the JSON header)";
      declared += static_cast<uint64_t>(*t.binary_size);
    }
    entries.push_back(std::move(t));
  }
  if (declared != binary.size())
    return invalidArgument() << "binary_data_size values of the " << (input ? "inputs" : "outputs")
                             << " sum to " << declared << " bytes but the body has "
                             << binary.size() << " bytes after the JSON header";
  // Every size is now proven to fit in the received body: allocating is safe.
  size_t offset = 0;
  uint64_t shm_bytes = 0; // never above the limit, so it cannot overflow
  for (TensorEntry &t : entries) {
    if (t.shm) {
      RS_ASSIGN_OR_RETURN(NamedTensor tensor,
                          readSharedMemoryTensor(*options, t.name, t.layout, *t.shm, shm_bytes));
      out.push_back(std::move(tensor));
    } else if (t.binary_size) {
      std::string_view part = binary.substr(offset, static_cast<size_t>(*t.binary_size));
      offset += part.size();
      if (t.layout.bytes) {
        RS_ASSIGN_OR_RETURN(BytesTensor bytes,
                            BytesTensor::parseSerialized(t.what, t.layout, part));
        out.push_back(NamedTensor::ofBytes(t.name, std::move(bytes)));
        continue;
      }
      out.push_back(
          {t.name, Tensor::copyOf(t.layout.dtype, t.layout.shape,
                                  {reinterpret_cast<const uint8_t *>(part.data()), part.size()})});
    } else if (t.layout.bytes) {
      RS_ASSIGN_OR_RETURN(BytesTensor bytes, bytesFromJsonData(t.what, *t.data, t.layout));
      out.push_back(NamedTensor::ofBytes(t.name, std::move(bytes)));
    } else {
      Result<Tensor> tensor = tensorFromJsonData(t.what, *t.data, t.layout);
      if (!tensor.isOk())
        return options && (t.layout.dtype == DType::kF16 || t.layout.dtype == DType::kBF16)
                   ? withDatatypes(tensor.status(), *options, t.name,
                                   std::string(dtypeWireName(t.layout.dtype)) + " as JSON data")
                   : tensor.status();
      out.push_back({t.name, std::move(*tensor)});
    }
  }
  return Status::ok();
}

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

void appendShape(const Shape &shape, std::string &out) {
  out.push_back('[');
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out.push_back(',');
    out += std::to_string(shape[i]);
  }
  out.push_back(']');
}

/// Appends `{"name","datatype","shape", data or binary parameters}`; returns true when the
/// tensor's bytes go to the binary section. With `shm` (an output already written to
/// shared memory) the entry has neither data nor parameters, as Triton's reply: Triton's C++
/// HTTP client (perf_analyzer, Model Analyzer) takes an output's `parameters` to describe
/// binary data and fails on one without `binary_data_size`.
bool appendTensorEntry(const NamedTensor &t, bool binary, std::string &out,
                       const SharedMemoryOutput *shm = nullptr) {
  // A BYTES tensor's JSON strings, when it is to go as JSON and has that form.
  std::optional<std::string> strings;
  if (!shm && !binary && t.isBytes())
    strings = jsonStringsOf(*t.bytes);
  const bool as_binary =
      !shm && (binary || (t.isBytes() ? !strings.has_value() : !hasJsonForm(t.tensor)));
  out += "{\"name\":" + jsonString(t.name) + ",\"datatype\":\"";
  out += t.datatype();
  out += "\",\"shape\":";
  appendShape(t.shape(), out);
  if (shm) {
    // The region holds the bytes; the client knows where it asked for them.
  } else if (as_binary) {
    out += ",\"parameters\":{\"binary_data_size\":" + std::to_string(t.wireByteSize()) + "}";
  } else {
    out += ",\"data\":";
    if (strings)
      out += *strings;
    else
      appendJsonData(t.tensor, out);
  }
  out.push_back('}');
  return as_binary;
}

/// Finishes `json_text` + binary parts into a body.
HttpBody finishBody(std::string json_text, const std::vector<const NamedTensor *> &binary) {
  HttpBody body;
  if (binary.empty()) {
    body.body = std::move(json_text);
    return body;
  }
  body.json_length = json_text.size();
  size_t total = json_text.size();
  for (const NamedTensor *t : binary)
    total += t->wireByteSize();
  body.body = std::move(json_text);
  body.body.reserve(total);
  for (const NamedTensor *t : binary) {
    if (t->isBytes())
      t->bytes->appendSerialized(body.body);
    else
      body.body.append(reinterpret_cast<const char *>(t->tensor.data()), t->tensor.bytes().size());
  }
  return body;
}

json specsJson(const std::vector<TensorSpec> &specs) {
  json arr = json::array();
  for (const auto &s : specs)
    arr.push_back(
        {{"name", s.name}, {"datatype", std::string(dtypeWireName(s.dtype))}, {"shape", s.shape}});
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

HttpBody encodeHttpInferRequest(const InferRequest &request, bool binary_inputs,
                                const OutputEncoding &outputs) {
  std::string text = "{";
  if (!request.id.empty())
    text += "\"id\":" + jsonString(request.id) + ",";
  text += "\"parameters\":{\"binary_data_output\":";
  text += outputs.binary_by_default ? "true" : "false";
  text += "},\"inputs\":[";
  std::vector<const NamedTensor *> binary;
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    if (i)
      text.push_back(',');
    if (appendTensorEntry(request.inputs[i], binary_inputs, text))
      binary.push_back(&request.inputs[i]);
  }
  text += "]";
  if (!request.requested_outputs.empty()) {
    text += ",\"outputs\":[";
    for (size_t i = 0; i < request.requested_outputs.size(); ++i) {
      const std::string &name = request.requested_outputs[i];
      if (i)
        text.push_back(',');
      text += "{\"name\":" + jsonString(name) + ",\"parameters\":{\"binary_data\":";
      text += outputs.binaryFor(name) ? "true" : "false";
      text += "}}";
    }
    text += "]";
  }
  text += "}";
  return finishBody(std::move(text), binary);
}

Result<InferResponse> decodeHttpInferResponse(std::string_view body,
                                              std::optional<std::string_view> header_length) {
  std::string_view json_part, binary_part;
  RS_RETURN_IF_ERROR(splitBody(body, header_length, json_part, binary_part));
  RS_ASSIGN_OR_RETURN(json root, parseJson(json_part));
  if (!root.is_object())
    return invalidArgument() << "response body must be a JSON object";
  InferResponse resp;
  auto str = [&](const char *key, std::string &dst) -> Status {
    auto it = root.find(key);
    if (it == root.end())
      return Status::ok();
    if (!it->is_string())
      return invalidArgument() << "response '" << key << "' must be a string";
    dst = it->get<std::string>();
    return Status::ok();
  };
  RS_RETURN_IF_ERROR(str("model_name", resp.model_name));
  RS_RETURN_IF_ERROR(str("model_version", resp.model_version));
  RS_RETURN_IF_ERROR(str("id", resp.id));
  auto outputs = root.find("outputs");
  if (outputs == root.end() || !outputs->is_array())
    return invalidArgument() << "response has no 'outputs' array";
  RS_RETURN_IF_ERROR(decodeTensorList(*outputs, false, binary_part, header_length.has_value(),
                                      nullptr, resp.outputs));
  return resp;
}

} // namespace rs::protocol
