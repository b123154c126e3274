//===- protocol/http_body.cc - REST body parts: JSON, binary, tensor entries -===//
//
// The parts of a KServe V2 REST body that requests and responses share
// (protocol/http_codec_impl.h): the JSON/binary split by Inference-Header-Content-Length,
// the "inputs"/"outputs" tensor entries checked and decoded (JSON data, binary data or
// shared memory), and their encoding with the binary parts appended after the JSON.
//
//===----------------------------------------------------------------------===//
#include "protocol/http_codec.h"

#include "protocol/http_codec_impl.h"

#include "protocol/json_tensor.h"
#include "protocol/wire_tensor.h"

#include <charconv>
#include <functional>
#include <limits>
#include <set>

namespace rs::protocol::http_codec_detail {

using nlohmann::json;

namespace {

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

} // namespace

std::string jsonString(std::string_view s) {
  return json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
}

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

namespace {

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

void appendShape(const Shape &shape, std::string &out) {
  out.push_back('[');
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out.push_back(',');
    out += std::to_string(shape[i]);
  }
  out.push_back(']');
}

} // namespace

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

bool appendTensorEntry(const NamedTensor &t, bool binary, std::string &out,
                       const SharedMemoryOutput *shm) {
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

} // namespace rs::protocol::http_codec_detail
