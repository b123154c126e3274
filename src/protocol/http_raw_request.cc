//===- protocol/http_raw_request.cc - Triton's raw binary HTTP request ------===//
#include "protocol/http_raw_request.h"

#include "protocol/wire_tensor.h"

#include <charconv>

namespace rs::protocol {
namespace {

/// The request's shape for `spec` and a body of `body_bytes` (rules in the header).
Result<Shape> rawInputShape(const TensorSpec &spec, uint64_t body_bytes) {
  const std::string what = inputWhat(spec.name);
  Shape shape = spec.shape;
  std::optional<size_t> variable;
  int64_t step = dtypeSize(spec.dtype); // bytes of one step along the variable axis
  for (size_t d = 0; d < shape.size(); ++d) {
    if (spec.batch_axis && static_cast<size_t>(*spec.batch_axis) == d) {
      shape[d] = 1;
      continue;
    }
    if (shape[d] >= 0) {
      // The model's dims are small (they come from its manifest), but a product is checked.
      if (shape[d] != 0 && step > INT64_MAX / shape[d])
        return invalidArgument() << what << ": shape " << shapeToString(spec.shape)
                                 << " is too large for a raw binary request";
      step *= shape[d];
      continue;
    }
    if (variable && spec.batch_axis)
      return invalidArgument() << what << ": a raw binary request needs at most one variable "
                               << "axis besides the batch axis, but the model's shape is "
                               << shapeToString(spec.shape);
    if (variable) // metadata without a batch axis (the gateway's): every -1 counts
      return invalidArgument() << what << ": a raw binary request needs at most one variable "
                               << "axis here, where the model's batch axis is not known, but "
                               << "the model's shape is " << shapeToString(spec.shape)
                               << " (send it to a worker, or as a JSON or binary-extension "
                               << "request)";
    variable = d;
  }
  if (!variable) {
    if (body_bytes != static_cast<uint64_t>(step))
      return invalidArgument() << what << ": the raw binary request body has " << body_bytes
                               << " bytes but shape " << shapeToString(shape) << " of "
                               << dtypeWireName(spec.dtype) << " needs " << step << " bytes";
    return shape;
  }
  if (step == 0 || body_bytes == 0 || body_bytes % static_cast<uint64_t>(step) != 0)
    return invalidArgument() << what << ": the raw binary request body has " << body_bytes
                             << " bytes, which is no positive whole number of the " << step
                             << "-byte steps along axis " << *variable << " of the model's shape "
                             << shapeToString(spec.shape) << " of " << dtypeWireName(spec.dtype);
  shape[*variable] = static_cast<int64_t>(body_bytes / static_cast<uint64_t>(step));
  return shape;
}

} // namespace

bool isRawBinaryRequest(std::optional<std::string_view> header_length) {
  if (!header_length || header_length->empty())
    return false;
  uint64_t n = 1;
  const char *end = header_length->data() + header_length->size();
  auto r = std::from_chars(header_length->data(), end, n);
  return r.ec == std::errc() && r.ptr == end && n == 0;
}

Result<HttpInferRequest> decodeRawBinaryInferRequest(const ModelRef &model,
                                                     const ModelMetadata &metadata,
                                                     std::string_view body) {
  const std::string prefix = "model '" + model.name + "'";
  if (metadata.inputs.size() != 1)
    return invalidArgument() << prefix << ": a raw binary request ("
                             << kInferenceHeaderContentLength
                             << ": 0) needs a model of one input; this model has "
                             << metadata.inputs.size();
  const TensorSpec &spec = metadata.inputs[0];
  if (dtypeWireName(spec.dtype).empty())
    return invalidArgument() << prefix << ": " << inputWhat(spec.name)
                             << " has no datatype a raw binary request can carry";
  Result<Shape> shape = rawInputShape(spec, body.size());
  if (!shape.isOk())
    return shape.status().withPrefix(prefix);
  HttpInferRequest out;
  out.request.model_name = model.name;
  out.request.model_version = model.version;
  out.request.inputs.push_back(
      {spec.name, Tensor::copyOf(spec.dtype, std::move(*shape),
                                 {reinterpret_cast<const uint8_t *>(body.data()), body.size()})});
  out.output_encoding.binary_by_default = true;
  return out;
}

} // namespace rs::protocol
