//===- support/dtype.h - Element types -------------------------------------===//
//
// One enum for tensor element types, shared by the IR (MLIR names: f32, i32, ui8, i1,
// complex<f32>), bundles (manifest tokens: f32, i32, u8, bool) and the wire (KServe V2
// datatypes: FP32, INT32, UINT8, BOOL; KServe V2 "Tensor Data Types").
// Booleans (i1) are stored one byte per element, 0 or 1.
// The sub-byte integers (i2, ui2, i4, ui4) and the minifloats (f4E2M1FN ... f8E8M0FNU; the
// StableHLO spec, "Types", with the encodings of LLVM's APFloat semantics) are also stored
// one byte per element: a sub-byte integer as the sign-extended (i2, i4) or zero-extended
// (ui2, ui4) 8-bit value, always in range; a minifloat as its bit pattern in the low bits.
// They live only inside programs: they have no manifest, KServe or safetensors name.
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
  // One byte per element, in the executor only (see the file comment).
  kI2,
  kI4,
  kU2,
  kU4,
  kF4E2M1FN,
  kF6E2M3FN,
  kF6E3M2FN,
  kF8E3M4,
  kF8E4M3,
  kF8E4M3FN,
  kF8E4M3FNUZ,
  kF8E4M3B11FNUZ,
  kF8E5M2,
  kF8E5M2FNUZ,
  kF8E8M0FNU,
};

/// Bytes per element (bool, sub-byte integers and minifloats: 1).
int64_t dtypeSize(DType t);
/// Bits of the value: 1 for i1, 2 or 4 for the sub-byte integers, 4, 6 or 8 for the
/// minifloats, else 8 * dtypeSize; 0 for kInvalid.
int dtypeBitWidth(DType t);
bool isFloat(DType t);      // f16, bf16, f32, f64 and the minifloats
bool isInteger(DType t);    // signed or unsigned ints (sub-byte ones included), not bool
bool isSigned(DType t);     // i2, i4, i8..i64
bool isSubByteInt(DType t); // i2, ui2, i4, ui4
bool isMinifloat(DType t);  // f4E2M1FN ... f8E8M0FNU
bool isComplex(DType t);

/// MLIR element type spelling: "f32", "i32", "ui8", "i1", "complex<f32>".
std::string_view dtypeMlirName(DType t);
/// Parses an MLIR element type spelling (accepts "si32" as i32); nullopt if unknown.
std::optional<DType> dtypeFromMlirName(std::string_view s);

/// Manifest dtype token (reference-system.md section 1): "f32", "i32", "u8", "bool"; empty
/// for complex, the sub-byte integers and the minifloats, which a bundle cannot declare.
std::string_view dtypeManifestName(DType t);
std::optional<DType> dtypeFromManifestName(std::string_view s);

/// KServe V2 wire datatype: "FP32", "INT32", "UINT8", "BOOL", "BF16". Complex, the sub-byte
/// integers and the minifloats have none (empty name).
std::string_view dtypeWireName(DType t);
std::optional<DType> dtypeFromWireName(std::string_view s);

/// safetensors dtype: "F32", "I32", "U8", "BOOL", "BF16", "F16", "F64", "I64"; empty for the
/// sub-byte integers and the minifloats.
std::string_view dtypeSafetensorsName(DType t);
std::optional<DType> dtypeFromSafetensorsName(std::string_view s);

} // namespace rs
