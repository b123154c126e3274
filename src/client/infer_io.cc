//===- client/infer_io.cc - Request files and output display for `infer` ----===//
#include "client/infer_io.h"
#include "support/file.h"

#include "bundle/safetensors.h"
#include "protocol/http_codec.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cstring>

namespace rs::client {
namespace {

bool endsWith(const std::string &s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13); // inf / nan
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign; // zero
  } else {       // subnormal: renormalise
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while ((mant & 0x400u) == 0);
    bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bf16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

template <typename T> void appendValue(T v, std::string &out) {
  char buf[40];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, r.ptr);
}

void appendElement(const Tensor &t, int64_t i, std::string &out) {
  switch (t.dtype()) {
  case DType::kBool: out += t.data()[i] ? "true" : "false"; break;
  case DType::kI8: appendValue(int(t.dataAs<int8_t>()[i]), out); break;
  case DType::kI16: appendValue(t.dataAs<int16_t>()[i], out); break;
  case DType::kI32: appendValue(t.dataAs<int32_t>()[i], out); break;
  case DType::kI64: appendValue(t.dataAs<int64_t>()[i], out); break;
  case DType::kU8: appendValue(unsigned(t.data()[i]), out); break;
  case DType::kU16: appendValue(t.dataAs<uint16_t>()[i], out); break;
  case DType::kU32: appendValue(t.dataAs<uint32_t>()[i], out); break;
  case DType::kU64: appendValue(t.dataAs<uint64_t>()[i], out); break;
  case DType::kF16: appendValue(halfToFloat(t.dataAs<uint16_t>()[i]), out); break;
  case DType::kBF16: appendValue(bf16ToFloat(t.dataAs<uint16_t>()[i]), out); break;
  case DType::kF32: appendValue(t.dataAs<float>()[i], out); break;
  case DType::kF64: appendValue(t.dataAs<double>()[i], out); break;
  default: out += "?"; break;
  }
}

Result<protocol::InferRequest> loadJson(const std::string &path, const std::string &model) {
  RS_ASSIGN_OR_RETURN(std::string text, readWholeFile(path));
  Result<protocol::HttpInferRequest> r =
      protocol::decodeHttpInferRequest({model, ""}, text, std::nullopt, protocol::Clock::now());
  if (!r.isOk())
    return r.status().withPrefix(path);
  protocol::InferRequest request = std::move(r->request);
  request.deadline.reset(); // a file carries no clock; the command sets its own timeout
  return request;
}

Result<protocol::InferRequest> loadSafetensors(const std::string &path, const std::string &model) {
  RS_ASSIGN_OR_RETURN(bundle::SafetensorsFile file, bundle::SafetensorsFile::open(path));
  protocol::InferRequest request;
  request.model_name = model;
  for (const std::string &name : file.names()) {
    RS_ASSIGN_OR_RETURN(Tensor t, file.tensor(name));
    request.inputs.push_back({name, std::move(t)});
  }
  return request;
}

} // namespace

Result<protocol::InferRequest> loadInferRequest(const std::string &path, const std::string &model) {
  if (endsWith(path, ".safetensors"))
    return loadSafetensors(path, model);
  if (endsWith(path, ".json"))
    return loadJson(path, model);
  return invalidArgument() << path << ": expected a .safetensors or .json request file";
}

Status saveInferOutputs(const std::string &path, const protocol::InferResponse &response) {
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const auto &o : response.outputs) {
    if (o.isBytes())
      return invalidArgument() << path << ": output '" << o.name
                               << "' is BYTES, which safetensors cannot hold";
    tensors.emplace_back(o.name, o.tensor);
  }
  std::map<std::string, std::string> metadata;
  if (!response.model_name.empty())
    metadata["model_name"] = response.model_name;
  if (!response.model_version.empty())
    metadata["model_version"] = response.model_version;
  if (!response.id.empty())
    metadata["id"] = response.id;
  return bundle::writeSafetensors(path, tensors, metadata);
}

std::string describeTensor(const protocol::NamedTensor &nt, size_t max_values) {
  std::string out =
      nt.name + " " + std::string(nt.datatype()) + " " + shapeToString(nt.shape()) + " = [";
  int64_t n = nt.isBytes() ? nt.bytes->numElements() : nt.tensor.numElements();
  int64_t shown = std::min<int64_t>(n, static_cast<int64_t>(max_values));
  for (int64_t i = 0; i < shown; ++i) {
    if (i)
      out += ", ";
    if (nt.isBytes()) // a JSON string, bytes that are not UTF-8 shown as U+FFFD
      out += nlohmann::json(std::string(nt.bytes->element(i)))
                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    else
      appendElement(nt.tensor, i, out);
  }
  if (shown < n)
    out += shown ? ", ... (" + std::to_string(n) + " values)"
                 : "... (" + std::to_string(n) + " values)";
  out += "]";
  return out;
}

} // namespace rs::client
