//===- ir/vhlo_types.cc - Type entries: VHLO ------------------------------===//
//
// VHLO's type codes (vhlo-bytecode.md 3.2; stablehlo/dialect/VhloBytecode.cpp), decoded
// straight into the StableHLO / builtin type they convert to (VhloTypes.cpp,
// addVhloToBuiltinConversions): scalars to DTypes, tensor_v1 to tensors (a
// type_extensions_v1 encoding as #stablehlo.bounds), and the quantized, token, tuple,
// future, buffer and witness types in MLIR's spelling.
//
//===----------------------------------------------------------------------===//
#include "ir/bytecode_impl.h"

#include <cstring>

namespace rs::ir::bc {
namespace {

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
  std::string s = sciText(scale);
  if (zero_point != 0)
    s += ":" + std::to_string(zero_point);
  return s;
}

} // namespace

Status Entries::decodeVhloType(ByteReader &r, uint64_t code, DecodedType *out) {
  out->is_vhlo = true;
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
    RS_RETURN_IF_ERROR(typeRef(r, &e));
    out->type = complexType(e->type);
    return Status::ok();
  }
  case 2: return scalar(DType::kBF16);
  case 3: return scalar(DType::kF16);
  case 4: return scalar(DType::kF32);
  case 5: return scalar(DType::kF64);
  case 6: return scalar(DType::kF8E4M3FN);
  case 7: return scalar(DType::kF8E5M2);
  case 8: { // func_v1
    out->type.kind = TypeKind::kFunction;
    RS_RETURN_IF_ERROR(typeList(r, &out->type.elements));
    return typeList(r, &out->type.results);
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
  case 21: return rankedTensorType(r, code == 21, &out->type); // tensor_v1 (with an encoding)
  case 22: out->type.kind = TypeKind::kToken; return Status::ok();
  case 23: out->type.kind = TypeKind::kTuple; return typeList(r, &out->type.elements);
  case 24:
  case 30: { // quant_v1, quant_per_axis_v1
    uint64_t flags = 0;
    RS_RETURN_IF_ERROR(r.readVarInt(&flags));
    const DecodedType *storage = nullptr, *expressed = nullptr;
    RS_RETURN_IF_ERROR(typeRef(r, &storage));
    RS_RETURN_IF_ERROR(typeRef(r, &expressed));
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
    RS_RETURN_IF_ERROR(typeRef(r, &e));
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
    RS_RETURN_IF_ERROR(typeRef(r, &e));
    std::string s = "memref<";
    for (int64_t d : shape)
      s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
    return other(s + e->type.toString() + ">", 0);
  }
  case 42: { // future_v1
    std::vector<Type> types;
    RS_RETURN_IF_ERROR(typeList(r, &types));
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
