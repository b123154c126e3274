//===- cpu/kernels/exp_f32.h - Vectorisable f32 exp ------------------------===//
//
// Private to cpu/. exp for f32 (stablehlo.exponential; softmax's hot op) and the double exp
// kernel that erfc_f32.h shares, written as straight-line double arithmetic that GCC
// vectorises in the elementwise loops (libm's expf is a call per element). As in erfc_f32.h,
// every element gets the same operations in a vector lane or in the scalar remainder, so
// results do not depend on the thread count.
//
// Method: exp(y) = 2^n exp(r), n = y / ln 2 rounded to nearest, r = y - n ln 2 (ln 2 in two
// parts, |r| <= ln(2) / 2), exp(r) by its Taylor series to r^12 (relative error below 1e-15).
// The f32 result is that double rounded once: correctly rounded except where exp(x) lies
// within about 1e-15 of a rounding boundary (subnormal results included: the double is
// normal there). Test: test/cpu/special_ops_test.cc compares it with std::exp in double.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <bit>
#include <cstdint>

namespace rs::cpu::ops::vecmath {

/// Horner's rule with fused multiply-adds, c[0] the constant term.
template <int N> [[gnu::always_inline]] inline double horner(const double (&c)[N], double t) {
  double p = c[N - 1];
#pragma GCC unroll 16
  for (int i = N - 2; i >= 0; --i)
    p = __builtin_fma(p, t, c[i]);
  return p;
}

/// exp(y) in double for y in [-708, 709] (n + 1023 must stay a normal exponent).
[[gnu::always_inline]] inline double expDouble(double y) {
  // n = y / ln 2 rounded to the nearest integer: adding 1.5 * 2^52 rounds away the fraction
  // and leaves n in the low mantissa bits of `shifted`.
  const double shifted = y * 1.4426950408889634 + 6755399441055744.0;
  const double n = shifted - 6755399441055744.0;
  // ln 2 split so that n * kLn2Hi is exact for |n| < 2^11.
  const double r = (y - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10;
  double p = 1.0 / 479001600; // 1/12!
  constexpr double kInv[12] = {1.0 / 39916800, 1.0 / 3628800, 1.0 / 362880, 1.0 / 40320,
                               1.0 / 5040,     1.0 / 720,     1.0 / 120,    1.0 / 24,
                               1.0 / 6,        0.5,           1.0,          1.0};
#pragma GCC unroll 16
  for (double c : kInv)
    p = __builtin_fma(p, r, c);
  // 2^n: adding the bias to n's bits and shifting leaves the biased exponent n + 1023 in
  // bits 52..62.
  const int64_t low = std::bit_cast<int64_t>(shifted);
  return p * std::bit_cast<double>((low + 1023) << 52);
}

} // namespace rs::cpu::ops::vecmath

namespace rs::cpu::ops {

/// exp(x) for f32 (see the file comment). NaN gives NaN, +inf +inf, -inf +0; results
/// overflow to +inf above 88.72 and underflow through the subnormals to +0 below -103.98.
[[gnu::always_inline]] inline float expF32(float xf) {
  // Clamped to where the f32 result is already +inf or +0 (and 2^n stays normal); selects,
  // not branches, so the loop vectorises.
  const float lo = -110.0f, hi = 100.0f;
  const float c = xf < lo ? lo : (xf > hi ? hi : xf);
  const float r = static_cast<float>(vecmath::expDouble(static_cast<double>(c)));
  return xf != xf ? xf : r;
}

} // namespace rs::cpu::ops
