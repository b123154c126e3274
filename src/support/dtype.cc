//===- support/dtype.cc - Element types ------------------------------------===//
#include "support/dtype.h"

#include <array>

namespace rs {
namespace {

struct DTypeInfo {
  DType type;
  int64_t size;
  int bits;
  std::string_view mlir, manifest, wire, safetensors;
};

constexpr std::array<DTypeInfo, 30> kInfos = {{
    {DType::kBool, 1, 1, "i1", "bool", "BOOL", "BOOL"},
    {DType::kI8, 1, 8, "i8", "i8", "INT8", "I8"},
    {DType::kI16, 2, 16, "i16", "i16", "INT16", "I16"},
    {DType::kI32, 4, 32, "i32", "i32", "INT32", "I32"},
    {DType::kI64, 8, 64, "i64", "i64", "INT64", "I64"},
    {DType::kU8, 1, 8, "ui8", "u8", "UINT8", "U8"},
    {DType::kU16, 2, 16, "ui16", "u16", "UINT16", "U16"},
    {DType::kU32, 4, 32, "ui32", "u32", "UINT32", "U32"},
    {DType::kU64, 8, 64, "ui64", "u64", "UINT64", "U64"},
    {DType::kF16, 2, 16, "f16", "f16", "FP16", "F16"},
    {DType::kBF16, 2, 16, "bf16", "bf16", "BF16", "BF16"},
    {DType::kF32, 4, 32, "f32", "f32", "FP32", "F32"},
    {DType::kF64, 8, 64, "f64", "f64", "FP64", "F64"},
    {DType::kComplex64, 8, 64, "complex<f32>", "", "", "C64"},
    {DType::kComplex128, 16, 128, "complex<f64>", "", "", "C128"},
    {DType::kI2, 1, 2, "i2", "", "", ""},
    {DType::kI4, 1, 4, "i4", "", "", ""},
    {DType::kU2, 1, 2, "ui2", "", "", ""},
    {DType::kU4, 1, 4, "ui4", "", "", ""},
    {DType::kF4E2M1FN, 1, 4, "f4E2M1FN", "", "", ""},
    {DType::kF6E2M3FN, 1, 6, "f6E2M3FN", "", "", ""},
    {DType::kF6E3M2FN, 1, 6, "f6E3M2FN", "", "", ""},
    {DType::kF8E3M4, 1, 8, "f8E3M4", "", "", ""},
    {DType::kF8E4M3, 1, 8, "f8E4M3", "", "", ""},
    {DType::kF8E4M3FN, 1, 8, "f8E4M3FN", "", "", ""},
    {DType::kF8E4M3FNUZ, 1, 8, "f8E4M3FNUZ", "", "", ""},
    {DType::kF8E4M3B11FNUZ, 1, 8, "f8E4M3B11FNUZ", "", "", ""},
    {DType::kF8E5M2, 1, 8, "f8E5M2", "", "", ""},
    {DType::kF8E5M2FNUZ, 1, 8, "f8E5M2FNUZ", "", "", ""},
    {DType::kF8E8M0FNU, 1, 8, "f8E8M0FNU", "", "", ""},
}};

const DTypeInfo *find(DType t) {
  for (const auto &i : kInfos)
    if (i.type == t)
      return &i;
  return nullptr;
}

template <typename Field> std::optional<DType> lookup(std::string_view s, Field field) {
  if (s.empty())
    return std::nullopt;
  for (const auto &i : kInfos)
    if (i.*field == s)
      return i.type;
  return std::nullopt;
}

} // namespace

int64_t dtypeSize(DType t) {
  const DTypeInfo *i = find(t);
  return i ? i->size : 0;
}
int dtypeBitWidth(DType t) {
  const DTypeInfo *i = find(t);
  return i ? i->bits : 0;
}
bool isFloat(DType t) {
  return t == DType::kF16 || t == DType::kBF16 || t == DType::kF32 || t == DType::kF64 ||
         isMinifloat(t);
}
bool isInteger(DType t) { return (t >= DType::kI8 && t <= DType::kU64) || isSubByteInt(t); }
bool isSigned(DType t) {
  return (t >= DType::kI8 && t <= DType::kI64) || t == DType::kI2 || t == DType::kI4;
}
bool isSubByteInt(DType t) { return t >= DType::kI2 && t <= DType::kU4; }
bool isMinifloat(DType t) { return t >= DType::kF4E2M1FN && t <= DType::kF8E8M0FNU; }
bool isComplex(DType t) { return t == DType::kComplex64 || t == DType::kComplex128; }

std::string_view dtypeMlirName(DType t) {
  const DTypeInfo *i = find(t);
  return i ? i->mlir : "invalid";
}
std::optional<DType> dtypeFromMlirName(std::string_view s) {
  if (s.size() > 2 && s.substr(0, 2) == "si")
    s.remove_prefix(1);
  return lookup(s, &DTypeInfo::mlir);
}
std::string_view dtypeManifestName(DType t) {
  const DTypeInfo *i = find(t);
  return i ? i->manifest : "invalid";
}
std::optional<DType> dtypeFromManifestName(std::string_view s) {
  return lookup(s, &DTypeInfo::manifest);
}
std::string_view dtypeWireName(DType t) {
  const DTypeInfo *i = find(t);
  return i ? i->wire : "INVALID";
}
std::optional<DType> dtypeFromWireName(std::string_view s) { return lookup(s, &DTypeInfo::wire); }
std::string_view dtypeSafetensorsName(DType t) {
  const DTypeInfo *i = find(t);
  return i ? i->safetensors : "INVALID";
}
std::optional<DType> dtypeFromSafetensorsName(std::string_view s) {
  return lookup(s, &DTypeInfo::safetensors);
}

} // namespace rs
