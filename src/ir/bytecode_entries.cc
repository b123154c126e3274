//===- ir/bytecode_entries.cc - Attribute and type entries, shared parts ---===//
//
// The memoised entry tables (Entries::attribute / Entries::type: each entry decoded on
// first use by its dialect's decoder, cycles and deep nesting refused, every entry consumed
// exactly; vhlo-bytecode.md 2.3), the reference and list helpers both dialects' decoders
// use, APInt/APFloat payloads (3.3), and the types they build.
//
//===----------------------------------------------------------------------===//
#include "ir/bytecode_impl.h"
#include "ir/float_bits.h"
#include "ir/printer.h"

#include <algorithm>

namespace rs::ir::bc {

std::string otherDialectAdvice(std::string_view dialect) {
  if (dialect != "sdy")
    return "";
  // Shardy writes its ops' properties and its attributes (sdy.mesh, #sdy.sharding,
  // #sdy.op_sharding_rule) in its own binary form; their text form parses.
  return "; Shardy (sdy) sharding ops and attributes in a portable artifact are not "
         "supported: export without shardings (no in_shardings/out_shardings), or serve the "
         "module's text (jax.export: exported.mlir_module()) as the program file";
}

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
  bool builtin = dialect == "builtin";
  if (!builtin && dialect != "vhlo")
    return r.errorAt(e.bytes.begin, "attribute entry " + std::to_string(index) + " of dialect '" +
                                        std::string(dialect) +
                                        "' has a binary encoding this reader does not know" +
                                        otherDialectAdvice(dialect));
  uint64_t code = 0;
  RS_RETURN_IF_ERROR(r.readVarInt(&code));
  out->origin = builtin ? Origin::kBuiltin : Origin::kVhlo;
  out->code = code;
  RS_RETURN_IF_ERROR(builtin ? decodeBuiltinAttr(r, code, out) : decodeVhloAttr(r, code, out));
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
  bool builtin = dialect == "builtin";
  if (!builtin && dialect != "vhlo")
    return r.errorAt(e.bytes.begin, "type entry " + std::to_string(index) + " of dialect '" +
                                        std::string(dialect) +
                                        "' has a binary encoding this reader does not know" +
                                        otherDialectAdvice(dialect));
  uint64_t code = 0;
  RS_RETURN_IF_ERROR(r.readVarInt(&code));
  RS_RETURN_IF_ERROR(builtin ? decodeBuiltinType(r, code, out) : decodeVhloType(r, code, out));
  return r.expectEnd("after type entry " + std::to_string(index));
}

//===----------------------------------------------------------------------===//
// References and lists
//===----------------------------------------------------------------------===//

Status Entries::attrRef(ByteReader &r, const DecodedAttr **out) {
  uint64_t i = 0;
  RS_RETURN_IF_ERROR(r.readVarInt(&i));
  return attribute(i, r, out);
}

Status Entries::typeRef(ByteReader &r, const DecodedType **out) {
  uint64_t i = 0;
  RS_RETURN_IF_ERROR(r.readVarInt(&i));
  return type(i, r, out);
}

Status Entries::typeList(ByteReader &r, std::vector<Type> *out) {
  uint64_t n = 0;
  RS_RETURN_IF_ERROR(r.readCount(&n));
  for (uint64_t i = 0; i < n; ++i) {
    const DecodedType *t = nullptr;
    RS_RETURN_IF_ERROR(typeRef(r, &t));
    out->push_back(t->type);
  }
  return Status::ok();
}

Status Entries::arrayAttr(ByteReader &r, Attribute *out) {
  uint64_t n = 0;
  RS_RETURN_IF_ERROR(r.readCount(&n));
  out->kind = AttrKind::kArray;
  for (uint64_t i = 0; i < n; ++i) {
    const DecodedAttr *e = nullptr;
    RS_RETURN_IF_ERROR(attrRef(r, &e));
    out->elements.push_back(e->attr);
  }
  return Status::ok();
}

Status Entries::dictionaryAttr(ByteReader &r, Attribute *out) {
  uint64_t n = 0;
  RS_RETURN_IF_ERROR(r.readCount(&n, 2));
  out->kind = AttrKind::kDictionary;
  for (uint64_t i = 0; i < n; ++i) {
    const DecodedAttr *name = nullptr, *value = nullptr;
    RS_RETURN_IF_ERROR(attrRef(r, &name));
    if (name->attr.kind != AttrKind::kString)
      return r.error("a dictionary key must be a string attribute");
    RS_RETURN_IF_ERROR(attrRef(r, &value));
    out->fields.push_back({name->attr.str, value->attr});
  }
  std::stable_sort(
      out->fields.begin(), out->fields.end(),
      [](const NamedAttribute &x, const NamedAttribute &y) { return x.name < y.name; });
  return Status::ok();
}

Status Entries::stringAttr(ByteReader &r, Attribute *out) {
  uint64_t s = 0;
  RS_RETURN_IF_ERROR(r.readVarInt(&s));
  std::string_view str;
  RS_RETURN_IF_ERROR(c_.string(s, &str, r));
  out->kind = AttrKind::kString;
  out->str = std::string(str);
  return Status::ok();
}

Status Entries::typeAttr(ByteReader &r, Attribute *out) {
  const DecodedType *t = nullptr;
  RS_RETURN_IF_ERROR(typeRef(r, &t));
  out->kind = AttrKind::kType;
  out->type = std::make_shared<Type>(t->type);
  return Status::ok();
}

Status Entries::typedIntegerAttr(ByteReader &r, std::string_view what, Attribute *out) {
  const DecodedType *t = nullptr;
  RS_RETURN_IF_ERROR(typeRef(r, &t));
  if (t->bit_width <= 0 || t->bit_width > 64)
    return r.error(std::string(what) + " of type " + t->type.toString() + " is not supported");
  uint64_t bits = 0;
  RS_RETURN_IF_ERROR(readAPInt(r, t->bit_width, &bits));
  *out = integerAttr(*t, bits);
  return Status::ok();
}

Status Entries::rankedTensorType(ByteReader &r, bool with_encoding, Type *out) {
  std::string encoding;
  if (with_encoding) {
    const DecodedAttr *enc = nullptr;
    RS_RETURN_IF_ERROR(attrRef(r, &enc));
    encoding = printAttribute(enc->attr);
  }
  Shape shape;
  RS_RETURN_IF_ERROR(readShape(r, &shape));
  const DecodedType *e = nullptr;
  RS_RETURN_IF_ERROR(typeRef(r, &e));
  *out = tensorType(std::move(shape), e->type, std::move(encoding));
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Numbers
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
// Types
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

Type complexType(const Type &element) {
  if (element == scalarType(DType::kF32))
    return scalarType(DType::kComplex64);
  if (element == scalarType(DType::kF64))
    return scalarType(DType::kComplex128);
  return otherType("complex<" + element.toString() + ">");
}

} // namespace rs::ir::bc
