//===- support/tensor.cc - Host tensors ------------------------------------===//
#include "support/tensor.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace rs {

Result<int64_t> checkedElementCount(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return invalidArgument() << "negative dimension " << d << " in shape "
                               << shapeToString(shape);
    if (d != 0 && n > INT64_MAX / d)
      return invalidArgument() << "shape " << shapeToString(shape) << " overflows int64";
    n *= d;
  }
  return n;
}

int64_t elementCount(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string shapeToString(std::span<const int64_t> shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? "," : "") << shape[i];
  os << ']';
  return os.str();
}

Tensor Tensor::zeros(DType dtype, Shape shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  size_t n = static_cast<size_t>(t.byteSize());
  // 64-byte alignment so kernels may use aligned vector loads.
  auto *block = static_cast<uint8_t *>(::operator new[](n ? n : 1, std::align_val_t(64)));
  std::memset(block, 0, n);
  t.owner_ = std::shared_ptr<const void>(block, [](const void *p) {
    ::operator delete[](const_cast<void *>(p), std::align_val_t(64));
  });
  t.data_ = block;
  return t;
}

Tensor Tensor::copyOf(DType dtype, Shape shape, std::span<const uint8_t> bytes) {
  Tensor t = zeros(dtype, std::move(shape));
  // An empty span may carry a null pointer, which memcpy must not see even for 0 bytes.
  if (const size_t n = std::min<size_t>(bytes.size(), t.byteSize()); n > 0)
    std::memcpy(t.mutableData(), bytes.data(), n);
  return t;
}

Tensor Tensor::view(DType dtype, Shape shape, const uint8_t *data,
                    std::shared_ptr<const void> owner) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.data_ = data;
  t.owner_ = std::move(owner);
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

} // namespace rs
