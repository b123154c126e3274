//===- ir/float_bits.cc - f16 / bf16 conversions ---------------------------===//
#include "ir/float_bits.h"

#include <cmath>
#include <cstring>

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

uint64_t roundToFloatBits(double v, int exp_bits, int mant_bits) {
  uint64_t d = 0;
  std::memcpy(&d, &v, sizeof d);
  uint64_t sign = (d >> 63) << (exp_bits + mant_bits);
  uint64_t exp_all = (uint64_t{1} << exp_bits) - 1;
  uint64_t inf = exp_all << mant_bits;
  if (std::isnan(v))
    return sign | inf | (uint64_t{1} << (mant_bits - 1));
  if (std::isinf(v))
    return sign | inf;
  if (v == 0)
    return sign;
  int e = static_cast<int>((d >> 52) & 0x7FF);
  uint64_t m = d & ((uint64_t{1} << 52) - 1);
  if (e == 0) { // double subnormal: far below any target format's range
    e = 1;
  } else {
    m |= uint64_t{1} << 52;
  }
  int unbiased = e - 1023;
  int bias = (1 << (exp_bits - 1)) - 1;
  int emin = 1 - bias;
  if (unbiased >= emin) {
    uint64_t q = shiftRoundEven(m, 52 - mant_bits); // includes the implicit bit
    int te = unbiased + bias;
    if (q >> (mant_bits + 1)) { // rounding carried into a new power of two
      q >>= 1;
      ++te;
    }
    if (te >= static_cast<int>(exp_all))
      return sign | inf;
    return sign | (static_cast<uint64_t>(te) << mant_bits) | (q & ((uint64_t{1} << mant_bits) - 1));
  }
  // Subnormal in the target: value = m * 2^(unbiased - 52); unit = 2^(emin - mant_bits).
  int s = (emin - mant_bits) - (unbiased - 52);
  uint64_t q = shiftRoundEven(m, s);
  return sign | q; // q == 2^mant_bits lands on the smallest normal, as it should
}

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

} // namespace rs::ir
