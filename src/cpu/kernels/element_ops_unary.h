//===- cpu/kernels/element_ops_unary.h - Scalar semantics of unary ops -----===//
//
// Private to cpu/. The functors of the unary elementwise ops; their semantics are those
// element_ops.h states for all elementwise ops.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/kernels/element_ops_common.h"

namespace rs::cpu::ops {

#define RS_FLOAT_UNARY(Name, expr)                                                                 \
  struct Name {                                                                                    \
    template <typename T> static constexpr bool kSupports = kFloat<T>;                             \
    template <typename T> static T apply(T x) { return expr; }                                     \
  };

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

} // namespace rs::cpu::ops
