//===- ir/float_bits.h - f16 / bf16 conversions ----------------------------===//
//
// Conversions between double and the 16-bit float formats that dense constants hold
// (IEEE binary16 and bfloat16), rounding to nearest-even, keeping NaN (quiet) and
// infinities, with subnormals. Used by the parser (decimal literals) and the printer.
// Thread safety: pure functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace rs::ir {

/// Rounds `v` to nearest-even in a binary format with `exp_bits` exponent and
/// `mant_bits` stored mantissa bits (IEEE layout, max 11/52), returning its bits.
uint64_t roundToFloatBits(double v, int exp_bits, int mant_bits);
/// The value of IEEE-layout bits of that format, exactly.
double floatBitsToDouble(uint64_t bits, int exp_bits, int mant_bits);

inline uint16_t doubleToHalfBits(double v) {
  return static_cast<uint16_t>(roundToFloatBits(v, 5, 10));
}
inline uint16_t doubleToBF16Bits(double v) {
  return static_cast<uint16_t>(roundToFloatBits(v, 8, 7));
}
inline double halfBitsToDouble(uint16_t b) { return floatBitsToDouble(b, 5, 10); }
inline double bf16BitsToDouble(uint16_t b) { return floatBitsToDouble(b, 8, 7); }

} // namespace rs::ir
