//===- ir/bytecode_builtin.cc - Attribute and type entries: builtin -------===//
//
// The builtin dialect's attribute and type encodings that occur in StableHLO artifacts
// (vhlo-bytecode.md 2.4; mlir/include/mlir/IR/BuiltinDialectBytecode.td): arrays,
// dictionaries, strings, symbol references, type attributes, integers and floats, dense
// arrays, dense elements and dense resources, and locations, which only give ops their
// source position. Types: integers, index, floats, complex, tensors, tuples, functions,
// none.
//
//===----------------------------------------------------------------------===//
#include "ir/bytecode_impl.h"
#include "ir/printer.h"

namespace rs::ir::bc {

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

Status Entries::decodeBuiltinAttr(ByteReader &r, uint64_t code, DecodedAttr *out) {
  Attribute &a = out->attr;
  auto location = [&](const DecodedAttr *d) -> Status {
    if (d->origin != Origin::kLocation)
      return r.error("expected a location attribute");
    return Status::ok();
  };
  switch (code) {
  case kArray: return arrayAttr(r, &a);
  case kDictionary: return dictionaryAttr(r, &a);
  case kString:
  case kStringWithType: {
    RS_RETURN_IF_ERROR(stringAttr(r, &a));
    if (code == kStringWithType) {
      const DecodedType *t = nullptr;
      RS_RETURN_IF_ERROR(typeRef(r, &t));
      a.kind = AttrKind::kOpaque;
      a.str = quoted(a.str) + " : " + t->type.toString();
    }
    return Status::ok();
  }
  case kFlatSymbolRef:
  case kSymbolRef: {
    const DecodedAttr *root = nullptr;
    RS_RETURN_IF_ERROR(attrRef(r, &root));
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
        RS_RETURN_IF_ERROR(attrRef(r, &nested));
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
  case kTypeAttr: return typeAttr(r, &a);
  case kUnit: a.kind = AttrKind::kUnit; return Status::ok();
  case kInteger: return typedIntegerAttr(r, "integer attribute", &a);
  case kFloat: {
    const DecodedType *t = nullptr;
    RS_RETURN_IF_ERROR(typeRef(r, &t));
    return readFloatAttr(r, *t, &a);
  }
  case kCallSiteLoc: {
    const DecodedAttr *callee = nullptr, *caller = nullptr;
    RS_RETURN_IF_ERROR(attrRef(r, &callee));
    RS_RETURN_IF_ERROR(location(callee));
    RS_RETURN_IF_ERROR(attrRef(r, &caller));
    RS_RETURN_IF_ERROR(location(caller));
    out->origin = Origin::kLocation;
    out->source = callee->source.empty() ? caller->source : callee->source;
    return Status::ok();
  }
  case kFileLineColLoc:
  case kFileLineColRange: {
    const DecodedAttr *file = nullptr;
    RS_RETURN_IF_ERROR(attrRef(r, &file));
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
      RS_RETURN_IF_ERROR(attrRef(r, &l));
      RS_RETURN_IF_ERROR(location(l));
      if (out->source.empty())
        out->source = l->source;
    }
    if (code == kFusedLocWithMetadata) {
      const DecodedAttr *metadata = nullptr;
      RS_RETURN_IF_ERROR(attrRef(r, &metadata));
    }
    return Status::ok();
  }
  case kNameLoc: {
    const DecodedAttr *name = nullptr, *child = nullptr;
    RS_RETURN_IF_ERROR(attrRef(r, &name));
    RS_RETURN_IF_ERROR(attrRef(r, &child));
    RS_RETURN_IF_ERROR(location(child));
    out->origin = Origin::kLocation;
    out->source = child->source;
    return Status::ok();
  }
  case kUnknownLoc: out->origin = Origin::kLocation; return Status::ok();
  case kDenseResourceElements: {
    const DecodedType *t = nullptr;
    RS_RETURN_IF_ERROR(typeRef(r, &t));
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
    RS_RETURN_IF_ERROR(typeRef(r, &t));
    uint64_t n = 0;
    RS_RETURN_IF_ERROR(r.readVarInt(&n));
    std::span<const uint8_t> blob;
    RS_RETURN_IF_ERROR(r.readBlob(&blob));
    return denseArray(r, t->type, n, blob, &a);
  }
  case kDenseIntOrFPElements: {
    const DecodedType *t = nullptr;
    RS_RETURN_IF_ERROR(typeRef(r, &t));
    std::span<const uint8_t> blob;
    RS_RETURN_IF_ERROR(r.readBlob(&blob));
    return denseElements(r, t->type, blob, out);
  }
  case kDenseStringElements: {
    const DecodedType *t = nullptr;
    RS_RETURN_IF_ERROR(typeRef(r, &t));
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
    RS_RETURN_IF_ERROR(attrRef(r, &referenced));
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

Status Entries::decodeBuiltinType(ByteReader &r, uint64_t code, DecodedType *out) {
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
    RS_RETURN_IF_ERROR(typeList(r, &out->type.elements));
    return typeList(r, &out->type.results);
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
    RS_RETURN_IF_ERROR(typeRef(r, &e));
    out->type = complexType(e->type);
    return Status::ok();
  }
  case 12:
    out->type = otherType("none");
    out->is_none = true;
    return Status::ok();
  case 13:
  case 14: return rankedTensorType(r, code == 14, &out->type); // RankedTensor (with encoding)
  case 15: out->type.kind = TypeKind::kTuple; return typeList(r, &out->type.elements);
  case 18: { // UnrankedTensor
    const DecodedType *e = nullptr;
    RS_RETURN_IF_ERROR(typeRef(r, &e));
    out->type = otherType("tensor<*x" + e->type.toString() + ">");
    return Status::ok();
  }
  case 19: { // Vector
    Shape shape;
    RS_RETURN_IF_ERROR(readShape(r, &shape));
    const DecodedType *e = nullptr;
    RS_RETURN_IF_ERROR(typeRef(r, &e));
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
