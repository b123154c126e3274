//===- protocol/grpc_codec.cc - KServe V2 gRPC messages <-> request types ---===//
#include "protocol/grpc_codec.h"

#include "protocol/deadline.h"
#include "protocol/wire_tensor.h"

#include <array>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <type_traits>
#include <utility>

namespace rs::protocol {
namespace {

using google::protobuf::Map;
using google::protobuf::RepeatedField;
using inference::InferParameter;
using inference::InferTensorContents;

// The typed-contents fields, in proto order, with their names for messages.
enum ContentsField { kBoolF, kIntF, kInt64F, kUintF, kUint64F, kFp32F, kFp64F, kBytesF, kNumF };
constexpr std::array<const char *, kNumF> kFieldNames = {
    "bool_contents",   "int_contents",  "int64_contents", "uint_contents",
    "uint64_contents", "fp32_contents", "fp64_contents",  "bytes_contents"};

std::array<int64_t, kNumF> fieldSizes(const InferTensorContents &c) {
  return {c.bool_contents_size(), c.int_contents_size(),    c.int64_contents_size(),
          c.uint_contents_size(), c.uint64_contents_size(), c.fp32_contents_size(),
          c.fp64_contents_size(), c.bytes_contents_size()};
}

int64_t totalValues(const InferTensorContents &c) {
  int64_t n = 0;
  for (int64_t s : fieldSizes(c))
    n += s;
  return n;
}

/// The contents field carrying `dtype`, or kNumF when the dtype must travel raw.
ContentsField fieldFor(DType dtype) {
  switch (dtype) {
  case DType::kBool: return kBoolF;
  case DType::kI8:
  case DType::kI16:
  case DType::kI32: return kIntF;
  case DType::kI64: return kInt64F;
  case DType::kU8:
  case DType::kU16:
  case DType::kU32: return kUintF;
  case DType::kU64: return kUint64F;
  case DType::kF32: return kFp32F;
  case DType::kF64: return kFp64F;
  default: return kNumF;
  }
}

/// Copies `src` into `dst` as Dst, rejecting values outside Dst's range.
template <typename Dst, typename Src>
Status convertValues(const std::string &what, const RepeatedField<Src> &src, DType dtype,
                     Dst *dst) {
  for (int i = 0; i < src.size(); ++i) {
    Src v = src.Get(i);
    if constexpr (std::is_integral_v<Src> && !std::is_same_v<Src, bool> &&
                  !std::is_same_v<Dst, Src>) {
      if (!std::in_range<Dst>(v))
        return invalidArgument() << what << ": value " << v << " at index " << i
                                 << " is out of range for " << dtypeWireName(dtype);
    }
    dst[i] = static_cast<Dst>(v);
  }
  return Status::ok();
}

Result<Tensor> tensorFromContents(const std::string &what, const WireTensorLayout &layout,
                                  const InferTensorContents &contents) {
  std::array<int64_t, kNumF> sizes = fieldSizes(contents);
  int64_t total = totalValues(contents);
  if (total == 0 && layout.num_elements > 0)
    return invalidArgument() << what << ": no data: neither raw contents nor typed contents is set";
  ContentsField field = fieldFor(layout.dtype);
  if (field == kNumF)
    return invalidArgument() << what << ": " << dtypeWireName(layout.dtype)
                             << " data must be sent as raw contents";
  for (int f = 0; f < kNumF; ++f)
    if (f != field && sizes[f] != 0)
      return invalidArgument() << what << ": " << dtypeWireName(layout.dtype) << " data must be in "
                               << kFieldNames[field] << ", not " << kFieldNames[f];
  if (sizes[field] != layout.num_elements)
    return invalidArgument() << what << ": contents has " << sizes[field] << " values in "
                             << kFieldNames[field] << " but " << describeLayout(layout) << " needs "
                             << layout.num_elements;
  // Counts match the (small) message, so this allocation is bounded by what was received.
  Tensor t = Tensor::zeros(layout.dtype, layout.shape);
  uint8_t *p = t.mutableData();
  switch (layout.dtype) {
  case DType::kBool:
    RS_RETURN_IF_ERROR(convertValues(what, contents.bool_contents(), layout.dtype, p));
    break;
  case DType::kI8:
    RS_RETURN_IF_ERROR(
        convertValues(what, contents.int_contents(), layout.dtype, reinterpret_cast<int8_t *>(p)));
    break;
  case DType::kI16:
    RS_RETURN_IF_ERROR(
        convertValues(what, contents.int_contents(), layout.dtype, reinterpret_cast<int16_t *>(p)));
    break;
  case DType::kI32:
    RS_RETURN_IF_ERROR(
        convertValues(what, contents.int_contents(), layout.dtype, reinterpret_cast<int32_t *>(p)));
    break;
  case DType::kI64:
    RS_RETURN_IF_ERROR(convertValues(what, contents.int64_contents(), layout.dtype,
                                     reinterpret_cast<int64_t *>(p)));
    break;
  case DType::kU8:
    RS_RETURN_IF_ERROR(convertValues(what, contents.uint_contents(), layout.dtype, p));
    break;
  case DType::kU16:
    RS_RETURN_IF_ERROR(convertValues(what, contents.uint_contents(), layout.dtype,
                                     reinterpret_cast<uint16_t *>(p)));
    break;
  case DType::kU32:
    RS_RETURN_IF_ERROR(convertValues(what, contents.uint_contents(), layout.dtype,
                                     reinterpret_cast<uint32_t *>(p)));
    break;
  case DType::kU64:
    RS_RETURN_IF_ERROR(convertValues(what, contents.uint64_contents(), layout.dtype,
                                     reinterpret_cast<uint64_t *>(p)));
    break;
  case DType::kF32:
    RS_RETURN_IF_ERROR(
        convertValues(what, contents.fp32_contents(), layout.dtype, reinterpret_cast<float *>(p)));
    break;
  case DType::kF64:
    RS_RETURN_IF_ERROR(
        convertValues(what, contents.fp64_contents(), layout.dtype, reinterpret_cast<double *>(p)));
    break;
  default: break; // unreachable: fieldFor() returned kNumF above
  }
  return t;
}

/// Decodes one tensor's data from `raw` (when non-null) or its typed contents. Raw data
/// is viewed in place when `owner` (keeping `raw` alive) is set, else copied.
Result<Tensor> decodeTensorData(const std::string &what, const WireTensorLayout &layout,
                                const InferTensorContents &contents, const std::string *raw,
                                const std::shared_ptr<const void> &owner) {
  if (!raw)
    return tensorFromContents(what, layout, contents);
  if (totalValues(contents) != 0)
    return invalidArgument() << what << ": typed contents must be empty when raw contents are used";
  if (static_cast<int64_t>(raw->size()) != layout.byte_size)
    return invalidArgument() << what << ": raw content has " << raw->size() << " bytes but "
                             << describeLayout(layout) << " needs " << layout.byte_size << " bytes";
  const auto *data = reinterpret_cast<const uint8_t *>(raw->data());
  if (owner)
    return Tensor::view(layout.dtype, layout.shape, data, owner);
  return Tensor::copyOf(layout.dtype, layout.shape, {data, raw->size()});
}

/// A BYTES tensor from its bytes_contents, one entry per element.
Result<BytesTensor> bytesFromContents(const std::string &what, const WireTensorLayout &layout,
                                      const InferTensorContents &contents) {
  std::array<int64_t, kNumF> sizes = fieldSizes(contents);
  if (totalValues(contents) == 0 && layout.num_elements > 0)
    return invalidArgument() << what << ": no data: neither raw contents nor typed contents is set";
  for (int f = 0; f < kNumF; ++f)
    if (f != kBytesF && sizes[f] != 0)
      return invalidArgument() << what << ": BYTES data must be in " << kFieldNames[kBytesF]
                               << ", not " << kFieldNames[f];
  if (sizes[kBytesF] != layout.num_elements)
    return invalidArgument() << what << ": contents has " << sizes[kBytesF] << " values in "
                             << kFieldNames[kBytesF] << " but " << describeLayout(layout)
                             << " needs " << layout.num_elements;
  BytesTensor t(layout.shape);
  for (const std::string &e : contents.bytes_contents())
    t.append(e);
  return t;
}

/// Tensor `name` (`what` in messages) from `raw` (when non-null; the serialized form for
/// BYTES) or its typed contents, as decodeTensorData.
Result<NamedTensor> decodeNamedTensor(const std::string &name, const std::string &what,
                                      const WireTensorLayout &layout,
                                      const InferTensorContents &contents, const std::string *raw,
                                      const std::shared_ptr<const void> &owner) {
  if (!layout.bytes) {
    RS_ASSIGN_OR_RETURN(Tensor t, decodeTensorData(what, layout, contents, raw, owner));
    return NamedTensor{name, std::move(t)};
  }
  if (!raw) {
    RS_ASSIGN_OR_RETURN(BytesTensor t, bytesFromContents(what, layout, contents));
    return NamedTensor::ofBytes(name, std::move(t));
  }
  if (totalValues(contents) != 0)
    return invalidArgument() << what << ": typed contents must be empty when raw contents are used";
  RS_ASSIGN_OR_RETURN(BytesTensor t, BytesTensor::parseSerialized(what, layout, *raw));
  return NamedTensor::ofBytes(name, std::move(t));
}

/// Rejects tensor parameters naming features this server does not offer.
Status checkTensorParameters(const std::string &what, const Map<std::string, InferParameter> &p) {
  if (p.count("classification"))
    return unimplemented() << what << ": the classification extension is not supported";
  return Status::ok();
}

/// A non-negative integer parameter (int64_param >= 0 or uint64_param).
Result<uint64_t> unsignedParameter(const std::string &what, const InferParameter &p,
                                   const char *key) {
  if (p.has_int64_param() && p.int64_param() >= 0)
    return static_cast<uint64_t>(p.int64_param());
  if (p.has_uint64_param())
    return p.uint64_param();
  return invalidArgument() << what << ": parameter '" << key << "' must be a non-negative integer";
}

/// The tensor's shared-memory parameters, when it names a region (shared_memory.h).
Result<std::optional<SharedMemoryRef>>
sharedMemoryParameters(const std::string &what, const Map<std::string, InferParameter> &p,
                       const SharedMemoryRegistry *registry) {
  ShmParameterView view;
  if (auto region = p.find(kShmRegionParameter); region != p.end()) {
    view.has_region = true;
    if (region->second.has_string_param())
      view.region = region->second.string_param();
  }
  auto integer = [&](const char *key) -> std::function<Result<uint64_t>()> {
    auto it = p.find(key);
    if (it == p.end())
      return {};
    return [&what, &param = it->second, key] { return unsignedParameter(what, param, key); };
  };
  view.byte_size = integer(kShmByteSizeParameter);
  view.offset = integer(kShmOffsetParameter);
  return checkShmParameters(what, view, registry);
}

std::string requestPrefix(const std::string &model, const std::string &id) {
  std::string s = "model '" + model + "'";
  if (!id.empty())
    s += ", request '" + id + "'";
  return s;
}

Status decodeRequestBody(const inference::ModelInferRequest &msg, const DecodeOptions &options,
                         DecodedInferRequest &decoded) {
  InferRequest &out = decoded.request;
  // raw_input_contents holds, in order, the inputs whose data is not in shared memory.
  int in_shm = 0;
  for (const auto &in : msg.inputs())
    in_shm += in.parameters().count(kShmRegionParameter) ? 1 : 0;
  const int inline_inputs = msg.inputs_size() - in_shm;
  bool raw = msg.raw_input_contents_size() > 0;
  if (raw && msg.raw_input_contents_size() != inline_inputs)
    return invalidArgument() << "request has " << msg.raw_input_contents_size()
                             << " raw_input_contents entries for " << inline_inputs << " inputs"
                             << (in_shm ? " not in shared memory" : "");
  std::set<std::string> seen;
  int raw_index = 0;
  uint64_t shm_bytes = 0; // never above the limit, so it cannot overflow
  for (int i = 0; i < msg.inputs_size(); ++i) {
    const auto &in = msg.inputs(i);
    if (in.name().empty())
      return invalidArgument() << "input #" << i << " has no name";
    std::string what = inputWhat(in.name());
    if (!seen.insert(in.name()).second)
      return invalidArgument() << what << " appears more than once";
    RS_RETURN_IF_ERROR(checkTensorParameters(what, in.parameters()));
    RS_ASSIGN_OR_RETURN(std::optional<SharedMemoryRef> shm,
                        sharedMemoryParameters(what, in.parameters(), options.shared_memory));
    Result<WireTensorLayout> checked = checkWireTensor(
        what, in.datatype(), {in.shape().data(), static_cast<size_t>(in.shape_size())});
    if (!checked.isOk())
      return dtypeFromWireName(in.datatype())
                 ? checked.status()
                 : withDatatypes(checked.status(), options, in.name(), in.datatype());
    const WireTensorLayout &layout = *checked;
    if (shm) {
      if (totalValues(in.contents()) != 0)
        return invalidArgument() << what
                                 << ": typed contents must be empty when the data is in shared "
                                    "memory";
      RS_ASSIGN_OR_RETURN(NamedTensor t,
                          readSharedMemoryTensor(options, in.name(), layout, *shm, shm_bytes));
      out.inputs.push_back(std::move(t));
      continue;
    }
    const std::string *raw_data = raw ? &msg.raw_input_contents(raw_index++) : nullptr;
    RS_ASSIGN_OR_RETURN(NamedTensor t, decodeNamedTensor(in.name(), what, layout, in.contents(),
                                                         raw_data, options.message_owner));
    out.inputs.push_back(std::move(t));
  }
  seen.clear();
  for (int i = 0; i < msg.outputs_size(); ++i) {
    const auto &o = msg.outputs(i);
    if (o.name().empty())
      return invalidArgument() << "requested output #" << i << " has no name";
    std::string what = outputWhat(o.name());
    if (!seen.insert(o.name()).second)
      return invalidArgument() << what << " is requested more than once";
    RS_RETURN_IF_ERROR(checkTensorParameters(what, o.parameters()));
    RS_ASSIGN_OR_RETURN(std::optional<SharedMemoryRef> shm,
                        sharedMemoryParameters(what, o.parameters(), options.shared_memory));
    if (shm) {
      RS_ASSIGN_OR_RETURN(SharedMemoryOutput bound,
                          bindSharedMemoryOutput(*options.shared_memory,
                                                 options.shared_memory_owner, o.name(), *shm));
      decoded.shared_memory_outputs.push_back(std::move(bound));
    }
    out.requested_outputs.push_back(o.name());
  }
  auto timeout = msg.parameters().find(kTimeoutParameter);
  if (timeout != msg.parameters().end()) {
    const InferParameter &p = timeout->second;
    if (p.has_int64_param())
      out.deadline = deadlineAfter(p.int64_param(), options.now);
    else if (p.has_uint64_param())
      out.deadline = deadlineAfter(p.uint64_param() > static_cast<uint64_t>(INT64_MAX)
                                       ? INT64_MAX
                                       : static_cast<int64_t>(p.uint64_param()),
                                   options.now);
    else
      return invalidArgument() << "parameter '" << kTimeoutParameter << "' must be an integer";
  }
  return Status::ok();
}

/// Appends `t`'s bytes (a BYTES tensor's serialized form) as the next raw contents entry.
void addRawContents(const NamedTensor &t, google::protobuf::RepeatedPtrField<std::string> *raw) {
  std::string *entry = raw->Add();
  if (t.isBytes()) {
    t.bytes->appendSerialized(*entry);
    return;
  }
  auto bytes = t.tensor.bytes();
  entry->assign(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

void setShape(google::protobuf::RepeatedField<int64_t> *dst, const Shape &shape) {
  dst->Reserve(static_cast<int>(shape.size()));
  for (int64_t d : shape)
    dst->Add(d);
}

} // namespace

Result<InferRequest> decodeModelInferRequest(const inference::ModelInferRequest &msg,
                                             Clock::time_point now) {
  DecodeOptions options;
  options.now = now;
  RS_ASSIGN_OR_RETURN(DecodedInferRequest decoded, decodeModelInferRequest(msg, options));
  return std::move(decoded.request);
}

Result<DecodedInferRequest> decodeModelInferRequest(const inference::ModelInferRequest &msg,
                                                    const DecodeOptions &options) {
  if (msg.model_name().empty())
    return invalidArgument() << "model name is empty";
  DecodedInferRequest decoded;
  InferRequest &req = decoded.request;
  req.model_name = msg.model_name();
  req.model_version = msg.model_version();
  req.id = msg.id();
  Status s = decodeRequestBody(msg, options, decoded);
  if (!s.isOk())
    return s.withPrefix(requestPrefix(msg.model_name(), msg.id()));
  return decoded;
}

void encodeModelInferResponse(const InferResponse &response, inference::ModelInferResponse *out) {
  encodeModelInferResponse(response, {}, out);
}

void encodeModelInferResponse(const InferResponse &response,
                              std::span<const SharedMemoryOutput> shared_memory,
                              inference::ModelInferResponse *out) {
  out->Clear();
  out->set_model_name(response.model_name);
  out->set_model_version(response.model_version);
  out->set_id(response.id);
  for (const NamedTensor &o : response.outputs) {
    auto *t = out->add_outputs();
    t->set_name(o.name);
    t->set_datatype(std::string(o.datatype()));
    setShape(t->mutable_shape(), o.shape());
    const SharedMemoryOutput *shm = nullptr;
    for (const SharedMemoryOutput &s : shared_memory)
      if (s.name == o.name)
        shm = &s;
    if (shm) {
      auto &params = *t->mutable_parameters();
      params[kShmRegionParameter].set_string_param(shm->ref.region);
      params[kShmByteSizeParameter].set_int64_param(static_cast<int64_t>(o.wireByteSize()));
      if (shm->ref.offset != 0)
        params[kShmOffsetParameter].set_int64_param(static_cast<int64_t>(shm->ref.offset));
      out->add_raw_output_contents();
      continue;
    }
    addRawContents(o, out->mutable_raw_output_contents());
  }
}

void encodeServerMetadata(const ServerMetadata &metadata, inference::ServerMetadataResponse *out) {
  out->Clear();
  out->set_name(metadata.name);
  out->set_version(metadata.version);
  for (const std::string &e : metadata.extensions)
    out->add_extensions(e);
}

void encodeModelMetadata(const ModelMetadata &metadata, inference::ModelMetadataResponse *out) {
  out->Clear();
  out->set_name(metadata.name);
  for (const std::string &v : metadata.versions)
    out->add_versions(v);
  out->set_platform(metadata.platform);
  auto add = [](const TensorSpec &spec, auto *t) {
    t->set_name(spec.name);
    t->set_datatype(std::string(dtypeWireName(spec.dtype)));
    setShape(t->mutable_shape(), spec.shape);
  };
  for (const auto &spec : metadata.inputs)
    add(spec, out->add_inputs());
  for (const auto &spec : metadata.outputs)
    add(spec, out->add_outputs());
}

inference::ModelInferRequest encodeModelInferRequest(const InferRequest &request) {
  inference::ModelInferRequest msg;
  msg.set_model_name(request.model_name);
  msg.set_model_version(request.model_version);
  msg.set_id(request.id);
  for (const NamedTensor &in : request.inputs) {
    auto *t = msg.add_inputs();
    t->set_name(in.name);
    t->set_datatype(std::string(in.datatype()));
    setShape(t->mutable_shape(), in.shape());
    addRawContents(in, msg.mutable_raw_input_contents());
  }
  for (const std::string &name : request.requested_outputs)
    msg.add_outputs()->set_name(name);
  return msg;
}

Result<InferResponse> decodeModelInferResponse(const inference::ModelInferResponse &msg) {
  InferResponse resp;
  resp.model_name = msg.model_name();
  resp.model_version = msg.model_version();
  resp.id = msg.id();
  bool raw = msg.raw_output_contents_size() > 0;
  if (raw && msg.raw_output_contents_size() != msg.outputs_size())
    return invalidArgument() << "response has " << msg.raw_output_contents_size()
                             << " raw_output_contents entries for " << msg.outputs_size()
                             << " outputs";
  for (int i = 0; i < msg.outputs_size(); ++i) {
    const auto &o = msg.outputs(i);
    std::string what = outputWhat(o.name());
    RS_ASSIGN_OR_RETURN(WireTensorLayout layout,
                        checkWireTensor(what, o.datatype(),
                                        {o.shape().data(), static_cast<size_t>(o.shape_size())}));
    RS_ASSIGN_OR_RETURN(NamedTensor t,
                        decodeNamedTensor(o.name(), what, layout, o.contents(),
                                          raw ? &msg.raw_output_contents(i) : nullptr, nullptr));
    resp.outputs.push_back(std::move(t));
  }
  return resp;
}

} // namespace rs::protocol
