//===- support/dtype.h - Element types -------------------------------------===//
//
// One enum for tensor element types, shared by the IR (MLIR names: f32, i32, ui8, i1,
// complex<f32>), bundles (manifest tokens: f32, i32, u8, bool) and the wire (KServe V2
// datatypes: FP32, INT32, UINT8, BOOL; KServe V2 "Tensor Data Types").
// Booleans (i1) are stored one byte per element, 0 or 1.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace rs {

enum class DType : uint8_t {
  kInvalid,
  kBool, // i1, one byte per element
  kI8,
  kI16,
  kI32,
  kI64,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kComplex64,  // complex<f32>, interleaved re, im
  kComplex128, // complex<f64>
};

/// Bytes per element (bool: 1).
int64_t dtypeSize(DType t);
bool isFloat(DType t);   // f16, bf16, f32, f64
bool isInteger(DType t); // signed or unsigned ints, not bool
bool isSigned(DType t);  // i8..i64
bool isComplex(DType t);

/// MLIR element type spelling: "f32", "i32", "ui8", "i1", "complex<f32>".
std::string_view dtypeMlirName(DType t);
/// Parses an MLIR element type spelling (accepts "si32" as i32); nullopt if unknown.
std::optional<DType> dtypeFromMlirName(std::string_view s);

/// Manifest dtype token (reference-system.md section 1): "f32", "i32", "u8", "bool".
std::string_view dtypeManifestName(DType t);
std::optional<DType> dtypeFromManifestName(std::string_view s);

/// KServe V2 wire datatype: "FP32", "INT32", "UINT8", "BOOL", "BF16". Complex has none.
std::string_view dtypeWireName(DType t);
std::optional<DType> dtypeFromWireName(std::string_view s);

/// safetensors dtype: "F32", "I32", "U8", "BOOL", "BF16", "F16", "F64", "I64".
std::string_view dtypeSafetensorsName(DType t);
std::optional<DType> dtypeFromSafetensorsName(std::string_view s);

} // namespace rs
