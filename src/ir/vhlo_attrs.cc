//===- ir/vhlo_attrs.cc - Attribute and type entries: VHLO ----------------===//
//
// VHLO's attribute and type codes (vhlo-bytecode.md 3.1-3.4; stablehlo/dialect/
// VhloBytecode.cpp, VhloEnums.td), decoded straight into what the StableHLO attribute or
// type becomes (VhloLegalizeToStablehlo.cpp, convertGeneric; VhloTypes.cpp): enums to
// #stablehlo enums by enumerator name, tensor_v1 to dense elements, type_v1 to a type
// attribute, the quantized, bounded and future types to MLIR's spelling of them. The
// op-specific conversions (dense arrays, dimension-number structs) are in
// vhlo_legalize.cc.
//
//===----------------------------------------------------------------------===//
#include "ir/bytecode_impl.h"

#include "ir/printer.h"
#include <algorithm>
#include <cstring>

#include <cstdio>

namespace rs::ir::bc {
namespace {

/// Enumerator names of a VHLO enum, by value (VhloEnums.td).
struct EnumInfo {
  std::string_view stablehlo_name; // "comparison_direction"
  std::vector<std::string_view> values;
  uint64_t first = 0; // the value of values[0]
};

const EnumInfo *enumInfo(uint64_t code) {
  static const EnumInfo kDirection{"comparison_direction", {"EQ", "NE", "GE", "GT", "LE", "LT"}};
  static const EnumInfo kCompareType{"comparison_type",
                                     {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"}};
  static const EnumInfo kApiVersion{"api_version",
                                    {"API_VERSION_UNSPECIFIED", "ORIGINAL", "STATUS_RETURNING",
                                     "STATUS_RETURNING_UNIFIED", "TYPED_FFI"}};
  static const EnumInfo kFftType{"fft_type", {"FFT", "IFFT", "RFFT", "IRFFT"}};
  static const EnumInfo kPrecision{"precision", {"DEFAULT", "HIGH", "HIGHEST"}};
  static const EnumInfo kRngAlgorithm{"rng_algorithm", {"DEFAULT", "THREE_FRY", "PHILOX"}};
  static const EnumInfo kRngDistribution{"rng_distribution", {"UNIFORM", "NORMAL"}, 1};
  static const EnumInfo kTranspose{"transpose",
                                   {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}};
  static const EnumInfo kAccuracyMode{"result_accuracy_mode", {"DEFAULT", "HIGHEST", "TOLERANCE"}};
  switch (code) {
  case 3: return &kDirection;
  case 4: return &kCompareType;
  case 5: return &kApiVersion;
  case 7: return &kFftType;
  case 11: return &kPrecision;
  case 12: return &kRngAlgorithm;
  case 13: return &kRngDistribution;
  case 16: return &kTranspose;
  case 19: return &kAccuracyMode;
  default: return nullptr;
  }
}

/// "%e" spelling of a double, as MLIR prints APFloat parameters (1.000000e-05).
std::string sci(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%e", v);
  return buf;
}

Attribute opaque(std::string text) {
  Attribute a;
  a.kind = AttrKind::kOpaque;
  a.str = std::move(text);
  return a;
}

Attribute i64Array(std::vector<int64_t> v) {
  Attribute a;
  a.kind = AttrKind::kDenseArray;
  a.scalar_type = DType::kI64;
  a.ints = std::move(v);
  return a;
}

Attribute i64(int64_t v) {
  Attribute a;
  a.kind = AttrKind::kInteger;
  a.scalar_type = DType::kI64;
  a.int_value = v;
  return a;
}

Status readSignedList(ByteReader &r, std::vector<int64_t> *out) {
  uint64_t n = 0;
  RS_RETURN_IF_ERROR(r.readCount(&n));
  for (uint64_t i = 0; i < n; ++i) {
    int64_t v = 0;
    RS_RETURN_IF_ERROR(r.readSignedVarInt(&v));
    out->push_back(v);
  }
  return Status::ok();
}

std::string boundsText(const std::vector<int64_t> &bounds) {
  std::string s = "#stablehlo.bounds<";
  for (size_t i = 0; i < bounds.size(); ++i)
    s += (i ? ", " : "") + (bounds[i] == INT64_MIN ? std::string("?") : std::to_string(bounds[i]));
  return s + ">";
}

/// MLIR's spelling of a quantized storage type: i8 / u8, with `<min:max>` when they
/// differ from the type's full range (QuantOps' printStorageType).
std::string storageText(const DecodedType &storage, bool is_signed, int64_t min, int64_t max) {
  int w = storage.bit_width;
  if (w <= 0 || w > 63)
    return storage.type.toString();
  std::string s = (is_signed ? "i" : "u") + std::to_string(w);
  int64_t lo = is_signed ? -(int64_t{1} << (w - 1)) : 0;
  int64_t hi = is_signed ? (int64_t{1} << (w - 1)) - 1 : (int64_t{1} << w) - 1;
  if (min != lo || max != hi)
    s += "<" + std::to_string(min) + ":" + std::to_string(max) + ">";
  return s;
}

std::string quantParams(double scale, int64_t zero_point) {
  std::string s = sci(scale);
  if (zero_point != 0)
    s += ":" + std::to_string(zero_point);
  return s;
}

} // namespace

Status Entries::decodeVhloAttr(ByteReader &r, DecodedAttr *out) {
  uint64_t code = 0;
  RS_RETURN_IF_ERROR(r.readVarInt(&code));
  out->origin = Origin::kVhlo;
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
  auto f64 = [&](double *v) -> Status {
    uint64_t bits = 0;
    RS_RETURN_IF_ERROR(readAPInt(r, 64, &bits));
    std::memcpy(v, &bits, 8);
    return Status::ok();
  };
  if (const EnumInfo *e = enumInfo(code)) {
    uint64_t v = 0;
    size_t at = r.offset();
    RS_RETURN_IF_ERROR(r.readVarInt(&v));
    if (v < e->first || v - e->first >= e->values.size())
      return r.errorAt(at, "value " + std::to_string(v) + " is not a " +
                               std::string(e->stablehlo_name) + " enumerator");
    std::string_view name = e->values[static_cast<size_t>(v - e->first)];
    if (code == 5) { // CustomCallApiVersion is an i32 attribute in StableHLO
      a.kind = AttrKind::kInteger;
      a.scalar_type = DType::kI32;
      a.int_value = static_cast<int64_t>(v);
    } else if (code == 19) {
      a = opaque("#stablehlo.result_accuracy_mode<" + std::string(name) + ">");
    } else {
      a.kind = AttrKind::kEnum;
      a.dialect = "stablehlo";
      a.name = std::string(e->stablehlo_name);
      a.str = std::string(name);
    }
    return Status::ok();
  }
  switch (code) {
  case 1: { // array_v1
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
  case 2: { // bool_v1
    uint64_t v = 0;
    RS_RETURN_IF_ERROR(r.readVarInt(&v));
    if (v > 1)
      return r.error("bool_v1 value " + std::to_string(v) + " (expected 0 or 1)");
    a.kind = AttrKind::kBool;
    a.scalar_type = DType::kBool;
    a.int_value = static_cast<int64_t>(v);
    return Status::ok();
  }
  case 6: { // dict_v1
    uint64_t n = 0;
    RS_RETURN_IF_ERROR(r.readCount(&n, 2));
    a.kind = AttrKind::kDictionary;
    for (uint64_t i = 0; i < n; ++i) {
      const DecodedAttr *key = nullptr, *value = nullptr;
      RS_RETURN_IF_ERROR(sub(&key));
      if (key->attr.kind != AttrKind::kString)
        return r.error("a dict_v1 key must be a string");
      RS_RETURN_IF_ERROR(sub(&value));
      a.fields.push_back({key->attr.str, value->attr});
    }
    std::stable_sort(
        a.fields.begin(), a.fields.end(),
        [](const NamedAttribute &x, const NamedAttribute &y) { return x.name < y.name; });
    return Status::ok();
  }
  case 8: { // float_v1
    const DecodedType *t = nullptr;
    RS_RETURN_IF_ERROR(subType(&t));
    return readFloatAttr(r, *t, &a);
  }
  case 9: { // integer_v1
    const DecodedType *t = nullptr;
    RS_RETURN_IF_ERROR(subType(&t));
    if (t->bit_width <= 0 || t->bit_width > 64)
      return r.error("integer_v1 of type " + t->type.toString() + " is not supported");
    uint64_t bits = 0;
    RS_RETURN_IF_ERROR(readAPInt(r, t->bit_width, &bits));
    a = integerAttr(*t, bits);
    return Status::ok();
  }
  case 10: { // output_operand_alias_v1
    std::vector<int64_t> output, operand;
    int64_t index = 0;
    RS_RETURN_IF_ERROR(readSignedList(r, &output));
    RS_RETURN_IF_ERROR(r.readSignedVarInt(&index));
    RS_RETURN_IF_ERROR(readSignedList(r, &operand));
    a.kind = AttrKind::kStruct;
    a.dialect = "stablehlo";
    a.name = "output_operand_alias";
    a.fields = {{"output_tuple_indices", i64Array(std::move(output))},
                {"operand_index", i64(index)},
                {"operand_tuple_indices", i64Array(std::move(operand))}};
    return Status::ok();
  }
  case 14: { // string_v1
    uint64_t s = 0;
    RS_RETURN_IF_ERROR(r.readVarInt(&s));
    std::string_view str;
    RS_RETURN_IF_ERROR(c_.string(s, &str, r));
    a.kind = AttrKind::kString;
    a.str = std::string(str);
    return Status::ok();
  }
  case 15: { // tensor_v1
    const DecodedType *t = nullptr;
    RS_RETURN_IF_ERROR(subType(&t));
    std::span<const uint8_t> blob;
    RS_RETURN_IF_ERROR(r.readBlob(&blob));
    RS_RETURN_IF_ERROR(denseElements(r, t->type, blob, out));
    out->origin = Origin::kVhlo;
    out->code = code;
    return Status::ok();
  }
  case 17: { // type_v1
    const DecodedType *t = nullptr;
    RS_RETURN_IF_ERROR(subType(&t));
    a.kind = AttrKind::kType;
    a.type = std::make_shared<Type>(t->type);
    return Status::ok();
  }
  case 18: { // type_extensions_v1
    RS_RETURN_IF_ERROR(readSignedList(r, &out->bounds));
    a = opaque(boundsText(out->bounds));
    return Status::ok();
  }
  case 20: { // result_accuracy_v1
    double atol = 0, rtol = 0;
    int64_t ulps = 0;
    RS_RETURN_IF_ERROR(f64(&atol));
    RS_RETURN_IF_ERROR(f64(&rtol));
    RS_RETURN_IF_ERROR(r.readSignedVarInt(&ulps));
    const DecodedAttr *mode = nullptr;
    RS_RETURN_IF_ERROR(sub(&mode));
    if (mode->origin != Origin::kVhlo || mode->code != 19)
      return r.error("result_accuracy_v1 mode must be a result_accuracy_mode_v1");
    a = opaque("#stablehlo.result_accuracy<atol = " + sci(atol) + ", rtol = " + sci(rtol) +
               ", ulps = " + std::to_string(ulps) + ", mode = " + mode->attr.str + ">");
    return Status::ok();
  }
  case 21: { // sub_axis_info_v1: (pre_size)size
    int64_t pre = 0, size = 0;
    RS_RETURN_IF_ERROR(r.readSignedVarInt(&pre));
    RS_RETURN_IF_ERROR(r.readSignedVarInt(&size));
    a = opaque("(" + std::to_string(pre) + ")" + std::to_string(size));
    return Status::ok();
  }
  case 22: { // axis_ref_v1
    const DecodedAttr *name = nullptr;
    RS_RETURN_IF_ERROR(sub(&name));
    uint64_t has_sub = 0;
    RS_RETURN_IF_ERROR(r.readVarInt(&has_sub));
    if (has_sub > 1)
      return r.error("axis_ref_v1 flag " + std::to_string(has_sub) + " (expected 0 or 1)");
    std::string text = "#stablehlo.axis_ref<name = " + printAttribute(name->attr);
    if (has_sub) {
      const DecodedAttr *info = nullptr;
      RS_RETURN_IF_ERROR(sub(&info));
      text += ", sub_axis_info = " + info->attr.str;
    }
    a = opaque(text + ">");
    return Status::ok();
  }
  case 23: { // replica_group_mesh_axes_v1
    const DecodedAttr *mesh = nullptr, *axes = nullptr;
    RS_RETURN_IF_ERROR(sub(&mesh));
    RS_RETURN_IF_ERROR(sub(&axes));
    Attribute m = mesh->attr;
    if (m.kind == AttrKind::kString) // a string mesh names a symbol
      m.kind = AttrKind::kSymbolRef;
    a = opaque("#stablehlo.replica_group_mesh_axes<mesh = " + printAttribute(m) +
               ", axes = " + printAttribute(axes->attr) + ">");
    return Status::ok();
  }
  case 24: { // mesh_axis_v1
    const DecodedAttr *name = nullptr;
    RS_RETURN_IF_ERROR(sub(&name));
    int64_t size = 0;
    RS_RETURN_IF_ERROR(r.readSignedVarInt(&size));
    a = opaque("#stablehlo.mesh_axis<name = " + printAttribute(name->attr) +
               ", size = " + std::to_string(size) + ">");
    return Status::ok();
  }
  case 25: { // mesh_v1
    const DecodedAttr *axes = nullptr;
    RS_RETURN_IF_ERROR(sub(&axes));
    uint64_t device_ids = 0;
    bool present = false;
    RS_RETURN_IF_ERROR(r.readVarIntWithFlag(&device_ids, &present));
    std::string text = "#stablehlo.mesh<axes = " + printAttribute(axes->attr);
    if (present) {
      const DecodedAttr *ids = nullptr;
      RS_RETURN_IF_ERROR(attribute(device_ids, r, &ids));
      text += ", device_ids = " + printAttribute(ids->attr);
    }
    a = opaque(text + ">");
    return Status::ok();
  }
  default:
    return r.error("unknown VHLO attribute code " + std::to_string(code) +
                   " (known: 1 to 25, StableHLO up to " + std::string(currentVhloVersion()) + ")");
  }
}

Status Entries::decodeVhloType(ByteReader &r, DecodedType *out) {
  uint64_t code = 0;
  RS_RETURN_IF_ERROR(r.readVarInt(&code));
  out->is_vhlo = true;
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
  auto scalar = [&](DType t) {
    out->type = scalarType(t);
    out->bit_width = dtypeBitWidth(t);
    return Status::ok();
  };
  auto other = [&](std::string text, int width) {
    out->type = otherType(std::move(text));
    out->bit_width = width;
    return Status::ok();
  };
  switch (code) {
  case 0: return scalar(DType::kBool);
  case 1: { // complex_v1
    const DecodedType *e = nullptr;
    RS_RETURN_IF_ERROR(subType(&e));
    if (e->type == scalarType(DType::kF32))
      return scalar(DType::kComplex64);
    if (e->type == scalarType(DType::kF64))
      return scalar(DType::kComplex128);
    return other("complex<" + e->type.toString() + ">", 0);
  }
  case 2: return scalar(DType::kBF16);
  case 3: return scalar(DType::kF16);
  case 4: return scalar(DType::kF32);
  case 5: return scalar(DType::kF64);
  case 6: return scalar(DType::kF8E4M3FN);
  case 7: return scalar(DType::kF8E5M2);
  case 8: { // func_v1
    out->type.kind = TypeKind::kFunction;
    RS_RETURN_IF_ERROR(typeList(&out->type.elements));
    return typeList(&out->type.results);
  }
  case 9: return other("index", 64);
  case 10: return scalar(DType::kI4);
  case 11: return scalar(DType::kI8);
  case 12: return scalar(DType::kI16);
  case 13: return scalar(DType::kI32);
  case 14: return scalar(DType::kI64);
  case 15: return scalar(DType::kU4);
  case 16: return scalar(DType::kU8);
  case 17: return scalar(DType::kU16);
  case 18: return scalar(DType::kU32);
  case 19: return scalar(DType::kU64);
  case 20:
  case 21: { // tensor_v1 (with an encoding)
    std::string encoding;
    if (code == 21) {
      uint64_t i = 0;
      RS_RETURN_IF_ERROR(r.readVarInt(&i));
      const DecodedAttr *enc = nullptr;
      RS_RETURN_IF_ERROR(attribute(i, r, &enc));
      encoding = enc->attr.kind == AttrKind::kOpaque ? enc->attr.str : printAttribute(enc->attr);
    }
    Shape shape;
    RS_RETURN_IF_ERROR(readShape(r, &shape));
    const DecodedType *e = nullptr;
    RS_RETURN_IF_ERROR(subType(&e));
    out->type = tensorType(std::move(shape), e->type, std::move(encoding));
    return Status::ok();
  }
  case 22: out->type.kind = TypeKind::kToken; return Status::ok();
  case 23: out->type.kind = TypeKind::kTuple; return typeList(&out->type.elements);
  case 24:
  case 30: { // quant_v1, quant_per_axis_v1
    uint64_t flags = 0;
    RS_RETURN_IF_ERROR(r.readVarInt(&flags));
    const DecodedType *storage = nullptr, *expressed = nullptr;
    RS_RETURN_IF_ERROR(subType(&storage));
    RS_RETURN_IF_ERROR(subType(&expressed));
    std::string params;
    int64_t min = 0, max = 0;
    std::string axis;
    if (code == 24) {
      double scale = 0;
      uint64_t bits = 0;
      int64_t zero_point = 0;
      RS_RETURN_IF_ERROR(readAPInt(r, 64, &bits));
      std::memcpy(&scale, &bits, 8);
      RS_RETURN_IF_ERROR(r.readSignedVarInt(&zero_point));
      RS_RETURN_IF_ERROR(r.readSignedVarInt(&min));
      RS_RETURN_IF_ERROR(r.readSignedVarInt(&max));
      params = quantParams(scale, zero_point);
    } else {
      uint64_t dim = 0;
      RS_RETURN_IF_ERROR(r.readVarInt(&dim));
      axis = ":" + std::to_string(dim);
      RS_RETURN_IF_ERROR(r.readSignedVarInt(&min));
      RS_RETURN_IF_ERROR(r.readSignedVarInt(&max));
      uint64_t n = 0;
      RS_RETURN_IF_ERROR(r.readCount(&n));
      std::vector<double> scales(static_cast<size_t>(n));
      for (double &s : scales) {
        uint64_t bits = 0;
        RS_RETURN_IF_ERROR(readAPInt(r, 64, &bits));
        std::memcpy(&s, &bits, 8);
      }
      std::vector<int64_t> zero_points;
      RS_RETURN_IF_ERROR(readSignedList(r, &zero_points));
      if (zero_points.size() != scales.size())
        return r.error("quant_per_axis_v1 has " + std::to_string(scales.size()) + " scales but " +
                       std::to_string(zero_points.size()) + " zero points");
      params = "{";
      for (size_t i = 0; i < scales.size(); ++i)
        params += (i ? "," : "") + quantParams(scales[i], zero_points[i]);
      params += "}";
    }
    return other("!quant.uniform<" + storageText(*storage, flags & 1, min, max) + ":" +
                     expressed->type.toString() + axis + ", " + params + ">",
                 storage->bit_width);
  }
  case 25: { // unranked_tensor_v1
    const DecodedType *e = nullptr;
    RS_RETURN_IF_ERROR(subType(&e));
    return other("tensor<*x" + e->type.toString() + ">", 0);
  }
  case 26: return other("!shape.witness", 0);
  case 27: return scalar(DType::kF8E4M3FNUZ);
  case 28: return scalar(DType::kF8E5M2FNUZ);
  case 29: return scalar(DType::kF8E4M3B11FNUZ);
  case 31: return scalar(DType::kI2);
  case 32: return scalar(DType::kU2);
  case 33: out->is_none = true; return other("none", 0);
  case 34: return other("tf32", 19);
  case 35: return scalar(DType::kF8E4M3);
  case 36: return scalar(DType::kF8E3M4);
  case 37: return scalar(DType::kF4E2M1FN);
  case 38: return scalar(DType::kF6E2M3FN);
  case 39: return scalar(DType::kF6E3M2FN);
  case 40: return scalar(DType::kF8E8M0FNU);
  case 41: { // buffer_v1: memref<shape x element>
    Shape shape;
    RS_RETURN_IF_ERROR(readShape(r, &shape));
    const DecodedType *e = nullptr;
    RS_RETURN_IF_ERROR(subType(&e));
    std::string s = "memref<";
    for (int64_t d : shape)
      s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
    return other(s + e->type.toString() + ">", 0);
  }
  case 42: { // future_v1
    std::vector<Type> types;
    RS_RETURN_IF_ERROR(typeList(&types));
    std::string s = "!stablehlo.future<";
    for (size_t i = 0; i < types.size(); ++i)
      s += (i ? ", " : "") + types[i].toString();
    return other(s + ">", 0);
  }
  default:
    return r.error("unknown VHLO type code " + std::to_string(code) +
                   " (known: 0 to 42, StableHLO up to " + std::string(currentVhloVersion()) + ")");
  }
}

} // namespace rs::ir::bc
