//===- protocol/grpc_tensor_contents.cc - gRPC tensor data <-> tensors ------===//
//
// A tensor's data in a KServe V2 gRPC message (protocol/grpc_codec.h, "Tensor Data"): raw
// contents viewed in place or copied, typed contents checked against the datatype's field
// and converted with a range check per value, BYTES from bytes_contents or its serialized
// form; and, the other way, a tensor's shape and raw bytes. Shared by both sides of the
// codec (protocol/grpc_codec_impl.h).
//
//===----------------------------------------------------------------------===//
#include "protocol/grpc_codec.h"

#include "protocol/grpc_codec_impl.h"

#include <array>
#include <type_traits>
#include <utility>

namespace rs::protocol::grpc_codec_detail {

using google::protobuf::RepeatedField;
using inference::InferTensorContents;

namespace {

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

} // namespace

int64_t totalValues(const InferTensorContents &c) {
  int64_t n = 0;
  for (int64_t s : fieldSizes(c))
    n += s;
  return n;
}

namespace {

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

} // namespace

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

} // namespace rs::protocol::grpc_codec_detail
