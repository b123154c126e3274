//===- cpu/kernels/erfc_f32.h - Vectorisable f32 erfc ----------------------===//
//
// Private to cpu/. erfc for f32 (chlo.erfc; GELU's exact form is x * erfc(-x / sqrt 2) / 2),
// written as straight-line double arithmetic (polynomials by Horner's rule with fused
// multiply-adds) that GCC vectorises in the elementwise loops: no
// call, no table, no branch. Every element is computed by the same operations whether it lands
// in a vector lane or the scalar remainder, so results do not depend on the thread count.
// The AVX-512 kernel loop runs each element through its own piece only (erfcF32Scattered: the
// pieces for |x| >= 1 on gathered elements); the bits stay erfcF32's.
//
// Method, in double (x is exact as a double, so is x * x):
//   |x| < 1:       erfc(x) = 1 - x * P(x^2), P the Maclaurin series of erf(x) / x to x^28
//                  (coefficients (-1)^n 2 / (sqrt(pi) n! (2n + 1)); truncation < 3e-14).
//   1 <= |x| < 3:  erfc(|x|) = exp(-x^2) g(|x|),   g(x) = erfc(x) exp(x^2), a degree-13
//                  polynomial in t = |x| - 2;
//   3 <= |x|:      the same with a degree-11 polynomial in t = (1/|x| - m) / h on
//                  1/|x| in [1/11, 1/3] (|x| is clamped to 11, where erfc is below every f32).
//   x <= -1:       erfc(x) = 2 - erfc(|x|).
// The g polynomials are Chebyshev interpolants computed in long double (scripts/fit_erfc.cc),
// converted to the monomial basis and rounded to double; measured largest relative error of g
// 1.6e-11 and 5.1e-13. exp(-x^2) by exp_f32.h's expDouble (relative error below 1e-15). The double
// result, accurate to about 1e-10 relative, is rounded once to f32: a correctly rounded result
// except where erfc lies within 1e-10 of a rounding boundary. Test: test/cpu/special_ops_test.cc
// compares it with std::erfc in double over every 64th f32.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/kernels/exp_f32.h"

namespace rs::cpu::ops {

namespace erfc_detail {

/// Monomial coefficients of g on [1, 3] in t = x - 2, constant term first.
inline constexpr double kNear[14] = {
    0x1.058671b53c152p-2,  -0x1.b57034efe38d8p-4,  0x1.5672b9ba48537p-5,  -0x1.fa9d3a99a0c4cp-7,
    0x1.649089e7e1efdp-8,  -0x1.e029006d37a85p-10, 0x1.369b89dea386dp-11, -0x1.837db2eae748p-13,
    0x1.d4444585a51b7p-15, -0x1.11c133197f06ep-16, 0x1.2d94aae80a925p-18, -0x1.4e75e474e76dbp-20,
    0x1.d6c597b9b6db7p-22, -0x1.ea598702b6db7p-24};

/// Monomial coefficients of g on [3, 11] in t = (1/x - kMid) / kHalf, constant term first.
inline constexpr double kFar[12] = {
    0x1.dfd6b0881c899p-4,   0x1.070d6dc91401bp-4,   -0x1.1a7c0624af02cp-9,  -0x1.1125bd2c86d4fp-12,
    0x1.99c7ece3e6e6ep-15,  -0x1.3df996e194235p-20, -0x1.df3963a4904abp-21, 0x1.6e2db936898p-23,
    -0x1.9f5efdce95555p-29, -0x1.63da932a4aaabp-28, 0x1.2627368555555p-30,  -0x1.954d8c2aaaaabp-36};
inline constexpr double kMid = (1.0 / 11.0 + 1.0 / 3.0) / 2, kHalf = (1.0 / 3.0 - 1.0 / 11.0) / 2;
/// 1 / kHalf: t is computed with a multiplication (a vector division costs about 16 cycles;
/// t moves by at most an ulp of a double, far below the fit's error).
inline constexpr double kInvHalf = 1.0 / kHalf;

/// Maclaurin coefficients of erf(x) / x in x^2: (-1)^n 2 / (sqrt(pi) n! (2n + 1)), n = 0..14.
inline constexpr auto kErfSeries = [] {
  struct {
    double c[15];
  } s{};
  double term = 1.1283791670955126; // 2 / sqrt(pi)
  for (int n = 0; n < 15; ++n) {
    s.c[n] = term / (2 * n + 1);
    term = -term / (n + 1);
  }
  return s;
}();

} // namespace erfc_detail

/// erfc(x) for f32 computing only the pieces selected by the template flags: kWithSmall the
/// series for |x| < 1, kWithNear the polynomial for 1 <= |x| < 3, kWithFar the one for |x| >= 3
/// (and NaN). For an x whose piece is computed the result has erfcF32's bits: the operations
/// are the same, a piece left out only feeds selects that x does not take.
template <bool kWithSmall, bool kWithNear, bool kWithFar>
[[gnu::always_inline]] inline float erfcF32Pieces(float xf) {
  using namespace erfc_detail;
  using vecmath::horner;
  const double x = xf;
  // Every value is computed for every element and the results chosen by selects: with
  // -ftrapping-math GCC does not if-convert a branch that holds floating-point arithmetic,
  // and a branch keeps the loop scalar.
  const double abs_x = __builtin_fabs(x);
  double small = 0.0, big = 0.0;
  if constexpr (kWithSmall)
    small = __builtin_fma(-x, horner(kErfSeries.c, x * x), 1.0);
  if constexpr (kWithNear || kWithFar) {
    const double ax = abs_x < 11.0 ? abs_x : 11.0;
    double g;
    if constexpr (kWithNear && kWithFar) {
      const double g_near = horner(kNear, ax - 2.0);
      const double g_far = horner(kFar, (1.0 / ax - kMid) * kInvHalf);
      g = ax < 3.0 ? g_near : g_far;
    } else if constexpr (kWithNear) {
      g = horner(kNear, ax - 2.0);
    } else {
      g = horner(kFar, (1.0 / ax - kMid) * kInvHalf);
    }
    const double tail = vecmath::expDouble(-(ax * ax)) * g;
    const double reflected = 2.0 - tail;
    big = x < 0 ? reflected : tail;
  }
  const float r = static_cast<float>(abs_x < 1.0 ? small : big);
  return xf != xf ? xf : r;
}

/// erfc(x) for f32 (see the file comment). NaN gives NaN, -inf 2, +inf 0.
[[gnu::always_inline]] inline float erfcF32(float xf) {
  return erfcF32Pieces<true, true, true>(xf);
}

/// y[j] = erfcF32(x[j]) for j < len (y may be x), given the elements with !(|x| < 1) (NaN
/// included) gathered beforehand: `index` their positions, `gathered` their values (m of
/// each; overwritten), `has_far` whether one of them has !(|x| < 3). The series piece runs over
/// every element; the gathered ones then go through the other pieces (the far one only when
/// has_far) and are scattered back. Each element gets erfcF32's operations for its own piece,
/// so the bits are erfcF32's. GELU's inputs mostly lie below 1 in magnitude
/// (docs/performance.md), so most elements skip exp and two polynomials.
[[gnu::always_inline]] inline void erfcF32Scattered(const float *x, float *y, int64_t len,
                                                    const int32_t *index, float *gathered,
                                                    int64_t m, bool has_far) {
  for (int64_t j = 0; j < len; ++j)
    y[j] = erfcF32Pieces<true, false, false>(x[j]);
  if (has_far)
    for (int64_t k = 0; k < m; ++k)
      gathered[k] = erfcF32Pieces<false, true, true>(gathered[k]);
  else
    for (int64_t k = 0; k < m; ++k)
      gathered[k] = erfcF32Pieces<false, true, false>(gathered[k]);
  for (int64_t k = 0; k < m; ++k)
    y[index[k]] = gathered[k];
}

} // namespace rs::cpu::ops
