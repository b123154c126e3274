//===- protocol/inference.cc - Requests, responses and model metadata -------===//
#include "protocol/inference.h"

#include "protocol/wire_tensor.h"

namespace rs::protocol {

NamedTensor NamedTensor::ofBytes(std::string name, BytesTensor bytes) {
  NamedTensor t;
  t.name = std::move(name);
  t.bytes = std::make_shared<const BytesTensor>(std::move(bytes));
  return t;
}

std::string_view NamedTensor::datatype() const {
  return bytes ? kBytesDatatype : dtypeWireName(tensor.dtype());
}

std::string_view TensorSpec::datatype() const {
  return bytes ? kBytesDatatype : dtypeWireName(dtype);
}

uint64_t NamedTensor::wireByteSize() const {
  return bytes ? bytes->serializedSize() : static_cast<uint64_t>(tensor.byteSize());
}

} // namespace rs::protocol
