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

std::string boundsText(const std::vector<int64_t> &bounds) {
  std::string s = "#stablehlo.bounds<";
  for (size_t i = 0; i < bounds.size(); ++i)
    s += (i ? ", " : "") + (bounds[i] == INT64_MIN ? std::string("?") : std::to_string(bounds[i]));
  return s + ">";
}

} // namespace

Status Entries::decodeVhloAttr(ByteReader &r, uint64_t code, DecodedAttr *out) {
  Attribute &a = out->attr;
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
  case 1: return arrayAttr(r, &a); // array_v1
  case 2: {                        // bool_v1
    uint64_t v = 0;
    RS_RETURN_IF_ERROR(r.readVarInt(&v));
    if (v > 1)
      return r.error("bool_v1 value " + std::to_string(v) + " (expected 0 or 1)");
    a.kind = AttrKind::kBool;
    a.scalar_type = DType::kBool;
    a.int_value = static_cast<int64_t>(v);
    return Status::ok();
  }
  case 6: return dictionaryAttr(r, &a); // dict_v1
  case 8: {                             // float_v1
    const DecodedType *t = nullptr;
    RS_RETURN_IF_ERROR(typeRef(r, &t));
    return readFloatAttr(r, *t, &a);
  }
  case 9: return typedIntegerAttr(r, "integer_v1", &a);
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
  case 14: return stringAttr(r, &a); // string_v1
  case 15: {                         // tensor_v1
    const DecodedType *t = nullptr;
    RS_RETURN_IF_ERROR(typeRef(r, &t));
    std::span<const uint8_t> blob;
    RS_RETURN_IF_ERROR(r.readBlob(&blob));
    RS_RETURN_IF_ERROR(denseElements(r, t->type, blob, out));
    out->origin = Origin::kVhlo;
    out->code = code;
    return Status::ok();
  }
  case 17: return typeAttr(r, &a); // type_v1
  case 18: {                       // type_extensions_v1
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
    RS_RETURN_IF_ERROR(attrRef(r, &mode));
    if (mode->origin != Origin::kVhlo || mode->code != 19)
      return r.error("result_accuracy_v1 mode must be a result_accuracy_mode_v1");
    a = opaque("#stablehlo.result_accuracy<atol = " + sciText(atol) + ", rtol = " + sciText(rtol) +
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
    RS_RETURN_IF_ERROR(attrRef(r, &name));
    uint64_t has_sub = 0;
    RS_RETURN_IF_ERROR(r.readVarInt(&has_sub));
    if (has_sub > 1)
      return r.error("axis_ref_v1 flag " + std::to_string(has_sub) + " (expected 0 or 1)");
    std::string text = "#stablehlo.axis_ref<name = " + printAttribute(name->attr);
    if (has_sub) {
      const DecodedAttr *info = nullptr;
      RS_RETURN_IF_ERROR(attrRef(r, &info));
      text += ", sub_axis_info = " + info->attr.str;
    }
    a = opaque(text + ">");
    return Status::ok();
  }
  case 23: { // replica_group_mesh_axes_v1
    const DecodedAttr *mesh = nullptr, *axes = nullptr;
    RS_RETURN_IF_ERROR(attrRef(r, &mesh));
    RS_RETURN_IF_ERROR(attrRef(r, &axes));
    Attribute m = mesh->attr;
    if (m.kind == AttrKind::kString) // a string mesh names a symbol
      m.kind = AttrKind::kSymbolRef;
    a = opaque("#stablehlo.replica_group_mesh_axes<mesh = " + printAttribute(m) +
               ", axes = " + printAttribute(axes->attr) + ">");
    return Status::ok();
  }
  case 24: { // mesh_axis_v1
    const DecodedAttr *name = nullptr;
    RS_RETURN_IF_ERROR(attrRef(r, &name));
    int64_t size = 0;
    RS_RETURN_IF_ERROR(r.readSignedVarInt(&size));
    a = opaque("#stablehlo.mesh_axis<name = " + printAttribute(name->attr) +
               ", size = " + std::to_string(size) + ">");
    return Status::ok();
  }
  case 25: { // mesh_v1
    const DecodedAttr *axes = nullptr;
    RS_RETURN_IF_ERROR(attrRef(r, &axes));
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

std::string sciText(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%e", v);
  return buf;
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

} // namespace rs::ir::bc
