//===- ir/bytecode_dense.cc - Dense data of attribute entries -------------===//
//
// The raw element data of builtin dense elements and VHLO tensor_v1 attributes
// (vhlo-bytecode.md 3.3: little-endian, row-major; one element for a splat; i1 bit-packed,
// one byte 0xFF a splat of true), and builtin dense arrays. Elements of a type DType holds
// become a Tensor; index and other element types keep MLIR's spelling.
//
//===----------------------------------------------------------------------===//
#include "ir/bytecode_impl.h"
#include "ir/float_bits.h"

#include <cstring>

namespace rs::ir::bc {
namespace {

/// `dense<...>` text for an element type DType cannot hold: integers of index type as a
/// list (MLIR's spelling, e.g. custom_call layouts), anything else as a hex blob.
std::string opaqueDenseText(const Type &type, std::span<const uint8_t> blob, int64_t n) {
  std::string s = "dense<";
  bool index = type.kind == TypeKind::kOther && type.text.find("xindex>") != std::string::npos;
  if (index && (blob.size() == 8 || blob.size() == static_cast<size_t>(n) * 8)) {
    auto at = [&](size_t i) {
      int64_t v = 0;
      std::memcpy(&v, blob.data() + 8 * i, 8);
      return std::to_string(v);
    };
    if (n == 0) {
      // dense<> below
    } else if (blob.size() == 8 && n != 1) {
      s += at(0);
    } else {
      s += '[';
      for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
        if (i)
          s += ", ";
        s += at(i);
      }
      s += ']';
    }
  } else if (!blob.empty()) {
    static const char kHex[] = "0123456789ABCDEF";
    s += "\"0x";
    for (uint8_t b : blob) {
      s += kHex[b >> 4];
      s += kHex[b & 15];
    }
    s += '"';
  }
  return s + "> : " + type.toString();
}

} // namespace

Status Entries::denseElements(ByteReader &r, const Type &type, std::span<const uint8_t> blob,
                              DecodedAttr *out) {
  out->attr = Attribute();
  bool static_shape = true;
  for (int64_t d : type.shape)
    static_shape = static_shape && d >= 0;
  // MLIR's dense elements have a statically shaped tensor (or vector) type; the text
  // parser refuses any other, so the reader does too.
  bool ranked_tensor =
      type.isTensor() || (type.kind == TypeKind::kOther && type.text.starts_with("tensor<") &&
                          !type.text.starts_with("tensor<*"));
  if (!ranked_tensor || !static_shape)
    return r.error("dense elements of type " + type.toString() +
                   ": expected a statically shaped tensor type");
  if (!type.isTensor() || type.element == DType::kInvalid) {
    Result<int64_t> count = checkedElementCount(type.shape);
    int64_t n = count.isOk() ? *count : -1;
    out->attr.kind = AttrKind::kOpaque;
    out->attr.str = opaqueDenseText(type, blob, n);
    out->attr.tensor_type = std::make_shared<Type>(type);
    return Status::ok();
  }
  Result<int64_t> count = checkedElementCount(type.shape);
  int64_t esize = dtypeSize(type.element);
  if (!count.isOk() || *count > (int64_t{1} << 40) / esize)
    return r.error("tensor of type " + type.toString() + " is too large");
  int64_t n = *count;
  size_t size = blob.size();
  Tensor t;
  if (type.element != DType::kBool && size == static_cast<size_t>(n * esize))
    t = Tensor::copyOf(type.element, type.shape, blob);
  else if (type.element != DType::kBool && size == static_cast<size_t>(esize) && n > 0)
    t = Tensor::filled(type.element, type.shape, blob);
  else
    t = Tensor::zeros(type.element, type.shape);
  uint8_t *data = t.mutableData();
  if (type.element == DType::kBool) {
    size_t packed = static_cast<size_t>((n + 7) / 8);
    if (size == 1 && blob[0] == 0xFF) {
      std::memset(data, 1, static_cast<size_t>(n));
    } else if (size == packed && packed != static_cast<size_t>(n)) {
      for (int64_t i = 0; i < n; ++i)
        data[i] = (blob[static_cast<size_t>(i / 8)] >> (i % 8)) & 1;
    } else if (size == static_cast<size_t>(n) || (size == 1 && n > 0)) {
      for (int64_t i = 0; i < n; ++i)
        data[i] = blob[size == 1 ? 0 : static_cast<size_t>(i)] != 0;
    } else {
      return r.error("i1 tensor data has " + std::to_string(size) + " bytes, type " +
                     type.toString() + " needs " + std::to_string(packed) + " (bit-packed)");
    }
  } else if (size == static_cast<size_t>(n * esize) ||
             (size == static_cast<size_t>(esize) && n > 0)) {
    // copied or filled above
  } else {
    return r.error("tensor data has " + std::to_string(size) + " bytes, type " + type.toString() +
                   " needs " + std::to_string(n * esize) + " (or " + std::to_string(esize) +
                   " for a splat)");
  }
  // Sub-byte integers are stored one per byte with their bits in the low end; ours are
  // the sign- or zero-extended 8-bit value.
  if (isSubByteInt(type.element)) {
    int w = dtypeBitWidth(type.element);
    for (int64_t i = 0; i < n; ++i) {
      uint8_t v = data[i] & static_cast<uint8_t>((1u << w) - 1);
      if (isSigned(type.element) && (v >> (w - 1)))
        v = static_cast<uint8_t>(v | ~((1u << w) - 1));
      data[i] = v;
    }
  }
  out->attr.kind = AttrKind::kDenseElements;
  out->attr.tensor = std::move(t);
  out->attr.tensor_type = std::make_shared<Type>(type);
  return Status::ok();
}

Status Entries::denseArray(ByteReader &r, const Type &element, uint64_t n,
                           std::span<const uint8_t> blob, Attribute *out) {
  if (!(element.kind == TypeKind::kTensor && element.is_scalar_element) ||
      isComplex(element.element) || element.element == DType::kInvalid)
    return r.error("dense array of element type " + element.toString() + " is not supported");
  int64_t esize = element.element == DType::kBool ? 1 : dtypeSize(element.element);
  if (n > blob.size() || blob.size() != n * static_cast<uint64_t>(esize))
    return r.error("dense array of " + std::to_string(n) + " " + element.toString() + " has " +
                   std::to_string(blob.size()) + " bytes");
  out->kind = AttrKind::kDenseArray;
  out->scalar_type = element.element;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, blob.data() + i * static_cast<uint64_t>(esize), static_cast<size_t>(esize));
    if (isFloat(element.element)) {
      out->floats.push_back(floatFromBits(bits, element.element));
    } else if (element.element == DType::kBool) {
      out->ints.push_back(bits != 0);
    } else {
      int w = static_cast<int>(esize * 8);
      int64_t v = static_cast<int64_t>(bits);
      if (isSigned(element.element) && w < 64 && ((bits >> (w - 1)) & 1))
        v = static_cast<int64_t>(bits | ~((uint64_t{1} << w) - 1));
      out->ints.push_back(v);
    }
  }
  return Status::ok();
}

} // namespace rs::ir::bc
