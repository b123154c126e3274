//===- support/dtype.cc - Element types ------------------------------------===//
#include "support/dtype.h"

#include <array>

namespace rs {
namespace {

struct DTypeInfo {
  DType type;
  int64_t size;
  std::string_view mlir, manifest, wire, safetensors;
};

constexpr std::array<DTypeInfo, 15> kInfos = {{
    {DType::kBool, 1, "i1", "bool", "BOOL", "BOOL"},
    {DType::kI8, 1, "i8", "i8", "INT8", "I8"},
    {DType::kI16, 2, "i16", "i16", "INT16", "I16"},
    {DType::kI32, 4, "i32", "i32", "INT32", "I32"},
    {DType::kI64, 8, "i64", "i64", "INT64", "I64"},
    {DType::kU8, 1, "ui8", "u8", "UINT8", "U8"},
    {DType::kU16, 2, "ui16", "u16", "UINT16", "U16"},
    {DType::kU32, 4, "ui32", "u32", "UINT32", "U32"},
    {DType::kU64, 8, "ui64", "u64", "UINT64", "U64"},
    {DType::kF16, 2, "f16", "f16", "FP16", "F16"},
    {DType::kBF16, 2, "bf16", "bf16", "BF16", "BF16"},
    {DType::kF32, 4, "f32", "f32", "FP32", "F32"},
    {DType::kF64, 8, "f64", "f64", "FP64", "F64"},
    {DType::kComplex64, 8, "complex<f32>", "", "", "C64"},
    {DType::kComplex128, 16, "complex<f64>", "", "", "C128"},
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
bool isFloat(DType t) {
  return t == DType::kF16 || t == DType::kBF16 || t == DType::kF32 || t == DType::kF64;
}
bool isInteger(DType t) { return t >= DType::kI8 && t <= DType::kU64; }
bool isSigned(DType t) { return t >= DType::kI8 && t <= DType::kI64; }
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
