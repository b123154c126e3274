//===- cpu/kernels/element_ops_common.h - Traits and helpers of the ops ----===//
//
// Private to cpu/. The element-type traits, the complex helpers and the wrapping integer
// arithmetic the elementwise functors (element_ops.h, element_ops_unary.h) build on, and
// applyUnary / applyBinary, which run a functor on any element type (16-bit floats and
// minifloats through f32).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/kernels/erfc_f32.h"
#include "cpu/kernels/half.h"

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace rs::cpu::ops {

template <typename T> constexpr bool kFloat = std::is_floating_point_v<T>;
template <typename T> constexpr bool kBool = std::is_same_v<T, bool>;
template <typename T> constexpr bool kInt = std::is_integral_v<T> && !kBool<T>;
template <typename T> constexpr bool kNumeric = kFloat<T> || kInt<T>;
template <typename T> constexpr bool kIntOrBool = std::is_integral_v<T>;
template <typename T> struct IsComplex : std::false_type {};
template <typename P> struct IsComplex<std::complex<P>> : std::true_type {};
/// complex<f32> / complex<f64> elements (std::complex<float> / std::complex<double>).
template <typename T> constexpr bool kComplex = IsComplex<T>::value;
template <typename T> constexpr bool kFloatOrComplex = kFloat<T> || kComplex<T>;

/// Complex product (a.re b.re - a.im b.im) + (a.re b.im + a.im b.re)i, each product and
/// sum rounded on its own (spec "multiply" on complex; no Annex G NaN recovery).
template <typename P> std::complex<P> complexMul(std::complex<P> a, std::complex<P> b) {
  const P rr = a.real() * b.real(), ii = a.imag() * b.imag();
  const P ri = a.real() * b.imag(), ir = a.imag() * b.real();
  return {rr - ii, ri + ir};
}

/// `f(x)`; on complex<f32> evaluated in complex<f64> with each part rounded once (the
/// transcendental functions on complex<f32>, as the StableHLO reference interpreter
/// computes them).
template <typename T, typename F> T viaDouble(T x, F f) {
  if constexpr (std::is_same_v<T, std::complex<float>>) {
    const std::complex<double> r = f(std::complex<double>(x.real(), x.imag()));
    return {static_cast<float>(r.real()), static_cast<float>(r.imag())};
  } else {
    return f(x);
  }
}
template <typename T, typename F> T viaDouble(T a, T b, F f) {
  if constexpr (std::is_same_v<T, std::complex<float>>) {
    const std::complex<double> r =
        f(std::complex<double>(a.real(), a.imag()), std::complex<double>(b.real(), b.imag()));
    return {static_cast<float>(r.real()), static_cast<float>(r.imag())};
  } else {
    return f(a, b);
  }
}

/// expm1 on complex: (expm1(x) cos y - 2 sin^2(y / 2)) + (exp(x) sin y)i, exact near 0.
template <typename P> std::complex<P> complexExpm1(std::complex<P> z) {
  const P x = z.real(), y = z.imag();
  const P s = std::sin(y / P(2));
  const P re = std::expm1(x) * std::cos(y) - P(2) * s * s;
  return {re, std::exp(x) * std::sin(y)};
}

/// log1p on complex: (log |1 + z|) + arg(1 + z)i, the modulus through
/// log1p(2x + x^2 + y^2) / 2 when |1 + z| is near 1.
template <typename P> std::complex<P> complexLog1p(std::complex<P> z) {
  const P x = z.real(), y = z.imag();
  const P im = std::atan2(y, P(1) + x);
  const P ax = std::fabs(x), ay = std::fabs(y);
  if (ax < P(0.5) && ay < P(0.5))
    return {std::log1p(x * (P(2) + x) + y * y) / P(2), im};
  return {std::log(std::hypot(P(1) + x, y)), im};
}

/// Unsigned type at least as wide as `unsigned`, so wrapped arithmetic never promotes to
/// a signed int that could overflow.
template <typename T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <typename T> T wrapAdd(T a, T b) {
  return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b));
}
template <typename T> T wrapSub(T a, T b) {
  return static_cast<T>(static_cast<Wide<T>>(a) - static_cast<Wide<T>>(b));
}
template <typename T> T wrapMul(T a, T b) {
  return static_cast<T>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b));
}

//===----------------------------------------------------------------------===//
// Applying an op to any element type, 16-bit floats through f32
//===----------------------------------------------------------------------===//

/// Whether op `Op` takes element type T (a 16-bit float when the op takes float).
template <typename Op, typename T>
constexpr bool kSupported = kIsHalf<T> ? Op::template kSupports<float> : Op::template kSupports<T>;

template <typename Op, typename T> [[gnu::always_inline]] inline auto applyUnary(T x) {
  if constexpr (kIsHalf<T>) {
    auto r = Op::apply(x.toFloat());
    if constexpr (std::is_same_v<decltype(r), float>)
      return T::fromFloat(r);
    else
      return r;
  } else {
    return Op::apply(x);
  }
}

template <typename Op, typename T> T applyBinary(T a, T b) {
  if constexpr (kIsHalf<T>)
    return T::fromFloat(Op::apply(a.toFloat(), b.toFloat()));
  else
    return Op::apply(a, b);
}

} // namespace rs::cpu::ops
