//===- protocol/bytes_tensor.h - KServe V2 BYTES tensors -------------------===//
//
// A tensor of datatype BYTES (KServe V2 "Tensor Data Types": variable-length byte strings,
// each at most 2^32-1 bytes): a row-major shape and one byte string per element, held as
// one buffer of the elements back to back and num_elements + 1 offsets into it, so a
// tensor of many short strings costs no allocation per element. No executable takes
// BYTES; the protocol carries such tensors to whatever consumes them (a hook) and back.
//
// The serialized form, the one layout shared by gRPC raw_input_contents /
// raw_output_contents, the HTTP binary tensor data extension and system shared memory
// (Triton docs/protocol/extension_binary_data.md): for each element in row-major order a
// 4-byte little-endian unsigned length, then that many bytes; nothing between elements
// and nothing after the last.
//
// parseSerialized() checks every length prefix against the bytes that remain before it
// reads them, and the element count against the shape: nothing is read outside the
// given span, and the allocation is bounded by the span's size.
//
// Thread safety: plain values; concurrent readers are fine.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/wire_tensor.h"
#include "support/status.h"
#include "support/tensor.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rs::protocol {

class BytesTensor {
public:
  /// An empty tensor of `shape` to which exactly elementCount(shape) elements are to be
  /// appended (append()); the shape must be valid (wire_tensor.h).
  explicit BytesTensor(Shape shape);
  /// A tensor of `shape` holding `elements` (their count must equal the shape's).
  static BytesTensor fromElements(Shape shape, std::span<const std::string_view> elements);

  /// Parses the serialized form (file comment) of tensor `what` ("input 'text'") with
  /// `layout` (a BYTES layout). InvalidArgument, naming the tensor and the element, when a
  /// length prefix is cut short, a length runs past the end, there are fewer or more
  /// elements than the shape holds, or bytes follow the last element.
  static Result<BytesTensor> parseSerialized(std::string_view what, const WireTensorLayout &layout,
                                             std::string_view serialized);

  const Shape &shape() const { return shape_; }
  /// The elements appended so far (the shape's count once complete).
  int64_t numElements() const { return static_cast<int64_t>(offsets_.size()) - 1; }
  /// Element `i` (0 <= i < numElements()).
  std::string_view element(int64_t i) const;
  /// Appends the next element in row-major order.
  void append(std::string_view element);

  /// Bytes of the serialized form: 4 per element plus the elements' bytes.
  uint64_t serializedSize() const;
  /// Appends the serialized form to `out`.
  void appendSerialized(std::string &out) const;
  /// The serialized form.
  std::string serialized() const;

  bool operator==(const BytesTensor &other) const = default;

private:
  Shape shape_;
  std::string data_;              // the elements back to back
  std::vector<uint64_t> offsets_; // element i is data_[offsets_[i], offsets_[i + 1])
};

} // namespace rs::protocol
