//===- protocol/grpc_codec.cc - KServe V2 gRPC messages <-> request types ---===//
//
// The server side of protocol/grpc_codec.h: ModelInferRequest decoded and validated
// (inputs from raw or typed contents or shared memory, requested outputs, request
// parameters), ModelInferResponse and metadata encoded. Tensor contents are
// grpc_tensor_contents.cc's (protocol/grpc_codec_impl.h).
//
//===----------------------------------------------------------------------===//
#include "protocol/grpc_codec.h"

#include "protocol/deadline.h"
#include "protocol/grpc_codec_impl.h"
#include "protocol/wire_tensor.h"

#include <limits>
#include <optional>
#include <set>
#include <utility>

namespace rs::protocol {
namespace {

using namespace grpc_codec_detail;
using google::protobuf::Map;
using inference::InferParameter;

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
    t->set_datatype(std::string(spec.datatype()));
    setShape(t->mutable_shape(), spec.shape);
  };
  for (const auto &spec : metadata.inputs)
    add(spec, out->add_inputs());
  for (const auto &spec : metadata.outputs)
    add(spec, out->add_outputs());
}

} // namespace rs::protocol
