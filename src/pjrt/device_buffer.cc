//===- pjrt/device_buffer.cc - Device buffers and host<->device transfers -===//
//
// The dtype <-> PJRT_Buffer_Type mapping, DeviceBuffer's lifetime and read-back, and the
// client's side of a transfer: uploading a host tensor and wrapping a buffer the plugin
// returned.
//
//===----------------------------------------------------------------------===//
#include "pjrt/client.h"

#include <utility>

namespace rs::pjrt {

using namespace capi;

PJRT_Buffer_Type toPjrtType(DType dtype) {
  switch (dtype) {
  case DType::kBool: return PJRT_Buffer_Type_PRED;
  case DType::kI8: return PJRT_Buffer_Type_S8;
  case DType::kI16: return PJRT_Buffer_Type_S16;
  case DType::kI32: return PJRT_Buffer_Type_S32;
  case DType::kI64: return PJRT_Buffer_Type_S64;
  case DType::kU8: return PJRT_Buffer_Type_U8;
  case DType::kU16: return PJRT_Buffer_Type_U16;
  case DType::kU32: return PJRT_Buffer_Type_U32;
  case DType::kU64: return PJRT_Buffer_Type_U64;
  case DType::kF16: return PJRT_Buffer_Type_F16;
  case DType::kBF16: return PJRT_Buffer_Type_BF16;
  case DType::kF32: return PJRT_Buffer_Type_F32;
  case DType::kF64: return PJRT_Buffer_Type_F64;
  case DType::kComplex64: return PJRT_Buffer_Type_C64;
  case DType::kComplex128: return PJRT_Buffer_Type_C128;
  default: break; // kInvalid; the sub-byte ints and minifloats never reach a bundle's I/O
  }
  return PJRT_Buffer_Type_INVALID;
}

DType fromPjrtType(PJRT_Buffer_Type type) {
  switch (type) {
  case PJRT_Buffer_Type_PRED: return DType::kBool;
  case PJRT_Buffer_Type_S8: return DType::kI8;
  case PJRT_Buffer_Type_S16: return DType::kI16;
  case PJRT_Buffer_Type_S32: return DType::kI32;
  case PJRT_Buffer_Type_S64: return DType::kI64;
  case PJRT_Buffer_Type_U8: return DType::kU8;
  case PJRT_Buffer_Type_U16: return DType::kU16;
  case PJRT_Buffer_Type_U32: return DType::kU32;
  case PJRT_Buffer_Type_U64: return DType::kU64;
  case PJRT_Buffer_Type_F16: return DType::kF16;
  case PJRT_Buffer_Type_BF16: return DType::kBF16;
  case PJRT_Buffer_Type_F32: return DType::kF32;
  case PJRT_Buffer_Type_F64: return DType::kF64;
  case PJRT_Buffer_Type_C64: return DType::kComplex64;
  case PJRT_Buffer_Type_C128: return DType::kComplex128;
  default: break;
  }
  return DType::kInvalid;
}

//===----------------------------------------------------------------------===//
// DeviceBuffer
//===----------------------------------------------------------------------===//

DeviceBuffer::DeviceBuffer(std::shared_ptr<const Client> client, PJRT_Buffer *raw, DType dtype,
                           Shape shape)
    : client_(std::move(client)), raw_(raw), dtype_(dtype), shape_(std::move(shape)) {}

DeviceBuffer::DeviceBuffer(DeviceBuffer &&o) noexcept
    : client_(std::move(o.client_)), raw_(std::exchange(o.raw_, nullptr)), dtype_(o.dtype_),
      shape_(std::move(o.shape_)) {}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&o) noexcept {
  if (this != &o) {
    reset();
    client_ = std::move(o.client_);
    raw_ = std::exchange(o.raw_, nullptr);
    dtype_ = o.dtype_;
    shape_ = std::move(o.shape_);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { reset(); }

void DeviceBuffer::reset() {
  if (raw_ != nullptr) {
    PJRT_Buffer_Destroy_Args args{};
    args.struct_size = sizeof args;
    args.buffer = raw_;
    (void)client_->plugin().call(Slot::kBufferDestroy, &args, "PJRT_Buffer_Destroy");
    raw_ = nullptr;
  }
}

Result<Tensor> DeviceBuffer::toHost() const {
  if (raw_ == nullptr)
    return failedPrecondition() << "device buffer is empty";
  const Plugin &plugin = client_->plugin();
  PJRT_Buffer_ToHostBuffer_Args query{};
  query.struct_size = sizeof query;
  query.src = raw_;
  RS_RETURN_IF_ERROR(plugin.call(Slot::kBufferToHostBuffer, &query, "PJRT_Buffer_ToHostBuffer"));
  plugin.destroyEvent(query.event);
  const int64_t expected = byteSize();
  if (query.dst_size != static_cast<size_t>(expected))
    return internalError() << "device buffer " << dtypeMlirName(dtype_) << shapeToString(shape_)
                           << " has a host size of " << query.dst_size << " bytes, expected "
                           << expected << " (non-dense layout)";
  Tensor out = Tensor::zeros(dtype_, shape_);
  if (expected == 0)
    return out;
  PJRT_Buffer_ToHostBuffer_Args args{};
  args.struct_size = sizeof args;
  args.src = raw_;
  args.dst = out.mutableData();
  args.dst_size = static_cast<size_t>(expected);
  RS_RETURN_IF_ERROR(plugin.call(Slot::kBufferToHostBuffer, &args, "PJRT_Buffer_ToHostBuffer"));
  RS_RETURN_IF_ERROR(client_->awaitEvent(args.event, "PJRT_Buffer_ToHostBuffer"));
  return out;
}

//===----------------------------------------------------------------------===//
// Client: uploads and wrapped buffers
//===----------------------------------------------------------------------===//

Result<DeviceBuffer> Client::wrapBuffer(PJRT_Buffer *raw) const {
  // Own it first: a failed query below must still free the buffer.
  DeviceBuffer buffer(shared_from_this(), raw, DType::kInvalid, {});
  PJRT_Buffer_ElementType_Args type{};
  type.struct_size = sizeof type;
  type.buffer = raw;
  RS_RETURN_IF_ERROR(plugin_->call(Slot::kBufferElementType, &type, "PJRT_Buffer_ElementType"));
  PJRT_Buffer_Dimensions_Args dims{};
  dims.struct_size = sizeof dims;
  dims.buffer = raw;
  RS_RETURN_IF_ERROR(plugin_->call(Slot::kBufferDimensions, &dims, "PJRT_Buffer_Dimensions"));
  buffer.dtype_ = fromPjrtType(type.type);
  if (buffer.dtype_ == DType::kInvalid)
    return unimplemented() << "device buffer has PJRT element type " << static_cast<int>(type.type)
                           << ", which this server does not support";
  buffer.shape_.assign(dims.dims, dims.dims + dims.num_dims);
  return buffer;
}

Result<DeviceBuffer> Client::startUpload(const Tensor &tensor, PJRT_Event **done,
                                         const void *data) const {
  *done = nullptr;
  const PJRT_Buffer_Type type = toPjrtType(tensor.dtype());
  if (type == PJRT_Buffer_Type_INVALID)
    return invalidArgument() << "cannot upload a tensor of dtype " << dtypeMlirName(tensor.dtype())
                             << " to the device";
  static const uint8_t kEmpty[8] = {};
  PJRT_Client_BufferFromHostBuffer_Args args{};
  args.struct_size = sizeof args;
  args.client = raw_;
  if (data == nullptr)
    data = tensor.data() != nullptr ? static_cast<const void *>(tensor.data()) : kEmpty;
  args.data = data;
  args.type = type;
  args.dims = tensor.shape().data();
  args.num_dims = tensor.shape().size();
  args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
  args.device = device_raw_;
  RS_RETURN_IF_ERROR(
      plugin_->call(Slot::kClientBufferFromHostBuffer, &args, "PJRT_Client_BufferFromHostBuffer"));
  *done = args.done_with_host_buffer;
  return DeviceBuffer(shared_from_this(), args.buffer, tensor.dtype(), tensor.shape());
}

Result<DeviceBuffer> Client::upload(const Tensor &tensor) const {
  PJRT_Event *done = nullptr;
  auto buffer = startUpload(tensor, &done);
  // The host bytes must stay untouched until the transfer has read them.
  Status st = awaitEvent(done, "PJRT_Client_BufferFromHostBuffer");
  if (!buffer.isOk())
    return buffer.status();
  RS_RETURN_IF_ERROR(st);
  return buffer;
}

} // namespace rs::pjrt
