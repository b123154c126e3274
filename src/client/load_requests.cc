//===- client/load_requests.cc - loadgen request kinds ----------------------===//
#include "client/load_requests.h"
#include "protocol/grpc_codec.h"
#include "protocol/http_codec.h"
#include "protocol/shared_memory.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace rs::client::loadgen {
namespace {

using nlohmann::json;

constexpr const char *kExtraInput = "loadgen_extra_input";
constexpr int64_t kGib = int64_t{1} << 30;

/// Same-size datatype that differs from `t` (so only the datatype is wrong).
DType otherDtypeOfSameSize(DType t) {
  switch (dtypeSize(t)) {
  case 1: return t == DType::kU8 ? DType::kI8 : DType::kU8;
  case 2: return t == DType::kI16 ? DType::kU16 : DType::kI16;
  case 8: return t == DType::kF64 ? DType::kI64 : DType::kF64;
  default: return t == DType::kF32 ? DType::kI32 : DType::kF32;
  }
}

/// The flat JSON `data` of `t` (elements as numbers; dtypes without a JSON form as zeros).
json jsonData(const Tensor &t) {
  json arr = json::array();
  const int64_t n = t.numElements();
  for (int64_t i = 0; i < n; ++i) {
    switch (t.dtype()) {
    case DType::kF32: arr.push_back(t.dataAs<float>()[i]); break;
    case DType::kF64: arr.push_back(t.dataAs<double>()[i]); break;
    case DType::kI32: arr.push_back(t.dataAs<int32_t>()[i]); break;
    case DType::kI64: arr.push_back(t.dataAs<int64_t>()[i]); break;
    case DType::kBool: arr.push_back(t.data()[i] != 0); break;
    case DType::kU8: arr.push_back(t.data()[i]); break;
    default: arr.push_back(0); break;
    }
  }
  return arr;
}

json jsonInput(const std::string &name, DType dtype, const Shape &shape, json data) {
  return {{"name", name},
          {"datatype", std::string(dtypeWireName(dtype))},
          {"shape", shape},
          {"data", std::move(data)}};
}

/// The valid request as KServe JSON with `data` (for the malformed kinds to bend).
json jsonRequest(const Model &model, const Payload &payload) {
  json root = {{"id", "loadgen"}, {"inputs", json::array()}, {"outputs", json::array()}};
  for (const protocol::NamedTensor &in : payload.inputs)
    root["inputs"].push_back(
        jsonInput(in.name, in.tensor.dtype(), in.tensor.shape(), jsonData(in.tensor)));
  for (const protocol::TensorSpec &o : model.outputs)
    root["outputs"].push_back({{"name", o.name}});
  return root;
}

std::string dump(const json &j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string inferPath(const std::string &model) { return "/v2/models/" + model + "/infer"; }

protocol::InferRequest inferRequest(const Model &model, const Payload &payload) {
  protocol::InferRequest r;
  r.model_name = model.name;
  r.id = "loadgen";
  r.inputs = payload.inputs;
  for (const protocol::TensorSpec &o : model.outputs)
    r.requested_outputs.push_back(o.name);
  return r;
}

void setShmParams(google::protobuf::Map<std::string, inference::InferParameter> &p,
                  const std::string &region, uint64_t offset, uint64_t size) {
  p[protocol::kShmRegionParameter].set_string_param(region);
  p[protocol::kShmOffsetParameter].set_uint64_param(offset);
  p[protocol::kShmByteSizeParameter].set_uint64_param(size);
}

json shmParams(const std::string &region, uint64_t offset, uint64_t size) {
  return {{protocol::kShmRegionParameter, region},
          {protocol::kShmOffsetParameter, offset},
          {protocol::kShmByteSizeParameter, size}};
}

/// gRPC: every input from the client's input window, every output to its output window.
inference::ModelInferRequest grpcShmRequest(const Model &model, const Payload &payload,
                                            const ClientShm &shm) {
  inference::ModelInferRequest msg;
  msg.set_model_name(model.name);
  msg.set_id("loadgen");
  for (size_t i = 0; i < payload.inputs.size(); ++i) {
    const Tensor &t = payload.inputs[i].tensor;
    auto *in = msg.add_inputs();
    in->set_name(payload.inputs[i].name);
    in->set_datatype(std::string(dtypeWireName(t.dtype())));
    for (int64_t d : t.shape())
      in->add_shape(d);
    setShmParams(*in->mutable_parameters(), shm.in_region, shm.input_offsets[i],
                 static_cast<uint64_t>(t.byteSize()));
  }
  for (size_t o = 0; o < model.outputs.size(); ++o) {
    auto *out = msg.add_outputs();
    out->set_name(model.outputs[o].name);
    setShmParams(*out->mutable_parameters(), shm.out_region, shm.output_offsets[o],
                 static_cast<uint64_t>(payload.output_bytes[o]));
  }
  return msg;
}

json httpShmRequest(const Model &model, const Payload &payload, const ClientShm &shm) {
  json root = {{"id", "loadgen"}, {"inputs", json::array()}, {"outputs", json::array()}};
  for (size_t i = 0; i < payload.inputs.size(); ++i) {
    const Tensor &t = payload.inputs[i].tensor;
    root["inputs"].push_back({{"name", payload.inputs[i].name},
                              {"datatype", std::string(dtypeWireName(t.dtype()))},
                              {"shape", t.shape()},
                              {"parameters", shmParams(shm.in_region, shm.input_offsets[i],
                                                       static_cast<uint64_t>(t.byteSize()))}});
  }
  for (size_t o = 0; o < model.outputs.size(); ++o)
    root["outputs"].push_back(
        {{"name", model.outputs[o].name},
         {"parameters", shmParams(shm.out_region, shm.output_offsets[o],
                                  static_cast<uint64_t>(payload.output_bytes[o]))}});
  return root;
}

/// Applies a shared-memory malformation to the parameters of input 0 / output 0.
template <typename SetFn>
void bendShm(const std::string &kind, const ClientShm &shm, const Payload &payload, SetFn set) {
  const uint64_t size0 = static_cast<uint64_t>(payload.inputs[0].tensor.byteSize());
  if (kind == "shm_offset_past_end")
    set(true, shm.in_region, shm.in_size - size0 + 4, size0);
  else if (kind == "shm_offset_overflow")
    set(true, shm.in_region, uint64_t{1} << 63, size0);
  else if (kind == "shm_size_mismatch")
    set(true, shm.in_region, shm.input_offsets[0], size0 + 4);
  else if (kind == "shm_unregistered")
    set(true, shm.in_region + "_not_registered", shm.input_offsets[0], size0);
  else if (kind == "shm_output_past_end")
    set(false, shm.out_region, shm.out_size - 2, static_cast<uint64_t>(payload.output_bytes[0]));
}

WireRequest buildGrpc(const KindSpec &kind, const Model &model, const Payload &payload,
                      const ClientShm *shm, uint64_t serial) {
  WireRequest w;
  inference::ModelInferRequest &msg = w.grpc;
  const std::string &k = kind.name;
  if (kind.shm) {
    msg = grpcShmRequest(model, payload, *shm);
    bendShm(k, *shm, payload,
            [&](bool input, const std::string &region, uint64_t off, uint64_t size) {
              auto *params = input ? msg.mutable_inputs(0)->mutable_parameters()
                                   : msg.mutable_outputs(0)->mutable_parameters();
              setShmParams(*params, region, off, size);
            });
    return w;
  }
  msg = protocol::encodeModelInferRequest(inferRequest(model, payload));
  if (k == "grpc_typed") {
    // Typed contents where the datatype has a field; FP16/BF16 stay raw.
    bool all_typed = true;
    for (const auto &in : payload.inputs)
      all_typed =
          all_typed && in.tensor.dtype() != DType::kF16 && in.tensor.dtype() != DType::kBF16;
    if (all_typed) {
      msg.clear_raw_input_contents();
      for (int i = 0; i < msg.inputs_size(); ++i) {
        const Tensor &t = payload.inputs[static_cast<size_t>(i)].tensor;
        auto *c = msg.mutable_inputs(i)->mutable_contents();
        const int64_t n = t.numElements();
        for (int64_t e = 0; e < n; ++e) {
          switch (t.dtype()) {
          case DType::kF32: c->add_fp32_contents(t.dataAs<float>()[e]); break;
          case DType::kF64: c->add_fp64_contents(t.dataAs<double>()[e]); break;
          case DType::kI32: c->add_int_contents(t.dataAs<int32_t>()[e]); break;
          case DType::kI64: c->add_int64_contents(t.dataAs<int64_t>()[e]); break;
          case DType::kBool: c->add_bool_contents(t.data()[e] != 0); break;
          case DType::kU8: c->add_uint_contents(t.data()[e]); break;
          default: c->add_int_contents(0); break;
          }
        }
      }
    }
  } else if (k == "unknown_model") {
    msg.set_model_name("loadgen_no_such_model_" + std::to_string(serial));
  } else if (k == "missing_input") {
    msg.mutable_inputs()->DeleteSubrange(0, 1);
    msg.mutable_raw_input_contents()->DeleteSubrange(0, 1);
  } else if (k == "extra_input") {
    auto *in = msg.add_inputs();
    in->set_name(kExtraInput);
    in->set_datatype("FP32");
    in->add_shape(1);
    msg.add_raw_input_contents(std::string(4, '\0'));
  } else if (k == "wrong_dtype") {
    auto *in = msg.mutable_inputs(0);
    in->set_datatype(
        std::string(dtypeWireName(otherDtypeOfSameSize(payload.inputs[0].tensor.dtype()))));
  } else if (k == "wrong_shape") {
    msg.mutable_inputs(0)->add_shape(1);
  } else if (k == "zero_rows") {
    for (int i = 0; i < msg.inputs_size(); ++i) {
      if (msg.inputs(i).shape_size() > 0)
        msg.mutable_inputs(i)->set_shape(0, 0);
      msg.mutable_raw_input_contents(i)->clear();
    }
  } else if (k == "byte_length_mismatch") {
    std::string *raw = msg.mutable_raw_input_contents(0);
    raw->resize(raw->size() > 0 ? raw->size() - 1 : 1);
  } else if (k == "declared_1gib") {
    auto *in = msg.mutable_inputs(0);
    in->clear_shape();
    in->add_shape(kGib / dtypeSize(payload.inputs[0].tensor.dtype()));
  } else if (k == "typed_wrong_field") {
    msg.clear_raw_input_contents();
    for (int i = 0; i < msg.inputs_size(); ++i) {
      const Tensor &t = payload.inputs[static_cast<size_t>(i)].tensor;
      auto *c = msg.mutable_inputs(i)->mutable_contents();
      for (int64_t e = 0; e < t.numElements(); ++e)
        c->add_bytes_contents("x");
    }
  } else if (k == "raw_count_mismatch") {
    msg.add_raw_input_contents("surplus");
  }
  return w;
}

WireRequest buildHttp(const KindSpec &kind, const Model &model, const Payload &payload,
                      const ClientShm *shm, uint64_t serial) {
  WireRequest w;
  HttpCall &call = w.http;
  call.path = inferPath(model.name);
  const std::string &k = kind.name;
  if (kind.shm) {
    json root = httpShmRequest(model, payload, *shm);
    bendShm(k, *shm, payload,
            [&](bool input, const std::string &region, uint64_t off, uint64_t size) {
              json &entry = input ? root["inputs"][0] : root["outputs"][0];
              entry["parameters"] = shmParams(region, off, size);
            });
    call.body = dump(root);
    return w;
  }
  if (k == "http_json" || k == "http_binary" || k == "unknown_model" ||
      k == "byte_length_mismatch" || k == "declared_1gib" || k == "binary_past_body") {
    const bool binary = k != "http_json" && k != "unknown_model";
    protocol::OutputEncoding enc;
    enc.binary_by_default = binary;
    protocol::HttpBody body =
        protocol::encodeHttpInferRequest(inferRequest(model, payload), binary, enc);
    call.body = std::move(body.body);
    if (body.json_length)
      call.header_length = std::to_string(*body.json_length);
    if (k == "unknown_model") {
      call.path = inferPath("loadgen_no_such_model_" + std::to_string(serial));
    } else if (k == "byte_length_mismatch" || k == "declared_1gib") {
      // Rewrite input 0's binary_data_size in the JSON header: one byte short, or 1 GiB.
      const size_t json_len = std::stoul(*call.header_length);
      json root = json::parse(call.body.substr(0, json_len));
      const int64_t size0 = payload.inputs[0].tensor.byteSize();
      root["inputs"][0]["parameters"]["binary_data_size"] = k == "declared_1gib" ? kGib : size0 - 1;
      std::string header = dump(root);
      call.body = header + call.body.substr(json_len);
      call.header_length = std::to_string(header.size());
    } else if (k == "binary_past_body") {
      call.header_length = std::to_string(call.body.size() + 100);
    }
    return w;
  }
  json root = jsonRequest(model, payload);
  json &in0 = root["inputs"][0];
  if (k == "missing_input") {
    root["inputs"].erase(0);
  } else if (k == "extra_input") {
    root["inputs"].push_back(jsonInput(kExtraInput, DType::kF32, {1}, json::array({0.5})));
  } else if (k == "wrong_dtype") {
    in0["datatype"] =
        std::string(dtypeWireName(otherDtypeOfSameSize(payload.inputs[0].tensor.dtype())));
  } else if (k == "wrong_shape") {
    in0["shape"].push_back(1);
  } else if (k == "zero_rows") {
    for (json &in : root["inputs"]) {
      if (!in["shape"].empty())
        in["shape"][0] = 0;
      in["data"] = json::array();
    }
  } else if (k == "invalid_json") {
    std::string text = dump(root);
    call.body = text.substr(0, text.size() / 2);
    return w;
  } else if (k == "binary_size_overflow") {
    in0.erase("data");
    in0["parameters"] = {{"binary_data_size", UINT64_MAX}};
    std::string header = dump(root);
    call.body = header + "abcd";
    call.header_length = std::to_string(header.size());
    return w;
  }
  call.body = dump(root);
  return w;
}

} // namespace

std::vector<KindSpec> allKinds(bool grpc, bool http, bool shm) {
  std::vector<KindSpec> out;
  const StatusCode kInvalid = StatusCode::kInvalidArgument;
  auto add = [&](const char *name, Proto p, bool malformed, bool uses_shm, StatusCode code) {
    out.push_back({name, p, malformed, uses_shm, code});
  };
  if (grpc) {
    add("grpc_raw", Proto::kGrpc, false, false, StatusCode::kOk);
    add("grpc_typed", Proto::kGrpc, false, false, StatusCode::kOk);
    if (shm)
      add("grpc_shm", Proto::kGrpc, false, true, StatusCode::kOk);
  }
  if (http) {
    add("http_json", Proto::kHttp, false, false, StatusCode::kOk);
    add("http_binary", Proto::kHttp, false, false, StatusCode::kOk);
    if (shm)
      add("http_shm", Proto::kHttp, false, true, StatusCode::kOk);
  }
  for (Proto p : {Proto::kGrpc, Proto::kHttp}) {
    if ((p == Proto::kGrpc && !grpc) || (p == Proto::kHttp && !http))
      continue;
    add("unknown_model", p, true, false, StatusCode::kNotFound);
    for (const char *k : {"missing_input", "extra_input", "wrong_dtype", "wrong_shape", "zero_rows",
                          "byte_length_mismatch", "declared_1gib"})
      add(k, p, true, false, kInvalid);
    if (p == Proto::kHttp)
      for (const char *k : {"invalid_json", "binary_size_overflow", "binary_past_body"})
        add(k, p, true, false, kInvalid);
    if (p == Proto::kGrpc)
      for (const char *k : {"typed_wrong_field", "raw_count_mismatch"})
        add(k, p, true, false, kInvalid);
    if (shm) {
      for (const char *k : {"shm_offset_past_end", "shm_offset_overflow", "shm_size_mismatch",
                            "shm_output_past_end"})
        add(k, p, true, true, kInvalid);
      add("shm_unregistered", p, true, true, StatusCode::kFailedPrecondition);
    }
  }
  return out;
}

WireRequest buildRequest(const KindSpec &kind, const Model &model, const Payload &payload,
                         const ClientShm *shm, uint64_t serial) {
  return kind.proto == Proto::kGrpc ? buildGrpc(kind, model, payload, shm, serial)
                                    : buildHttp(kind, model, payload, shm, serial);
}

Result<Payload> makePayload(const Model &model, int64_t rows, std::mt19937_64 &rng) {
  Payload p;
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 3);
  auto shapeOf = [&](const protocol::TensorSpec &spec) {
    Shape s = spec.shape;
    for (int64_t &d : s)
      if (d < 0)
        d = rows;
    return s;
  };
  for (const protocol::TensorSpec &spec : model.inputs) {
    if (dtypeSize(spec.dtype) <= 0)
      return invalidArgument() << "input '" << spec.name << "': datatype "
                               << dtypeWireName(spec.dtype) << " is not supported by loadgen";
    Tensor t = Tensor::zeros(spec.dtype, shapeOf(spec));
    uint8_t *d = t.mutableData();
    const int64_t n = t.numElements();
    for (int64_t i = 0; i < n; ++i) {
      switch (spec.dtype) {
      case DType::kF32: reinterpret_cast<float *>(d)[i] = static_cast<float>(unit(rng)); break;
      case DType::kF64: reinterpret_cast<double *>(d)[i] = unit(rng); break;
      case DType::kI32: reinterpret_cast<int32_t *>(d)[i] = small(rng); break;
      case DType::kI64: reinterpret_cast<int64_t *>(d)[i] = small(rng); break;
      case DType::kBool: d[i] = static_cast<uint8_t>(small(rng) & 1); break;
      default: std::memset(d + i * dtypeSize(spec.dtype), small(rng), 1); break;
      }
    }
    p.inputs.push_back({spec.name, std::move(t)});
  }
  for (const protocol::TensorSpec &spec : model.outputs) {
    Shape s = shapeOf(spec);
    p.output_bytes.push_back(elementCount(s) * dtypeSize(spec.dtype));
    p.output_shapes.push_back(std::move(s));
  }
  return p;
}

} // namespace rs::client::loadgen
