//===- ir/bytecode_stream.cc - Primitive encodings of MLIR bytecode -------===//
//
// PrefixVarInt, zig-zag signed varints, flagged varints, NUL-terminated strings, blobs
// and alignment padding (vhlo-bytecode.md 1.2-1.6; mlir/lib/Bytecode/Reader/
// BytecodeReader.cpp, EncodingReader). Every read checks the bytes left first.
//
//===----------------------------------------------------------------------===//
#include "ir/bytecode_impl.h"

#include <bit>
#include <cstring>

namespace rs::ir::bc {

std::string_view sectionName(uint8_t id) {
  switch (id) {
  case kStringSection: return "String";
  case kDialectSection: return "Dialect";
  case kAttrTypeSection: return "AttrType";
  case kAttrTypeOffsetSection: return "AttrTypeOffset";
  case kIRSection: return "IR";
  case kResourceSection: return "Resource";
  case kResourceOffsetSection: return "ResourceOffset";
  case kDialectVersionsSection: return "DialectVersions";
  case kPropertiesSection: return "Properties";
  default: return "unknown";
  }
}

Status ByteReader::errorAt(size_t offset, std::string_view what) const {
  return invalidArgument() << file_ << ": invalid portable artifact: byte " << offset << " ("
                           << section_ << " section): " << what;
}

Status ByteReader::readByte(uint8_t *out) {
  if (pos_ >= end_)
    return error("expected a byte, got the end of the section");
  *out = data_[pos_++];
  return Status::ok();
}

Status ByteReader::readVarInt(uint64_t *out) {
  size_t start = pos_;
  uint8_t first = 0;
  RS_RETURN_IF_ERROR(readByte(&first));
  if (first & 1) {
    *out = first >> 1;
    return Status::ok();
  }
  // The number of trailing zero bits is the number of bytes that follow; a first byte of
  // 0 means eight more bytes holding the raw value.
  int extra = first == 0 ? 8 : std::countr_zero(first);
  if (remaining() < static_cast<size_t>(extra))
    return errorAt(start, "varint runs past the end of the section");
  uint64_t v = 0;
  if (first == 0) {
    for (int i = 0; i < 8; ++i)
      v |= static_cast<uint64_t>(data_[pos_ + static_cast<size_t>(i)]) << (8 * i);
    pos_ += 8;
    *out = v;
    return Status::ok();
  }
  v = first;
  for (int i = 0; i < extra; ++i)
    v |= static_cast<uint64_t>(data_[pos_ + static_cast<size_t>(i)]) << (8 * (i + 1));
  pos_ += static_cast<size_t>(extra);
  *out = v >> (extra + 1);
  return Status::ok();
}

Status ByteReader::readSignedVarInt(int64_t *out) {
  uint64_t u = 0;
  RS_RETURN_IF_ERROR(readVarInt(&u));
  *out = static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
  return Status::ok();
}

Status ByteReader::readVarIntWithFlag(uint64_t *value, bool *flag) {
  uint64_t raw = 0;
  RS_RETURN_IF_ERROR(readVarInt(&raw));
  *value = raw >> 1;
  *flag = (raw & 1) != 0;
  return Status::ok();
}

Status ByteReader::readCount(uint64_t *out, size_t min_item_bytes) {
  size_t start = pos_;
  RS_RETURN_IF_ERROR(readVarInt(out));
  if (min_item_bytes > 0 && *out > remaining() / min_item_bytes)
    return errorAt(start, "count " + std::to_string(*out) + " is larger than the " +
                              std::to_string(remaining()) + " bytes left allow");
  return Status::ok();
}

Status ByteReader::readBytes(size_t n, std::span<const uint8_t> *out) {
  if (n > remaining())
    return error("expected " + std::to_string(n) + " bytes, " + std::to_string(remaining()) +
                 " left in the section");
  *out = data_.subspan(pos_, n);
  pos_ += n;
  return Status::ok();
}

Status ByteReader::readCString(std::string_view *out) {
  const void *nul = std::memchr(data_.data() + pos_, 0, remaining());
  if (!nul)
    return error("expected a NUL-terminated string, got the end of the section");
  size_t len = static_cast<size_t>(static_cast<const uint8_t *>(nul) - (data_.data() + pos_));
  *out = std::string_view(reinterpret_cast<const char *>(data_.data() + pos_), len);
  pos_ += len + 1;
  return Status::ok();
}

Status ByteReader::alignTo(uint64_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    return error("alignment " + std::to_string(alignment) + " is not a power of two");
  while (pos_ % alignment != 0) {
    uint8_t pad = 0;
    RS_RETURN_IF_ERROR(readByte(&pad));
    if (pad != 0xCB)
      return errorAt(pos_ - 1, "expected alignment padding 0xCB, got 0x" +
                                   std::string(1, "0123456789abcdef"[pad >> 4]) +
                                   std::string(1, "0123456789abcdef"[pad & 15]));
  }
  return Status::ok();
}

Status ByteReader::sub(size_t n, std::string_view section, ByteReader *out) {
  if (n > remaining())
    return error("length " + std::to_string(n) + " runs past the end (" +
                 std::to_string(remaining()) + " bytes left)");
  *out = ByteReader(file_, data_, pos_, pos_ + n, section);
  pos_ += n;
  return Status::ok();
}

Status ByteReader::readBlob(std::span<const uint8_t> *out) {
  uint64_t n = 0;
  RS_RETURN_IF_ERROR(readVarInt(&n));
  if (n > remaining())
    return error("blob of " + std::to_string(n) + " bytes runs past the end (" +
                 std::to_string(remaining()) + " bytes left)");
  return readBytes(static_cast<size_t>(n), out);
}

Status ByteReader::expectEnd(std::string_view what) const {
  if (pos_ == end_)
    return Status::ok();
  return error(std::string(what) + ": " + std::to_string(end_ - pos_) + " bytes left over");
}

} // namespace rs::ir::bc
