//===- support/tensor.h - Host tensors -------------------------------------===//
//
// A Tensor is a dtype, a row-major shape and a byte buffer on the host. The bytes are
// either owned (a heap block) or a read-only view into memory kept alive by a shared
// owner (an mmaped safetensors file), so weights are used in place without a copy.
// Copying a Tensor shares the storage; mutableData() is only valid on owned tensors
// that the caller created. Thread safety: concurrent readers are fine.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/dtype.h"
#include "support/status.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace rs {

using Shape = std::vector<int64_t>;

/// Product of dims, or an error if a dim is negative or the product overflows int64.
Result<int64_t> checkedElementCount(std::span<const int64_t> shape);
/// Product of dims (caller guarantees validity).
int64_t elementCount(std::span<const int64_t> shape);
/// "[1,8,8,1]".
std::string shapeToString(std::span<const int64_t> shape);
/// Row-major strides of `shape`, in elements (the last axis has stride 1).
std::vector<int64_t> rowMajorStrides(std::span<const int64_t> shape);
/// Copies the first `element_size` bytes of `data` over all `count` elements (a splat),
/// by doubling copies.
void fillSplat(uint8_t *data, int64_t element_size, int64_t count);

class Tensor {
public:
  Tensor() = default;

  /// A zero-filled owned tensor. Shape must be valid (non-negative, no overflow).
  static Tensor zeros(DType dtype, Shape shape);
  /// An owned tensor holding a copy of `bytes` (size must equal shape bytes).
  static Tensor copyOf(DType dtype, Shape shape, std::span<const uint8_t> bytes);
  /// An owned tensor whose every element is `element` (dtypeSize(dtype) bytes).
  static Tensor filled(DType dtype, Shape shape, std::span<const uint8_t> element);
  /// A view of `data` (byteSize bytes) kept alive by `owner`.
  static Tensor view(DType dtype, Shape shape, const uint8_t *data,
                     std::shared_ptr<const void> owner);

  DType dtype() const { return dtype_; }
  const Shape &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numElements() const { return elementCount(shape_); }
  int64_t byteSize() const { return numElements() * dtypeSize(dtype_); }

  const uint8_t *data() const { return data_; }
  uint8_t *mutableData() { return const_cast<uint8_t *>(data_); }
  std::span<const uint8_t> bytes() const { return {data_, static_cast<size_t>(byteSize())}; }
  template <typename T> const T *dataAs() const { return reinterpret_cast<const T *>(data_); }
  template <typename T> T *mutableDataAs() { return reinterpret_cast<T *>(mutableData()); }

  /// Same bytes, another shape with the same element count.
  Tensor reshaped(Shape shape) const;
  /// A view of this tensor's bytes from `byte_offset` on, holding `shape` of the same dtype,
  /// that shares this tensor's owner (no copy). The caller keeps it inside the bytes:
  /// byte_offset + the view's byte size <= byteSize().
  Tensor subview(int64_t byte_offset, Shape shape) const;
  bool valid() const { return dtype_ != DType::kInvalid; }

private:
  /// An owned tensor of the right size whose bytes are not yet written.
  static Tensor allocate(DType dtype, Shape shape);

  DType dtype_ = DType::kInvalid;
  Shape shape_;
  const uint8_t *data_ = nullptr;
  std::shared_ptr<const void> owner_;
};

} // namespace rs
