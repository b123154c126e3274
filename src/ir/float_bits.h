//===- ir/float_bits.h - f16 / bf16 / minifloat conversions ----------------===//
//
// Conversions between float or double and the narrow float formats that dense constants
// hold (IEEE binary16 and bfloat16), rounding to nearest-even, keeping NaN (quiet) and
// infinities, with subnormals. The one f16/bf16 conversion of the project: the parser
// (decimal literals), the printer and the CPU executor's F16/BF16 (cpu/kernels/half.h) use
// it; the float forms are inline for the kernels' loops.
//
// The minifloats (f4E2M1FN, f6E2M3FN, f6E3M2FN, f8E3M4, f8E4M3, f8E4M3FN, f8E4M3FNUZ,
// f8E4M3B11FNUZ, f8E5M2, f8E5M2FNUZ, f8E8M0FNU; StableHLO spec, "Types") are described by
// a FloatFormat, with the encodings of LLVM APFloat's semantics of the same names: the
// exponent bias, whether the all-ones exponent means infinity/NaN (IEEE-like E5M2, E4M3,
// E3M4), only NaN with an all-ones mantissa (FN, E8M0FNU), the bit pattern of -0 is the
// only NaN and there is no -0 (FNUZ), or there is no infinity and no NaN at all (the FP4
// and FP6 formats). The CPU executor computes on them in f32 and rounds back with
// roundToMinifloat; the parser and printer use the same two functions, so a literal means
// one value everywhere. Thread safety: pure functions over constant tables.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/dtype.h"

#include <bit>
#include <cmath>
#include <cstdint>

namespace rs::ir {

/// `f` rounded to nearest-even in f16, as bits (NaN quieted, its top payload bits kept).
inline uint16_t floatToF16Bits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) // inf or NaN (quieted, top payload bits kept)
    return static_cast<uint16_t>(sign | 0x7c00u |
                                 (a > 0x7f800000u ? 0x200u | ((a >> 13) & 0x3ffu) : 0u));
  if (a >= 0x477ff000u) // >= 65520 rounds to infinity
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (a < 0x38800000u) { // below 2^-14: subnormal or zero, in units of 2^-24
    const float v = std::bit_cast<float>(a) * 16777216.0f; // exact scaling
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(v)));
  }
  uint32_t bits = a - ((127u - 15u) << 23);
  bits += 0xfffu + ((bits >> 13) & 1u);
  return static_cast<uint16_t>(sign | (bits >> 13));
}

/// The exact value of f16 bits.
inline float f16BitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f)
    return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

/// `f` rounded to nearest-even in bf16, as bits (NaN quieted).
inline uint16_t floatToBF16Bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

/// `d` rounded to float with round-to-odd, so a second rounding to a narrower format
/// (f16, bf16) is correct.
inline float roundToOddFloat(double d) {
  if (!std::isfinite(d))
    return static_cast<float>(d);
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d || std::isinf(f))
    return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d))
    f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

/// The exact value of bf16 bits (the top half of an f32).
inline float bf16BitsToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

/// `v` rounded to nearest-even in f16 / bf16 (through roundToOddFloat: one correct
/// rounding), as bits.
inline uint16_t doubleToHalfBits(double v) { return floatToF16Bits(roundToOddFloat(v)); }
inline uint16_t doubleToBF16Bits(double v) { return floatToBF16Bits(roundToOddFloat(v)); }
/// The exact value of f16 / bf16 bits.
inline double halfBitsToDouble(uint16_t b) { return f16BitsToFloat(b); }
inline double bf16BitsToDouble(uint16_t b) { return bf16BitsToFloat(b); }

/// The exact value of IEEE-layout bits of a binary format with `exp_bits` exponent and
/// `mant_bits` stored mantissa bits (max 11/52).
double floatBitsToDouble(uint64_t bits, int exp_bits, int mant_bits);

/// What a minifloat's special encodings mean (LLVM APFloat's fltNonfiniteBehavior and
/// fltNanEncoding).
enum class NonFinite : uint8_t {
  kIeee,       // all-ones exponent: infinity (zero mantissa) or NaN (f8E5M2, f8E4M3, f8E3M4)
  kNanAllOnes, // no infinity; all-ones exponent and mantissa is NaN (f8E4M3FN, f8E8M0FNU)
  kNanNegZero, // no infinity and no -0; the pattern of -0 (sign bit only) is NaN (FNUZ)
  kFiniteOnly, // no infinity and no NaN (f4E2M1FN, f6E2M3FN, f6E3M2FN)
};

/// A minifloat format: sign bit (when `has_sign`), `exp_bits` exponent bits with `bias`,
/// `mant_bits` stored mantissa bits, in the low 1 + exp_bits + mant_bits bits of a byte.
/// `subnormals` false (f8E8M0FNU) means exponent field 0 is a normal number and there is
/// no zero.
struct FloatFormat {
  int exp_bits = 0;
  int mant_bits = 0;
  int bias = 0;
  NonFinite non_finite = NonFinite::kIeee;
  bool has_sign = true;
  bool subnormals = true;
};

/// The format of a minifloat dtype, or nullptr for any other dtype.
const FloatFormat *minifloatFormat(DType t);

/// `v` rounded to nearest-even in `f`, as bits. Overflow (a value that rounds above the
/// largest finite one) and infinities give infinity (kIeee), NaN (kNanAllOnes,
/// kNanNegZero) or the largest finite value with the sign of `v` (kFiniteOnly: the
/// saturation of APFloat's FiniteOnly semantics). NaN gives the format's NaN (quiet for
/// kIeee, sign kept where the format has one) or +0 for kFiniteOnly. -0 and negative values
/// rounding to zero give +0 in the FNUZ formats. f8E8M0FNU: zero, negatives and NaN give its
/// NaN (0xFF); positive values below 2^-127 give 2^-127 from 2^-128 up, else NaN.
uint8_t roundToMinifloat(double v, const FloatFormat &f);
/// The exact value of minifloat bits `bits` (bits above the format's width ignored); NaN
/// for its NaN encodings.
double minifloatToDouble(uint8_t bits, const FloatFormat &f);
/// Whether `bits` encode NaN in `f`.
bool minifloatIsNaN(uint8_t bits, const FloatFormat &f);

/// The bit pattern of `v` rounded to nearest-even in the float dtype `t` (f16, bf16, f32,
/// f64 or a minifloat; any other dtype is treated as bf16), in the low bits.
uint64_t floatBitsOf(double v, DType t);
/// The exact value of float bits `bits` of dtype `t` (as floatBitsOf).
double floatFromBits(uint64_t bits, DType t);
/// `v` rounded to the float dtype `t`: what a `v : t` attribute holds.
inline double roundToFloatType(double v, DType t) { return floatFromBits(floatBitsOf(v, t), t); }

} // namespace rs::ir
