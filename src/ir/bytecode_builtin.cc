//===- ir/bytecode_builtin.cc - Attribute and type entries: builtin -------===//
//
// The memoised entry tables (Entries::attribute / Entries::type: each entry decoded on
// first use, cycles and deep nesting refused) and the builtin dialect's encodings
// (vhlo-bytecode.md 2.4; mlir/include/mlir/IR/BuiltinDialectBytecode.td): arrays,
// dictionaries, strings, symbol references, type attributes, integers and floats
// (APInt/APFloat payloads, 3.3), dense arrays and dense elements (splats, bit-packed i1),
// dense resources, and locations, which only give ops their source position. Builtin
// types: integers, index, floats, complex, tensors, tuples, functions, none.
//
//===----------------------------------------------------------------------===//
#include "ir/bytecode_impl.h"
#include "ir/float_bits.h"
#include "ir/printer.h"

#include <cstring>

namespace rs::ir::bc {

//===----------------------------------------------------------------------===//
// The entry tables
//===----------------------------------------------------------------------===//

Status Entries::attribute(uint64_t index, const ByteReader &at, const DecodedAttr **out) {
  if (index >= attrs_.size())
    return at.error("attribute index " + std::to_string(index) + " is out of range (" +
                    std::to_string(attrs_.size()) + " attributes)");
  size_t i = static_cast<size_t>(index);
  if (!attrs_[i]) {
    if (attr_busy_[i])
      return at.error("attribute entry " + std::to_string(index) + " refers to itself");
    if (depth_ >= kMaxDepth)
      return at.error("attributes and types nested more than " + std::to_string(kMaxDepth) +
                      " deep");
    attr_busy_[i] = 1;
    ++depth_;
    auto decoded = std::make_unique<DecodedAttr>();
    Status s = decodeAttr(index, decoded.get());
    --depth_;
    attr_busy_[i] = 0;
    RS_RETURN_IF_ERROR(s);
    attrs_[i] = std::move(decoded);
  }
  *out = attrs_[i].get();
  return Status::ok();
}

Status Entries::type(uint64_t index, const ByteReader &at, const DecodedType **out) {
  if (index >= types_.size())
    return at.error("type index " + std::to_string(index) + " is out of range (" +
                    std::to_string(types_.size()) + " types)");
  size_t i = static_cast<size_t>(index);
  if (!types_[i]) {
    if (type_busy_[i])
      return at.error("type entry " + std::to_string(index) + " refers to itself");
    if (depth_ >= kMaxDepth)
      return at.error("attributes and types nested more than " + std::to_string(kMaxDepth) +
                      " deep");
    type_busy_[i] = 1;
    ++depth_;
    auto decoded = std::make_unique<DecodedType>();
    Status s = decodeType(index, decoded.get());
    --depth_;
    type_busy_[i] = 0;
    RS_RETURN_IF_ERROR(s);
    types_[i] = std::move(decoded);
  }
  *out = types_[i].get();
  return Status::ok();
}

Status Entries::decodeAttr(uint64_t index, DecodedAttr *out) {
  const Entry &e = c_.attrs[static_cast<size_t>(index)];
  ByteReader r = c_.reader(e.bytes, kAttrTypeSection);
  std::string_view dialect = c_.dialects[static_cast<size_t>(e.dialect)];
  if (!e.custom) {
    std::string_view text;
    RS_RETURN_IF_ERROR(r.readCString(&text));
    RS_RETURN_IF_ERROR(r.expectEnd("after a textual attribute"));
    Result<Attribute> a = parseAttributeText(text, c_.file);
    if (!a.isOk())
      return r.errorAt(e.bytes.begin, "attribute entry " + std::to_string(index) + " ('" +
                                          std::string(text) + "'): " + a.status().message());
    out->attr = std::move(*a);
    out->origin = Origin::kText;
    return Status::ok();
  }
  if (dialect == "builtin")
    RS_RETURN_IF_ERROR(decodeBuiltinAttr(r, out));
  else if (dialect == "vhlo")
    RS_RETURN_IF_ERROR(decodeVhloAttr(r, out));
  else
    return r.errorAt(e.bytes.begin, "attribute entry " + std::to_string(index) + " of dialect '" +
                                        std::string(dialect) +
                                        "' has a binary encoding this reader does not know");
  return r.expectEnd("after attribute entry " + std::to_string(index));
}

Status Entries::decodeType(uint64_t index, DecodedType *out) {
  const Entry &e = c_.types[static_cast<size_t>(index)];
  ByteReader r = c_.reader(e.bytes, kAttrTypeSection);
  std::string_view dialect = c_.dialects[static_cast<size_t>(e.dialect)];
  if (!e.custom) {
    std::string_view text;
    RS_RETURN_IF_ERROR(r.readCString(&text));
    RS_RETURN_IF_ERROR(r.expectEnd("after a textual type"));
    Result<Type> t = parseTypeText(text, c_.file);
    if (!t.isOk())
      return r.errorAt(e.bytes.begin, "type entry " + std::to_string(index) + " ('" +
                                          std::string(text) + "'): " + t.status().message());
    out->type = std::move(*t);
    return Status::ok();
  }
  if (dialect == "builtin")
    RS_RETURN_IF_ERROR(decodeBuiltinType(r, out));
  else if (dialect == "vhlo")
    RS_RETURN_IF_ERROR(decodeVhloType(r, out));
  else
    return r.errorAt(e.bytes.begin, "type entry " + std::to_string(index) + " of dialect '" +
                                        std::string(dialect) +
                                        "' has a binary encoding this reader does not know");
  return r.expectEnd("after type entry " + std::to_string(index));
}

//===----------------------------------------------------------------------===//
// Numbers and dense data
//===----------------------------------------------------------------------===//

Status Entries::readAPInt(ByteReader &r, int width, uint64_t *out) {
  if (width <= 8) {
    uint8_t b = 0;
    RS_RETURN_IF_ERROR(r.readByte(&b));
    *out = width == 8 ? b : b & ((1u << width) - 1);
    return Status::ok();
  }
  if (width <= 64) {
    int64_t v = 0;
    RS_RETURN_IF_ERROR(r.readSignedVarInt(&v));
    uint64_t u = static_cast<uint64_t>(v);
    *out = width == 64 ? u : u & ((uint64_t{1} << width) - 1);
    return Status::ok();
  }
  uint64_t words = 0;
  RS_RETURN_IF_ERROR(r.readCount(&words));
  if (words > static_cast<uint64_t>((width + 63) / 64))
    return r.error(std::to_string(words) + " words for a " + std::to_string(width) +
                   "-bit integer");
  *out = 0;
  for (uint64_t i = 0; i < words; ++i) {
    int64_t w = 0;
    RS_RETURN_IF_ERROR(r.readSignedVarInt(&w));
    if (i == 0)
      *out = static_cast<uint64_t>(w);
  }
  return Status::ok();
}

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

Attribute integerAttr(const DecodedType &type, uint64_t bits) {
  Attribute a;
  const Type &t = type.type;
  int w = type.bit_width;
  if (t.kind == TypeKind::kTensor && t.is_scalar_element && t.element == DType::kBool) {
    a.kind = AttrKind::kBool;
    a.scalar_type = DType::kBool;
    a.int_value = bits & 1;
    return a;
  }
  int64_t v = static_cast<int64_t>(bits);
  bool is_signed = !(t.kind == TypeKind::kTensor && t.is_scalar_element && isInteger(t.element) &&
                     !isSigned(t.element));
  if (is_signed && w > 0 && w < 64 && ((bits >> (w - 1)) & 1))
    v = static_cast<int64_t>(bits | ~((uint64_t{1} << w) - 1));
  if (t.kind == TypeKind::kTensor && t.is_scalar_element && isInteger(t.element)) {
    a.kind = AttrKind::kInteger;
    a.scalar_type = t.element;
    a.int_value = v;
    return a;
  }
  // index and other integer types: MLIR's spelling, as the text parser keeps it.
  a.kind = AttrKind::kOpaque;
  a.str = (is_signed ? std::to_string(v) : std::to_string(bits)) + " : " + t.toString();
  return a;
}

Status readFloatAttr(ByteReader &r, const DecodedType &type, Attribute *out) {
  uint64_t bits = 0;
  RS_RETURN_IF_ERROR(Entries::readAPInt(r, type.bit_width, &bits));
  const Type &t = type.type;
  *out = Attribute();
  if (t.kind == TypeKind::kTensor && t.is_scalar_element && isFloat(t.element)) {
    out->kind = AttrKind::kFloat;
    out->scalar_type = t.element;
    out->float_value = floatFromBits(bits, t.element);
    return Status::ok();
  }
  if (t.kind == TypeKind::kOther && t.text == "tf32") {
    out->kind = AttrKind::kOpaque;
    Attribute f;
    f.kind = AttrKind::kFloat;
    f.scalar_type = DType::kF32;
    f.float_value = floatBitsToDouble(bits, 8, 10);
    out->str = printAttribute(f);
    out->str.replace(out->str.size() - 3, 3, "tf32");
    return Status::ok();
  }
  return r.error("float attribute of type " + t.toString() + " is not supported");
}

//===----------------------------------------------------------------------===//
// Builtin attributes
//===----------------------------------------------------------------------===//

namespace {

enum BuiltinAttrCode : uint64_t {
  kArray = 0,
  kDictionary = 1,
  kString = 2,
  kStringWithType = 3,
  kFlatSymbolRef = 4,
  kSymbolRef = 5,
  kTypeAttr = 6,
  kUnit = 7,
  kInteger = 8,
  kFloat = 9,
  kCallSiteLoc = 10,
  kFileLineColLoc = 11,
  kFusedLoc = 12,
  kFusedLocWithMetadata = 13,
  kNameLoc = 14,
  kUnknownLoc = 15,
  kDenseResourceElements = 16,
  kDenseArray = 17,
  kDenseIntOrFPElements = 18,
  kDenseStringElements = 19,
  kSparseElements = 20,
  kDistinctAttr = 21,
  kFileLineColRange = 22,
};

std::string quoted(std::string_view s) {
  Attribute a;
  a.kind = AttrKind::kString;
  a.str = std::string(s);
  return printAttribute(a);
}

} // namespace

Status Entries::decodeBuiltinAttr(ByteReader &r, DecodedAttr *out) {
  uint64_t code = 0;
  RS_RETURN_IF_ERROR(r.readVarInt(&code));
  out->origin = Origin::kBuiltin;
  out->code = code;
  Attribute &a = out->attr;
  auto sub = [&](const DecodedAttr **d) -> Status {
    uint64_t i = 0;
    RS_RETURN_IF_ERROR(r.readVarInt(&i));
    return attribute(i, r, d);
  };
  auto subType = [&](const DecodedType **d) -> Status {
    uint64_t i = 0;
    RS_RETURN_IF_ERROR(r.readVarInt(&i));
    return type(i, r, d);
  };
  auto location = [&](const DecodedAttr *d) -> Status {
    if (d->origin != Origin::kLocation)
      return r.error("expected a location attribute");
    return Status::ok();
  };
  switch (code) {
  case kArray: {
    uint64_t n = 0;
    RS_RETURN_IF_ERROR(r.readCount(&n));
    a.kind = AttrKind::kArray;
    for (uint64_t i = 0; i < n; ++i) {
      const DecodedAttr *e = nullptr;
      RS_RETURN_IF_ERROR(sub(&e));
      a.elements.push_back(e->attr);
    }
    return Status::ok();
  }
  case kDictionary: {
    uint64_t n = 0;
    RS_RETURN_IF_ERROR(r.readCount(&n, 2));
    std::vector<NamedAttribute> fields;
    for (uint64_t i = 0; i < n; ++i) {
      const DecodedAttr *name = nullptr, *value = nullptr;
      RS_RETURN_IF_ERROR(sub(&name));
      if (name->attr.kind != AttrKind::kString)
        return r.error("a dictionary key must be a string attribute");
      RS_RETURN_IF_ERROR(sub(&value));
      fields.push_back({name->attr.str, value->attr});
    }
    a.kind = AttrKind::kDictionary;
    a.fields = std::move(fields);
    return Status::ok();
  }
  case kString:
  case kStringWithType: {
    uint64_t s = 0;
    RS_RETURN_IF_ERROR(r.readVarInt(&s));
    std::string_view str;
    RS_RETURN_IF_ERROR(c_.string(s, &str, r));
    a.kind = AttrKind::kString;
    a.str = std::string(str);
    if (code == kStringWithType) {
      const DecodedType *t = nullptr;
      RS_RETURN_IF_ERROR(subType(&t));
      a.kind = AttrKind::kOpaque;
      a.str = quoted(str) + " : " + t->type.toString();
    }
    return Status::ok();
  }
  case kFlatSymbolRef:
  case kSymbolRef: {
    const DecodedAttr *root = nullptr;
    RS_RETURN_IF_ERROR(sub(&root));
    if (root->attr.kind != AttrKind::kString)
      return r.error("a symbol reference must name a string attribute");
    a.kind = AttrKind::kSymbolRef;
    a.str = root->attr.str;
    if (code == kSymbolRef) {
      uint64_t n = 0;
      RS_RETURN_IF_ERROR(r.readCount(&n));
      std::string text = "@" + root->attr.str;
      for (uint64_t i = 0; i < n; ++i) {
        const DecodedAttr *nested = nullptr;
        RS_RETURN_IF_ERROR(sub(&nested));
        if (nested->attr.kind != AttrKind::kSymbolRef)
          return r.error("a nested symbol reference must be a flat symbol reference");
        text += "::@" + nested->attr.str;
      }
      if (n > 0) {
        a.kind = AttrKind::kOpaque;
        a.str = text;
      }
    }
    return Status::ok();
  }
  case kTypeAttr: {
    const DecodedType *t = nullptr;
    RS_RETURN_IF_ERROR(subType(&t));
    a.kind = AttrKind::kType;
    a.type = std::make_shared<Type>(t->type);
    return Status::ok();
  }
  case kUnit: a.kind = AttrKind::kUnit; return Status::ok();
  case kInteger: {
    const DecodedType *t = nullptr;
    RS_RETURN_IF_ERROR(subType(&t));
    if (t->bit_width <= 0 || t->bit_width > 64)
      return r.error("integer attribute of type " + t->type.toString() + " is not supported");
    uint64_t bits = 0;
    RS_RETURN_IF_ERROR(readAPInt(r, t->bit_width, &bits));
    a = integerAttr(*t, bits);
    return Status::ok();
  }
  case kFloat: {
    const DecodedType *t = nullptr;
    RS_RETURN_IF_ERROR(subType(&t));
    return readFloatAttr(r, *t, &a);
  }
  case kCallSiteLoc: {
    const DecodedAttr *callee = nullptr, *caller = nullptr;
    RS_RETURN_IF_ERROR(sub(&callee));
    RS_RETURN_IF_ERROR(location(callee));
    RS_RETURN_IF_ERROR(sub(&caller));
    RS_RETURN_IF_ERROR(location(caller));
    out->origin = Origin::kLocation;
    out->source = callee->source.empty() ? caller->source : callee->source;
    return Status::ok();
  }
  case kFileLineColLoc:
  case kFileLineColRange: {
    const DecodedAttr *file = nullptr;
    RS_RETURN_IF_ERROR(sub(&file));
    if (file->attr.kind != AttrKind::kString)
      return r.error("a file location must name a string attribute");
    std::vector<uint64_t> numbers;
    uint64_t n = 2;
    if (code == kFileLineColRange) {
      RS_RETURN_IF_ERROR(r.readVarInt(&n));
      if (n > 4)
        return r.error("a file range location has " + std::to_string(n) + " numbers (at most 4)");
    }
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t v = 0;
      RS_RETURN_IF_ERROR(r.readVarInt(&v));
      numbers.push_back(v);
    }
    out->origin = Origin::kLocation;
    out->source = file->attr.str;
    if (!numbers.empty())
      out->source += ":" + std::to_string(numbers[0]);
    if (numbers.size() > 1)
      out->source += ":" + std::to_string(numbers[1]);
    return Status::ok();
  }
  case kFusedLoc:
  case kFusedLocWithMetadata: {
    uint64_t n = 0;
    RS_RETURN_IF_ERROR(r.readCount(&n));
    out->origin = Origin::kLocation;
    for (uint64_t i = 0; i < n; ++i) {
      const DecodedAttr *l = nullptr;
      RS_RETURN_IF_ERROR(sub(&l));
      RS_RETURN_IF_ERROR(location(l));
      if (out->source.empty())
        out->source = l->source;
    }
    if (code == kFusedLocWithMetadata) {
      const DecodedAttr *metadata = nullptr;
      RS_RETURN_IF_ERROR(sub(&metadata));
    }
    return Status::ok();
  }
  case kNameLoc: {
    const DecodedAttr *name = nullptr, *child = nullptr;
    RS_RETURN_IF_ERROR(sub(&name));
    RS_RETURN_IF_ERROR(sub(&child));
    RS_RETURN_IF_ERROR(location(child));
    out->origin = Origin::kLocation;
    out->source = child->source;
    return Status::ok();
  }
  case kUnknownLoc: out->origin = Origin::kLocation; return Status::ok();
  case kDenseResourceElements: {
    const DecodedType *t = nullptr;
    RS_RETURN_IF_ERROR(subType(&t));
    uint64_t handle = 0;
    RS_RETURN_IF_ERROR(r.readVarInt(&handle));
    if (handle >= c_.resources.size())
      return r.error("dense resource handle " + std::to_string(handle) + " is out of range (" +
                     std::to_string(c_.resources.size()) + " resources)");
    const Resource &res = c_.resources[static_cast<size_t>(handle)];
    if (res.kind != 0 || res.bytes.begin == res.bytes.end)
      return r.error("dense resource '" + std::string(res.key) + "' holds no data blob");
    ByteReader blob_reader = c_.reader(res.bytes, kResourceSection);
    uint64_t alignment = 0;
    RS_RETURN_IF_ERROR(blob_reader.readVarInt(&alignment));
    uint64_t size = 0;
    RS_RETURN_IF_ERROR(blob_reader.readVarInt(&size));
    RS_RETURN_IF_ERROR(blob_reader.alignTo(alignment));
    std::span<const uint8_t> blob;
    RS_RETURN_IF_ERROR(blob_reader.readBytes(static_cast<size_t>(size), &blob));
    RS_RETURN_IF_ERROR(blob_reader.expectEnd("after resource '" + std::string(res.key) + "'"));
    return denseElements(blob_reader, t->type, blob, out);
  }
  case kDenseArray: {
    const DecodedType *t = nullptr;
    RS_RETURN_IF_ERROR(subType(&t));
    uint64_t n = 0;
    RS_RETURN_IF_ERROR(r.readVarInt(&n));
    std::span<const uint8_t> blob;
    RS_RETURN_IF_ERROR(r.readBlob(&blob));
    const Type &et = t->type;
    if (!(et.kind == TypeKind::kTensor && et.is_scalar_element) || isComplex(et.element) ||
        et.element == DType::kInvalid)
      return r.error("dense array of element type " + et.toString() + " is not supported");
    int64_t esize = et.element == DType::kBool ? 1 : dtypeSize(et.element);
    if (n > blob.size() || blob.size() != n * static_cast<uint64_t>(esize))
      return r.error("dense array of " + std::to_string(n) + " " + et.toString() + " has " +
                     std::to_string(blob.size()) + " bytes");
    a.kind = AttrKind::kDenseArray;
    a.scalar_type = et.element;
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t bits = 0;
      std::memcpy(&bits, blob.data() + i * static_cast<uint64_t>(esize),
                  static_cast<size_t>(esize));
      if (isFloat(et.element)) {
        a.floats.push_back(floatFromBits(bits, et.element));
      } else if (et.element == DType::kBool) {
        a.ints.push_back(bits != 0);
      } else {
        int w = static_cast<int>(esize * 8);
        int64_t v = static_cast<int64_t>(bits);
        if (isSigned(et.element) && w < 64 && ((bits >> (w - 1)) & 1))
          v = static_cast<int64_t>(bits | ~((uint64_t{1} << w) - 1));
        a.ints.push_back(v);
      }
    }
    return Status::ok();
  }
  case kDenseIntOrFPElements: {
    const DecodedType *t = nullptr;
    RS_RETURN_IF_ERROR(subType(&t));
    std::span<const uint8_t> blob;
    RS_RETURN_IF_ERROR(r.readBlob(&blob));
    return denseElements(r, t->type, blob, out);
  }
  case kDenseStringElements: {
    const DecodedType *t = nullptr;
    RS_RETURN_IF_ERROR(subType(&t));
    uint64_t splat = 0;
    RS_RETURN_IF_ERROR(r.readVarInt(&splat));
    Result<int64_t> count = checkedElementCount(t->type.shape);
    uint64_t n = splat ? 1 : (count.isOk() ? static_cast<uint64_t>(*count) : 0);
    if (n > r.remaining())
      return r.error("dense string elements run past the end of the entry");
    std::string text = "dense<";
    if (!splat && n != 1)
      text += '[';
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t s = 0;
      RS_RETURN_IF_ERROR(r.readVarInt(&s));
      std::string_view str;
      RS_RETURN_IF_ERROR(c_.string(s, &str, r));
      text += (i ? ", " : "") + quoted(str);
    }
    if (!splat && n != 1)
      text += ']';
    a.kind = AttrKind::kOpaque;
    a.str = text + "> : " + t->type.toString();
    return Status::ok();
  }
  case kDistinctAttr: {
    // distinct[N]<attr>: the identity only matters inside MLIR; the value is kept.
    const DecodedAttr *referenced = nullptr;
    RS_RETURN_IF_ERROR(sub(&referenced));
    *out = *referenced;
    return Status::ok();
  }
  case kSparseElements: return r.error("sparse elements attributes are not supported");
  default:
    return r.error("unknown builtin attribute code " + std::to_string(code) + " (known: 0 to 22)");
  }
}

//===----------------------------------------------------------------------===//
// Builtin types
//===----------------------------------------------------------------------===//

Type scalarType(DType t) {
  Type s;
  s.kind = TypeKind::kTensor;
  s.is_scalar_element = true;
  s.element = t;
  return s;
}

Type otherType(std::string text) {
  Type t;
  t.kind = TypeKind::kOther;
  t.text = std::move(text);
  return t;
}

Type tensorType(Shape shape, const Type &element, std::string encoding) {
  if (element.kind == TypeKind::kTensor && element.is_scalar_element) {
    Type t = Type::tensor(element.element, std::move(shape));
    t.text = std::move(encoding);
    return t;
  }
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  s += element.toString();
  if (!encoding.empty())
    s += ", " + encoding;
  Type t = otherType(s + ">");
  t.shape = std::move(shape); // as the text parser keeps it for such types
  return t;
}

Status readShape(ByteReader &r, Shape *out) {
  uint64_t rank = 0;
  RS_RETURN_IF_ERROR(r.readCount(&rank));
  for (uint64_t i = 0; i < rank; ++i) {
    int64_t d = 0;
    RS_RETURN_IF_ERROR(r.readSignedVarInt(&d));
    if (d == INT64_MIN)
      d = -1; // dynamic, '?'
    else if (d < 0)
      return r.error("dimension " + std::to_string(d) + " is negative");
    out->push_back(d);
  }
  return Status::ok();
}

namespace {

Type integerType(uint64_t width, uint64_t signedness, int *bit_width) {
  *bit_width = static_cast<int>(width);
  std::string name = (signedness == 1   ? "si"
                      : signedness == 2 ? "ui"
                                        : "i") +
                     std::to_string(width);
  if (signedness != 1)
    if (std::optional<DType> dt = dtypeFromMlirName(name))
      return scalarType(*dt);
  return otherType(name);
}

} // namespace

Status Entries::decodeBuiltinType(ByteReader &r, DecodedType *out) {
  uint64_t code = 0;
  RS_RETURN_IF_ERROR(r.readVarInt(&code));
  auto subType = [&](const DecodedType **d) -> Status {
    uint64_t i = 0;
    RS_RETURN_IF_ERROR(r.readVarInt(&i));
    return type(i, r, d);
  };
  auto typeList = [&](std::vector<Type> *list) -> Status {
    uint64_t n = 0;
    RS_RETURN_IF_ERROR(r.readCount(&n));
    for (uint64_t i = 0; i < n; ++i) {
      const DecodedType *t = nullptr;
      RS_RETURN_IF_ERROR(subType(&t));
      list->push_back(t->type);
    }
    return Status::ok();
  };
  switch (code) {
  case 0: { // Integer: (width << 2) | signedness
    uint64_t v = 0;
    RS_RETURN_IF_ERROR(r.readVarInt(&v));
    if ((v & 3) == 3 || (v >> 2) == 0 || (v >> 2) > (1u << 24))
      return r.error("invalid integer type encoding " + std::to_string(v));
    out->type = integerType(v >> 2, v & 3, &out->bit_width);
    return Status::ok();
  }
  case 1:
    out->type = otherType("index");
    out->bit_width = 64;
    return Status::ok();
  case 2: { // Function
    out->type.kind = TypeKind::kFunction;
    RS_RETURN_IF_ERROR(typeList(&out->type.elements));
    return typeList(&out->type.results);
  }
  case 3:
    out->type = scalarType(DType::kBF16);
    out->bit_width = 16;
    return Status::ok();
  case 4:
    out->type = scalarType(DType::kF16);
    out->bit_width = 16;
    return Status::ok();
  case 5:
    out->type = scalarType(DType::kF32);
    out->bit_width = 32;
    return Status::ok();
  case 6:
    out->type = scalarType(DType::kF64);
    out->bit_width = 64;
    return Status::ok();
  case 7:
    out->type = otherType("f80");
    out->bit_width = 80;
    return Status::ok();
  case 8:
    out->type = otherType("f128");
    out->bit_width = 128;
    return Status::ok();
  case 9: { // Complex
    const DecodedType *e = nullptr;
    RS_RETURN_IF_ERROR(subType(&e));
    if (e->type == scalarType(DType::kF32))
      out->type = scalarType(DType::kComplex64);
    else if (e->type == scalarType(DType::kF64))
      out->type = scalarType(DType::kComplex128);
    else
      out->type = otherType("complex<" + e->type.toString() + ">");
    return Status::ok();
  }
  case 12:
    out->type = otherType("none");
    out->is_none = true;
    return Status::ok();
  case 13:
  case 14: { // RankedTensor (with encoding)
    std::string encoding;
    if (code == 14) {
      uint64_t i = 0;
      RS_RETURN_IF_ERROR(r.readVarInt(&i));
      const DecodedAttr *enc = nullptr;
      RS_RETURN_IF_ERROR(attribute(i, r, &enc));
      encoding = printAttribute(enc->attr);
    }
    Shape shape;
    RS_RETURN_IF_ERROR(readShape(r, &shape));
    const DecodedType *e = nullptr;
    RS_RETURN_IF_ERROR(subType(&e));
    out->type = tensorType(std::move(shape), e->type, std::move(encoding));
    return Status::ok();
  }
  case 15: out->type.kind = TypeKind::kTuple; return typeList(&out->type.elements);
  case 18: { // UnrankedTensor
    const DecodedType *e = nullptr;
    RS_RETURN_IF_ERROR(subType(&e));
    out->type = otherType("tensor<*x" + e->type.toString() + ">");
    return Status::ok();
  }
  case 19: { // Vector
    Shape shape;
    RS_RETURN_IF_ERROR(readShape(r, &shape));
    const DecodedType *e = nullptr;
    RS_RETURN_IF_ERROR(subType(&e));
    std::string s = "vector<";
    for (int64_t d : shape)
      s += std::to_string(d) + "x";
    out->type = otherType(s + e->type.toString() + ">");
    return Status::ok();
  }
  case 10:
  case 11:
  case 16:
  case 17: return r.error("memref types are not supported in StableHLO programs");
  default:
    return r.error("unknown builtin type code " + std::to_string(code) + " (known: 0 to 19)");
  }
}

} // namespace rs::ir::bc
