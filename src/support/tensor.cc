//===- support/tensor.cc - Host tensors ------------------------------------===//
#include "support/tensor.h"

#include <algorithm>
#include <cassert>
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

std::vector<int64_t> rowMajorStrides(std::span<const int64_t> shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    s[i - 1] = s[i] * shape[i];
  return s;
}

std::string shapeToString(std::span<const int64_t> shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? "," : "") << shape[i];
  os << ']';
  return os.str();
}

Tensor Tensor::allocate(DType dtype, Shape shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  size_t n = static_cast<size_t>(t.byteSize());
  // 64-byte alignment so kernels may use aligned vector loads.
  auto *block = static_cast<uint8_t *>(::operator new[](n ? n : 1, std::align_val_t(64)));
  t.owner_ = std::shared_ptr<const void>(block, [](const void *p) {
    ::operator delete[](const_cast<void *>(p), std::align_val_t(64));
  });
  t.data_ = block;
  return t;
}

Tensor Tensor::zeros(DType dtype, Shape shape) {
  Tensor t = allocate(dtype, std::move(shape));
  std::memset(t.mutableData(), 0, static_cast<size_t>(t.byteSize()));
  return t;
}

Tensor Tensor::copyOf(DType dtype, Shape shape, std::span<const uint8_t> bytes) {
  Tensor t = allocate(dtype, std::move(shape));
  const size_t size = static_cast<size_t>(t.byteSize());
  // An empty span may carry a null pointer, which memcpy must not see even for 0 bytes.
  const size_t n = std::min<size_t>(bytes.size(), size);
  if (n > 0)
    std::memcpy(t.mutableData(), bytes.data(), n);
  std::memset(t.mutableData() + n, 0, size - n);
  return t;
}

Tensor Tensor::filled(DType dtype, Shape shape, std::span<const uint8_t> element) {
  Tensor t = allocate(dtype, std::move(shape));
  const int64_t esize = dtypeSize(dtype);
  const int64_t n = t.numElements();
  if (n > 0) {
    std::memset(t.mutableData(), 0, static_cast<size_t>(esize));
    std::memcpy(t.mutableData(), element.data(), std::min<size_t>(element.size(), esize));
    fillSplat(t.mutableData(), esize, n);
  }
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

Tensor Tensor::subview(int64_t byte_offset, Shape shape) const {
  Tensor t = *this;
  t.shape_ = std::move(shape);
  t.data_ = data_ + byte_offset;
  assert(byte_offset >= 0 && byte_offset + t.byteSize() <= byteSize());
  return t;
}

void fillSplat(uint8_t *data, int64_t element_size, int64_t count) {
  int64_t done = count > 0 ? 1 : 0;
  while (done < count) {
    int64_t chunk = std::min(done, count - done);
    std::memcpy(data + done * element_size, data, static_cast<size_t>(chunk * element_size));
    done += chunk;
  }
}

} // namespace rs
