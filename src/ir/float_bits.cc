//===- ir/float_bits.cc - f16 / bf16 / minifloat conversions ---------------===//
#include "ir/float_bits.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace rs::ir {
namespace {

/// m >> s rounded to nearest, ties to even.
uint64_t shiftRoundEven(uint64_t m, int s) {
  if (s <= 0)
    return m << (-s);
  if (s >= 64)
    return 0;
  uint64_t q = m >> s;
  uint64_t r = m & ((uint64_t{1} << s) - 1);
  uint64_t half = uint64_t{1} << (s - 1);
  if (r > half || (r == half && (q & 1)))
    ++q;
  return q;
}

} // namespace

double floatBitsToDouble(uint64_t bits, int exp_bits, int mant_bits) {
  uint64_t mant = bits & ((uint64_t{1} << mant_bits) - 1);
  uint64_t exp_all = (uint64_t{1} << exp_bits) - 1;
  uint64_t e = (bits >> mant_bits) & exp_all;
  bool neg = (bits >> (exp_bits + mant_bits)) & 1;
  int bias = (1 << (exp_bits - 1)) - 1;
  double r = 0;
  if (e == exp_all)
    r = mant ? std::nan("") : INFINITY;
  else if (e == 0)
    r = std::ldexp(static_cast<double>(mant), 1 - bias - mant_bits);
  else
    r = std::ldexp(static_cast<double>(mant | (uint64_t{1} << mant_bits)),
                   static_cast<int>(e) - bias - mant_bits);
  return neg ? -r : r;
}

//===----------------------------------------------------------------------===//
// Minifloats
//===----------------------------------------------------------------------===//

namespace {

// Exponent and mantissa widths and biases of LLVM APFloat's semantics (bias = 1 - the
// minimum normal exponent, or -minExponent for f8E8M0FNU, which has no subnormals).
constexpr FloatFormat kF4E2M1FN{2, 1, 1, NonFinite::kFiniteOnly};
constexpr FloatFormat kF6E2M3FN{2, 3, 1, NonFinite::kFiniteOnly};
constexpr FloatFormat kF6E3M2FN{3, 2, 3, NonFinite::kFiniteOnly};
constexpr FloatFormat kF8E3M4{3, 4, 3, NonFinite::kIeee};
constexpr FloatFormat kF8E4M3{4, 3, 7, NonFinite::kIeee};
constexpr FloatFormat kF8E4M3FN{4, 3, 7, NonFinite::kNanAllOnes};
constexpr FloatFormat kF8E4M3FNUZ{4, 3, 8, NonFinite::kNanNegZero};
constexpr FloatFormat kF8E4M3B11FNUZ{4, 3, 11, NonFinite::kNanNegZero};
constexpr FloatFormat kF8E5M2{5, 2, 15, NonFinite::kIeee};
constexpr FloatFormat kF8E5M2FNUZ{5, 2, 16, NonFinite::kNanNegZero};
constexpr FloatFormat kF8E8M0FNU{8,
                                 0,
                                 127,
                                 NonFinite::kNanAllOnes,
                                 /*has_sign=*/false,
                                 /*subnormals=*/false};

int signShift(const FloatFormat &f) { return f.exp_bits + f.mant_bits; }
uint32_t expAll(const FloatFormat &f) { return (1u << f.exp_bits) - 1; }
uint32_t mantAll(const FloatFormat &f) { return (1u << f.mant_bits) - 1; }

uint8_t nanBits(const FloatFormat &f, bool neg) {
  const uint32_t sign = neg && f.has_sign ? 1u << signShift(f) : 0;
  switch (f.non_finite) {
  case NonFinite::kIeee:
    return static_cast<uint8_t>(sign | (expAll(f) << f.mant_bits) | (1u << (f.mant_bits - 1)));
  case NonFinite::kNanAllOnes:
    return static_cast<uint8_t>(sign | (expAll(f) << f.mant_bits) | mantAll(f));
  case NonFinite::kNanNegZero: return static_cast<uint8_t>(1u << signShift(f));
  case NonFinite::kFiniteOnly: return 0;
  }
  return 0;
}

/// The largest finite magnitude's bits (no sign).
uint32_t maxFiniteBits(const FloatFormat &f) {
  switch (f.non_finite) {
  case NonFinite::kIeee: return ((expAll(f) - 1) << f.mant_bits) | mantAll(f);
  case NonFinite::kNanAllOnes:
    return f.mant_bits == 0 ? expAll(f) - 1 : (expAll(f) << f.mant_bits) | (mantAll(f) - 1);
  case NonFinite::kNanNegZero:
  case NonFinite::kFiniteOnly: return (expAll(f) << f.mant_bits) | mantAll(f);
  }
  return 0;
}

/// What a value beyond the largest finite one becomes.
uint8_t overflowBits(const FloatFormat &f, bool neg) {
  const uint32_t sign = neg && f.has_sign ? 1u << signShift(f) : 0;
  switch (f.non_finite) {
  case NonFinite::kIeee: return static_cast<uint8_t>(sign | (expAll(f) << f.mant_bits));
  case NonFinite::kNanAllOnes:
  case NonFinite::kNanNegZero: return nanBits(f, neg);
  case NonFinite::kFiniteOnly: return static_cast<uint8_t>(sign | maxFiniteBits(f));
  }
  return 0;
}

} // namespace

const FloatFormat *minifloatFormat(DType t) {
  switch (t) {
  case DType::kF4E2M1FN: return &kF4E2M1FN;
  case DType::kF6E2M3FN: return &kF6E2M3FN;
  case DType::kF6E3M2FN: return &kF6E3M2FN;
  case DType::kF8E3M4: return &kF8E3M4;
  case DType::kF8E4M3: return &kF8E4M3;
  case DType::kF8E4M3FN: return &kF8E4M3FN;
  case DType::kF8E4M3FNUZ: return &kF8E4M3FNUZ;
  case DType::kF8E4M3B11FNUZ: return &kF8E4M3B11FNUZ;
  case DType::kF8E5M2: return &kF8E5M2;
  case DType::kF8E5M2FNUZ: return &kF8E5M2FNUZ;
  case DType::kF8E8M0FNU: return &kF8E8M0FNU;
  default: return nullptr;
  }
}

bool minifloatIsNaN(uint8_t bits, const FloatFormat &f) {
  const uint32_t b = bits & ((1u << (signShift(f) + (f.has_sign ? 1 : 0))) - 1);
  const uint32_t e = (b >> f.mant_bits) & expAll(f), m = b & mantAll(f);
  switch (f.non_finite) {
  case NonFinite::kIeee: return e == expAll(f) && m != 0;
  case NonFinite::kNanAllOnes: return e == expAll(f) && m == mantAll(f);
  case NonFinite::kNanNegZero: return b == 1u << signShift(f);
  case NonFinite::kFiniteOnly: return false;
  }
  return false;
}

double minifloatToDouble(uint8_t bits, const FloatFormat &f) {
  if (minifloatIsNaN(bits, f))
    return std::numeric_limits<double>::quiet_NaN();
  const uint32_t e = (bits >> f.mant_bits) & expAll(f), m = bits & mantAll(f);
  const bool neg = f.has_sign && ((bits >> signShift(f)) & 1);
  double r = 0;
  if (f.non_finite == NonFinite::kIeee && e == expAll(f))
    r = std::numeric_limits<double>::infinity();
  else if (e == 0 && f.subnormals)
    r = std::ldexp(static_cast<double>(m), 1 - f.bias - f.mant_bits);
  else
    r = std::ldexp(static_cast<double>(m | (1u << f.mant_bits)),
                   static_cast<int>(e) - f.bias - f.mant_bits);
  return neg ? -r : r;
}

uint8_t roundToMinifloat(double v, const FloatFormat &f) {
  const bool neg = std::signbit(v);
  if (std::isnan(v))
    return nanBits(f, neg);
  if (!f.has_sign && (neg || v == 0)) // f8E8M0FNU: no sign and no zero
    return nanBits(f, false);
  const bool unsigned_zero = f.non_finite == NonFinite::kNanNegZero;
  const uint32_t sign = neg ? 1u << signShift(f) : 0;
  if (std::isinf(v))
    return overflowBits(f, neg);
  if (v == 0)
    return static_cast<uint8_t>(unsigned_zero ? 0 : sign);
  uint64_t d = 0;
  std::memcpy(&d, &v, sizeof d);
  int e = static_cast<int>((d >> 52) & 0x7FF);
  uint64_t m = d & ((uint64_t{1} << 52) - 1);
  if (e == 0) // double subnormal: far below any minifloat's range
    e = 1;
  else
    m |= uint64_t{1} << 52;
  const int unbiased = e - 1023;
  const int min_field = f.subnormals ? 1 : 0; // smallest exponent field of a normal number
  uint32_t magnitude = 0;
  if (unbiased + f.bias >= min_field) {
    uint64_t q = shiftRoundEven(m, 52 - f.mant_bits); // with the implicit bit
    int64_t field = unbiased + f.bias;
    if (q >> (f.mant_bits + 1)) { // rounding carried into the next power of two
      q >>= 1;
      ++field;
    }
    if (field > static_cast<int64_t>(expAll(f)))
      return overflowBits(f, neg);
    magnitude =
        (static_cast<uint32_t>(field) << f.mant_bits) | (static_cast<uint32_t>(q) & mantAll(f));
    if (magnitude > maxFiniteBits(f))
      return overflowBits(f, neg);
  } else if (!f.subnormals) { // f8E8M0FNU below 2^-127
    return v >= std::ldexp(1.0, -f.bias - 1) ? 0 : nanBits(f, false);
  } else {
    // Subnormal: value = m * 2^(unbiased - 52); unit = 2^(1 - bias - mant_bits). A carry
    // into 2^mant_bits lands on the smallest normal, as it should.
    const int s = (1 - f.bias - f.mant_bits) - (unbiased - 52);
    magnitude = static_cast<uint32_t>(shiftRoundEven(m, s));
  }
  if (magnitude == 0 && unsigned_zero)
    return 0;
  return static_cast<uint8_t>(sign | magnitude);
}

uint64_t floatBitsOf(double v, DType t) {
  if (t == DType::kF64) {
    uint64_t b = 0;
    std::memcpy(&b, &v, 8);
    return b;
  }
  if (t == DType::kF32) {
    float f = static_cast<float>(v);
    uint32_t b = 0;
    std::memcpy(&b, &f, 4);
    return b;
  }
  if (const FloatFormat *f = minifloatFormat(t))
    return roundToMinifloat(v, *f);
  return t == DType::kF16 ? doubleToHalfBits(v) : doubleToBF16Bits(v);
}

double floatFromBits(uint64_t bits, DType t) {
  if (t == DType::kF64) {
    double d = 0;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  if (t == DType::kF32) {
    uint32_t b = static_cast<uint32_t>(bits);
    float f = 0;
    std::memcpy(&f, &b, 4);
    return f;
  }
  if (const FloatFormat *f = minifloatFormat(t))
    return minifloatToDouble(static_cast<uint8_t>(bits), *f);
  return t == DType::kF16 ? halfBitsToDouble(static_cast<uint16_t>(bits))
                          : bf16BitsToDouble(static_cast<uint16_t>(bits));
}

} // namespace rs::ir
