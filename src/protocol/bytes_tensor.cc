//===- protocol/bytes_tensor.cc - KServe V2 BYTES tensors ------------------===//
#include "protocol/bytes_tensor.h"

#include <cassert>

namespace rs::protocol {
namespace {

/// The size of an element's length prefix.
constexpr size_t kPrefixBytes = 4;

uint32_t readLittleEndian32(const char *p) {
  const auto *u = reinterpret_cast<const unsigned char *>(p);
  return uint32_t{u[0]} | uint32_t{u[1]} << 8 | uint32_t{u[2]} << 16 | uint32_t{u[3]} << 24;
}

void appendLittleEndian32(uint32_t v, std::string &out) {
  const char bytes[kPrefixBytes] = {static_cast<char>(v & 0xff), static_cast<char>(v >> 8 & 0xff),
                                    static_cast<char>(v >> 16 & 0xff),
                                    static_cast<char>(v >> 24 & 0xff)};
  out.append(bytes, kPrefixBytes);
}

} // namespace

BytesTensor::BytesTensor(Shape shape) : shape_(std::move(shape)), offsets_{0} {}

BytesTensor BytesTensor::fromElements(Shape shape, std::span<const std::string_view> elements) {
  BytesTensor t(std::move(shape));
  assert(static_cast<int64_t>(elements.size()) == elementCount(t.shape_));
  t.offsets_.reserve(elements.size() + 1);
  for (std::string_view e : elements)
    t.append(e);
  return t;
}

Result<BytesTensor> BytesTensor::parseSerialized(std::string_view what,
                                                 const WireTensorLayout &layout,
                                                 std::string_view serialized) {
  const int64_t want = layout.num_elements;
  // Every element takes at least its prefix: a count the bytes cannot hold is refused
  // before the offsets are reserved.
  if (static_cast<uint64_t>(want) > serialized.size() / kPrefixBytes)
    return invalidArgument() << what << ": BYTES data of " << serialized.size()
                             << " bytes cannot hold the " << want << " elements of "
                             << describeLayout(layout) << " (each takes a 4-byte length first)";
  BytesTensor t(layout.shape);
  t.offsets_.reserve(static_cast<size_t>(want) + 1);
  t.data_.reserve(serialized.size() - static_cast<size_t>(want) * kPrefixBytes);
  size_t pos = 0;
  for (int64_t i = 0; i < want; ++i) {
    const size_t left = serialized.size() - pos;
    if (left < kPrefixBytes)
      return invalidArgument() << what << ": BYTES element " << i << " of "
                               << describeLayout(layout) << ": its 4-byte length is cut short ("
                               << left << " bytes left)";
    const uint32_t len = readLittleEndian32(serialized.data() + pos);
    pos += kPrefixBytes;
    if (len > serialized.size() - pos)
      return invalidArgument() << what << ": BYTES element " << i << " declares " << len
                               << " bytes but only " << serialized.size() - pos << " remain";
    t.append(serialized.substr(pos, len));
    pos += len;
  }
  if (pos != serialized.size())
    return invalidArgument() << what << ": BYTES data has " << serialized.size() - pos
                             << " bytes after its last element (" << describeLayout(layout)
                             << " holds " << want << " elements)";
  return t;
}

std::string_view BytesTensor::element(int64_t i) const {
  const size_t k = static_cast<size_t>(i);
  return std::string_view(data_).substr(offsets_[k], offsets_[k + 1] - offsets_[k]);
}

void BytesTensor::append(std::string_view element) {
  assert(element.size() <= UINT32_MAX); // every source of elements is bounded below 4 GiB
  data_.append(element);
  offsets_.push_back(data_.size());
}

uint64_t BytesTensor::serializedSize() const {
  return static_cast<uint64_t>(numElements()) * kPrefixBytes + data_.size();
}

void BytesTensor::appendSerialized(std::string &out) const {
  out.reserve(out.size() + serializedSize());
  for (int64_t i = 0; i < numElements(); ++i) {
    std::string_view e = element(i);
    appendLittleEndian32(static_cast<uint32_t>(e.size()), out);
    out.append(e);
  }
}

std::string BytesTensor::serialized() const {
  std::string out;
  appendSerialized(out);
  return out;
}

} // namespace rs::protocol
