//===- cpu/kernels/element_ops.h - Scalar semantics of elementwise ops -----===//
//
// Private to cpu/. One functor per StableHLO elementwise op, templated on the C++ element
// type (bool for i1), shared by the elementwise kernels and the fast paths of reduce,
// reduce_window and scatter, so a fast path computes exactly what the op would.
// `kSupports<T>` says which element types an op takes; `apply` is the scalar function.
//
// Semantics (openxla/stablehlo docs/spec.md, and XLA where the spec leaves a choice):
//   - integer add/subtract/multiply/negate/abs wrap (two's complement);
//   - i1: add = or, multiply = and, maximum = or, minimum = and;
//   - integer divide: x / 0 = -1 (all ones), INT_MIN / -1 = INT_MIN; remainder: x % 0 = x,
//     INT_MIN % -1 = 0; float remainder = fmod (sign of the dividend);
//   - float maximum/minimum propagate NaN and order -0 < +0;
//   - shift_left / shift_right_logical by >= bit width (amount read as unsigned) give 0;
//     shift_right_arithmetic then gives the sign fill;
//   - integer power by squaring (wrapping); a negative exponent gives 0 except for bases
//     1 and -1;
//   - round_nearest_even rounds half to even, round_nearest_afz half away from zero;
//   - sign: -1/0/+1, NaN stays NaN, -0 stays -0.
// f32 math is done in f32 with the std:: functions.
// Complex (std::complex<float> for complex<f32>, std::complex<double> for complex<f64>;
// spec section "Types", complex element types): add/subtract/negate per part; multiply
// is the textbook (ac - bd) + (ad + bc)i, two roundings per product (no contraction);
// divide, sqrt, exp, log, sine, cosine, tan, tanh, the inverse and hyperbolic functions
// and power are the C library's complex functions (Annex G: infinities and NaNs handled
// per part); rsqrt = 1 / sqrt; expm1 and log1p keep precision near 0; the transcendental
// functions (all but divide) on complex<f32> are computed in complex<f64> and rounded once
// per part (viaDouble, as the StableHLO reference interpreter does); abs is the real
// modulus (hypot); sign is z / |z|, 0 for 0 and (NaN, NaN) when either part is NaN;
// maximum/minimum order lexicographically (real part first; a NaN operand propagates);
// atan2(y, x) = -i log((x + iy) / sqrt(x^2 + y^2)); cbrt = exp(log(z) / 3).
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
#include <string_view>
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
// Binary
//===----------------------------------------------------------------------===//

struct Add {
  template <typename T> static constexpr bool kSupports = kNumeric<T> || kBool<T> || kComplex<T>;
  template <typename T> static T apply(T a, T b) {
    if constexpr (kBool<T>)
      return a || b;
    else if constexpr (kInt<T>)
      return wrapAdd(a, b);
    else
      return a + b;
  }
};

struct Subtract {
  template <typename T> static constexpr bool kSupports = kNumeric<T> || kComplex<T>;
  template <typename T> static T apply(T a, T b) {
    if constexpr (kInt<T>)
      return wrapSub(a, b);
    else
      return a - b;
  }
};

struct Multiply {
  template <typename T> static constexpr bool kSupports = kNumeric<T> || kBool<T> || kComplex<T>;
  template <typename T> static T apply(T a, T b) {
    if constexpr (kBool<T>)
      return a && b;
    else if constexpr (kComplex<T>)
      return complexMul(a, b);
    else if constexpr (kInt<T>)
      return wrapMul(a, b);
    else
      return a * b;
  }
};

struct Divide {
  template <typename T> static constexpr bool kSupports = kNumeric<T> || kComplex<T>;
  template <typename T> static T apply(T a, T b) {
    if constexpr (kFloatOrComplex<T>) {
      return a / b;
    } else {
      if (b == 0)
        return static_cast<T>(-1); // all ones for unsigned
      if constexpr (std::is_signed_v<T>)
        if (a == std::numeric_limits<T>::min() && b == -1)
          return a;
      return static_cast<T>(a / b);
    }
  }
};

struct Remainder {
  template <typename T> static constexpr bool kSupports = kNumeric<T>;
  template <typename T> static T apply(T a, T b) {
    if constexpr (kFloat<T>) {
      return std::fmod(a, b);
    } else {
      if (b == 0)
        return a;
      if constexpr (std::is_signed_v<T>)
        if (a == std::numeric_limits<T>::min() && b == -1)
          return 0;
      return static_cast<T>(a % b);
    }
  }
};

/// Whether complex `a` is lexicographically greater than `b` (real part first; spec
/// "maximum"/"minimum" on complex).
template <typename P> bool complexGreater(std::complex<P> a, std::complex<P> b) {
  return a.real() > b.real() || (a.real() == b.real() && a.imag() > b.imag());
}
/// Whether either part of `z` is NaN.
template <typename P> bool complexIsNaN(std::complex<P> z) {
  return std::isnan(z.real()) || std::isnan(z.imag());
}

struct Maximum {
  template <typename T> static constexpr bool kSupports = kNumeric<T> || kBool<T> || kComplex<T>;
  template <typename T> static T apply(T a, T b) {
    if constexpr (kBool<T>) {
      return a || b;
    } else if constexpr (kComplex<T>) { // lexicographic; a NaN operand propagates
      if (complexIsNaN(a))
        return a;
      if (complexIsNaN(b))
        return b;
      return complexGreater(a, b) ? a : b;
    } else if constexpr (kFloat<T>) {
      if (std::isnan(a))
        return a;
      if (std::isnan(b))
        return b;
      if (a == b) // +0 vs -0
        return std::signbit(a) ? b : a;
      return a > b ? a : b;
    } else {
      return a > b ? a : b;
    }
  }
};

struct Minimum {
  template <typename T> static constexpr bool kSupports = kNumeric<T> || kBool<T> || kComplex<T>;
  template <typename T> static T apply(T a, T b) {
    if constexpr (kBool<T>) {
      return a && b;
    } else if constexpr (kComplex<T>) { // lexicographic; a NaN operand propagates
      if (complexIsNaN(a))
        return a;
      if (complexIsNaN(b))
        return b;
      return complexGreater(b, a) ? a : b;
    } else if constexpr (kFloat<T>) {
      if (std::isnan(a))
        return a;
      if (std::isnan(b))
        return b;
      if (a == b)
        return std::signbit(a) ? a : b;
      return a < b ? a : b;
    } else {
      return a < b ? a : b;
    }
  }
};

struct Power {
  template <typename T> static constexpr bool kSupports = kNumeric<T> || kComplex<T>;
  template <typename T> static T apply(T a, T b) {
    if constexpr (kComplex<T>) {
      return viaDouble(a, b, [](auto x, auto y) { return std::pow(x, y); });
    } else if constexpr (kFloat<T>) {
      return std::pow(a, b);
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (b < 0) {
          if (a == 1)
            return 1;
          if (a == -1)
            return (b & 1) ? static_cast<T>(-1) : static_cast<T>(1);
          return 0;
        }
      }
      T result = 1;
      T base = a;
      auto e = static_cast<std::make_unsigned_t<T>>(b);
      while (e) {
        if (e & 1)
          result = wrapMul(result, base);
        base = wrapMul(base, base);
        e >>= 1;
      }
      return result;
    }
  }
};

/// atan2(y, x); on complex -i log((x + iy) / sqrt(x^2 + y^2)) (spec "atan2").
struct Atan2 {
  template <typename T> static constexpr bool kSupports = kFloatOrComplex<T>;
  template <typename T> static T apply(T y, T x) {
    if constexpr (kComplex<T>) {
      return viaDouble(y, x, [](auto b, auto a) {
        using C = decltype(a);
        const C ib(-b.imag(), b.real());
        const C l = std::log((a + ib) / std::sqrt(complexMul(a, a) + complexMul(b, b)));
        return C(l.imag(), -l.real());
      });
    } else {
      return std::atan2(y, x);
    }
  }
};

struct NextAfter {
  template <typename T> static constexpr bool kSupports = kFloat<T>;
  template <typename T> static T apply(T a, T b) { return std::nextafter(a, b); }
};

struct And {
  template <typename T> static constexpr bool kSupports = kIntOrBool<T>;
  template <typename T> static T apply(T a, T b) {
    if constexpr (kBool<T>)
      return a && b;
    else
      return static_cast<T>(a & b);
  }
};

struct Or {
  template <typename T> static constexpr bool kSupports = kIntOrBool<T>;
  template <typename T> static T apply(T a, T b) {
    if constexpr (kBool<T>)
      return a || b;
    else
      return static_cast<T>(a | b);
  }
};

struct Xor {
  template <typename T> static constexpr bool kSupports = kIntOrBool<T>;
  template <typename T> static T apply(T a, T b) {
    if constexpr (kBool<T>)
      return a != b;
    else
      return static_cast<T>(a ^ b);
  }
};

struct ShiftLeft {
  template <typename T> static constexpr bool kSupports = kInt<T>;
  template <typename T> static T apply(T a, T b) {
    using U = std::make_unsigned_t<T>;
    if (static_cast<U>(b) >= sizeof(T) * 8)
      return 0;
    return static_cast<T>(static_cast<Wide<T>>(static_cast<U>(a)) << static_cast<U>(b));
  }
};

struct ShiftRightLogical {
  template <typename T> static constexpr bool kSupports = kInt<T>;
  template <typename T> static T apply(T a, T b) {
    using U = std::make_unsigned_t<T>;
    if (static_cast<U>(b) >= sizeof(T) * 8)
      return 0;
    return static_cast<T>(static_cast<U>(a) >> static_cast<U>(b));
  }
};

struct ShiftRightArithmetic {
  template <typename T> static constexpr bool kSupports = kInt<T>;
  template <typename T> static T apply(T a, T b) {
    using U = std::make_unsigned_t<T>;
    using S = std::make_signed_t<T>;
    const auto sa = static_cast<S>(a);
    if (static_cast<U>(b) >= sizeof(T) * 8)
      return static_cast<T>(sa < 0 ? static_cast<S>(-1) : static_cast<S>(0));
    return static_cast<T>(sa >> static_cast<U>(b));
  }
};

/// Calls f(Op{}) with the functor of a reduction body's single op (binaryBodyOp in
/// kernel.h): stablehlo.add, multiply, maximum, minimum, and, or; the fast paths of
/// reduce, reduce_window and scatter. False, without calling f, for any other name.
template <typename F> bool forReductionOp(std::string_view body_op, F &&f) {
  if (body_op == "stablehlo.add")
    f(Add{});
  else if (body_op == "stablehlo.multiply")
    f(Multiply{});
  else if (body_op == "stablehlo.maximum")
    f(Maximum{});
  else if (body_op == "stablehlo.minimum")
    f(Minimum{});
  else if (body_op == "stablehlo.and")
    f(And{});
  else if (body_op == "stablehlo.or")
    f(Or{});
  else
    return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

#define RS_FLOAT_UNARY(Name, expr)                                                                 \
  struct Name {                                                                                    \
    template <typename T> static constexpr bool kSupports = kFloat<T>;                             \
    template <typename T> static T apply(T x) { return expr; }                                     \
  };

/// Float and complex: the std:: functions have complex overloads with the same name.
/// Float and complex (complex<f32> through viaDouble); `expr` is in x of type E.
#define RS_FLOAT_COMPLEX_UNARY(Name, expr)                                                         \
  struct Name {                                                                                    \
    template <typename T> static constexpr bool kSupports = kFloatOrComplex<T>;                    \
    template <typename E> static E eval(E x) { return expr; }                                      \
    template <typename T> static T apply(T x) {                                                    \
      return viaDouble(x, [](auto z) { return Name::eval(z); });                                   \
    }                                                                                              \
  };

RS_FLOAT_COMPLEX_UNARY(Sqrt, std::sqrt(x))
RS_FLOAT_COMPLEX_UNARY(Rsqrt, E(1) / std::sqrt(x))
/// cbrt; on complex the principal cube root exp(log(z) / 3).
struct Cbrt {
  template <typename T> static constexpr bool kSupports = kFloatOrComplex<T>;
  template <typename T> static T apply(T x) {
    if constexpr (kComplex<T>)
      return viaDouble(x, [](auto z) { return std::exp(std::log(z) / 3.0); });
    else
      return std::cbrt(x);
  }
};
/// f32 through expF32 (exp_f32.h: vectorisable, correctly rounded but within about 1e-15 of
/// a rounding boundary).
struct Exponential {
  template <typename T> static constexpr bool kSupports = kFloatOrComplex<T>;
  template <typename T> [[gnu::always_inline]] static T apply(T x) {
    if constexpr (std::is_same_v<T, float>)
      return expF32(x);
    else
      return viaDouble(x, [](auto z) { return std::exp(z); });
  }
};
RS_FLOAT_COMPLEX_UNARY(Log, std::log(x))
RS_FLOAT_COMPLEX_UNARY(Logistic, E(1) / (E(1) + std::exp(-x)))
RS_FLOAT_COMPLEX_UNARY(Sine, std::sin(x))
RS_FLOAT_COMPLEX_UNARY(Cosine, std::cos(x))
RS_FLOAT_COMPLEX_UNARY(Tan, std::tan(x))
RS_FLOAT_COMPLEX_UNARY(Tanh, std::tanh(x))

struct ExponentialMinusOne {
  template <typename T> static constexpr bool kSupports = kFloatOrComplex<T>;
  template <typename T> static T apply(T x) {
    if constexpr (kComplex<T>)
      return viaDouble(x, [](auto z) { return complexExpm1(z); });
    else
      return std::expm1(x);
  }
};

struct LogPlusOne {
  template <typename T> static constexpr bool kSupports = kFloatOrComplex<T>;
  template <typename T> static T apply(T x) {
    if constexpr (kComplex<T>)
      return viaDouble(x, [](auto z) { return complexLog1p(z); });
    else
      return std::log1p(x);
  }
};
RS_FLOAT_UNARY(Floor, std::floor(x))
RS_FLOAT_UNARY(Ceil, std::ceil(x))
RS_FLOAT_UNARY(RoundNearestAfz, std::round(x))
RS_FLOAT_UNARY(RoundNearestEven, std::nearbyint(x))
RS_FLOAT_UNARY(Erf, std::erf(x))
/// f32 through erfcF32 (erfc_f32.h: vectorisable, about 1e-10 relative before rounding).
struct Erfc {
  template <typename T> static constexpr bool kSupports = kFloat<T>;
  template <typename T> [[gnu::always_inline]] static T apply(T x) {
    if constexpr (std::is_same_v<T, float>)
      return erfcF32(x);
    else
      return std::erfc(x);
  }
};
RS_FLOAT_COMPLEX_UNARY(Asin, std::asin(x))
RS_FLOAT_COMPLEX_UNARY(Acos, std::acos(x))
RS_FLOAT_COMPLEX_UNARY(Atan, std::atan(x))
RS_FLOAT_COMPLEX_UNARY(Sinh, std::sinh(x))
/// chlo.cosh on real floats as XLA legalizes it (stablehlo chlo decomposition,
/// materializeCoshApproximation): exp(x + log(1/2)) + exp(log(1/2) - x), in the element type
/// (f16/bf16 through f32), which does not overflow while cosh(x) is finite; complex: the C
/// library's.
struct Cosh {
  template <typename T> static constexpr bool kSupports = kFloatOrComplex<T>;
  template <typename T> static T apply(T x) {
    if constexpr (kComplex<T>) {
      return viaDouble(x, [](auto z) { return std::cosh(z); });
    } else {
      const T log_half = std::log(T(0.5));
      return std::exp(x + log_half) + std::exp(log_half - x);
    }
  }
};
RS_FLOAT_COMPLEX_UNARY(Asinh, std::asinh(x))
RS_FLOAT_COMPLEX_UNARY(Acosh, std::acosh(x))
RS_FLOAT_COMPLEX_UNARY(Atanh, std::atanh(x))
RS_FLOAT_UNARY(Lgamma, std::lgamma(x))
#undef RS_FLOAT_UNARY
#undef RS_FLOAT_COMPLEX_UNARY

struct Square {
  template <typename T> static constexpr bool kSupports = kFloatOrComplex<T>;
  template <typename T> static T apply(T x) {
    if constexpr (kComplex<T>)
      return complexMul(x, x);
    else
      return x * x;
  }
};

/// chlo.is_inf / is_pos_inf / is_neg_inf: float -> i1.
struct IsInf {
  template <typename T> static constexpr bool kSupports = kFloat<T>;
  template <typename T> static bool apply(T x) { return std::isinf(x); }
};
struct IsPosInf {
  template <typename T> static constexpr bool kSupports = kFloat<T>;
  template <typename T> static bool apply(T x) { return std::isinf(x) && x > 0; }
};
struct IsNegInf {
  template <typename T> static constexpr bool kSupports = kFloat<T>;
  template <typename T> static bool apply(T x) { return std::isinf(x) && x < 0; }
};

/// abs; on complex the modulus, of the part type (spec "abs").
struct Abs {
  template <typename T> static constexpr bool kSupports = kNumeric<T> || kComplex<T>;
  template <typename T> static auto apply(T x) {
    if constexpr (kComplex<T>)
      return std::hypot(x.real(), x.imag());
    else if constexpr (kFloat<T>)
      return std::fabs(x);
    else if constexpr (std::is_signed_v<T>)
      return x < 0 ? wrapSub(T(0), x) : x;
    else
      return x;
  }
};

struct Negate {
  template <typename T> static constexpr bool kSupports = kNumeric<T> || kComplex<T>;
  template <typename T> static T apply(T x) {
    if constexpr (kFloatOrComplex<T>)
      return -x;
    else
      return wrapSub(T(0), x);
  }
};

struct Sign {
  template <typename T> static constexpr bool kSupports = kNumeric<T> || kComplex<T>;
  template <typename T> static T apply(T x) {
    if constexpr (kComplex<T>) {
      using P = typename T::value_type;
      if (std::isnan(x.real()) || std::isnan(x.imag()))
        return {std::numeric_limits<P>::quiet_NaN(), std::numeric_limits<P>::quiet_NaN()};
      if (x.real() == 0 && x.imag() == 0)
        return x;
      const P m = std::hypot(x.real(), x.imag());
      return {x.real() / m, x.imag() / m};
    } else if constexpr (kFloat<T>) {
      if (std::isnan(x) || x == 0)
        return x;
      return x > 0 ? T(1) : T(-1);
    } else if constexpr (std::is_signed_v<T>) {
      return static_cast<T>((x > 0) - (x < 0));
    } else {
      return x > 0 ? T(1) : T(0);
    }
  }
};

struct Not {
  template <typename T> static constexpr bool kSupports = kIntOrBool<T>;
  template <typename T> static T apply(T x) {
    if constexpr (kBool<T>)
      return !x;
    else
      return static_cast<T>(~x);
  }
};

struct PopulationCount {
  template <typename T> static constexpr bool kSupports = kInt<T>;
  template <typename T> static T apply(T x) {
    return static_cast<T>(std::popcount(static_cast<std::make_unsigned_t<T>>(x)));
  }
};

struct CountLeadingZeros {
  template <typename T> static constexpr bool kSupports = kInt<T>;
  template <typename T> static T apply(T x) {
    return static_cast<T>(std::countl_zero(static_cast<std::make_unsigned_t<T>>(x)));
  }
};

/// is_finite: float -> i1.
struct IsFinite {
  template <typename T> static constexpr bool kSupports = kFloat<T>;
  template <typename T> static bool apply(T x) { return std::isfinite(x); }
};

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
