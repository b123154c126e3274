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
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/kernels/half.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace rs::cpu::ops {

template <typename T> constexpr bool kFloat = std::is_floating_point_v<T>;
template <typename T> constexpr bool kBool = std::is_same_v<T, bool>;
template <typename T> constexpr bool kInt = std::is_integral_v<T> && !kBool<T>;
template <typename T> constexpr bool kNumeric = kFloat<T> || kInt<T>;
template <typename T> constexpr bool kIntOrBool = std::is_integral_v<T>;

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
  template <typename T> static constexpr bool kSupports = kNumeric<T> || kBool<T>;
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
  template <typename T> static constexpr bool kSupports = kNumeric<T>;
  template <typename T> static T apply(T a, T b) {
    if constexpr (kInt<T>)
      return wrapSub(a, b);
    else
      return a - b;
  }
};

struct Multiply {
  template <typename T> static constexpr bool kSupports = kNumeric<T> || kBool<T>;
  template <typename T> static T apply(T a, T b) {
    if constexpr (kBool<T>)
      return a && b;
    else if constexpr (kInt<T>)
      return wrapMul(a, b);
    else
      return a * b;
  }
};

struct Divide {
  template <typename T> static constexpr bool kSupports = kNumeric<T>;
  template <typename T> static T apply(T a, T b) {
    if constexpr (kFloat<T>) {
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

struct Maximum {
  template <typename T> static constexpr bool kSupports = kNumeric<T> || kBool<T>;
  template <typename T> static T apply(T a, T b) {
    if constexpr (kBool<T>) {
      return a || b;
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
  template <typename T> static constexpr bool kSupports = kNumeric<T> || kBool<T>;
  template <typename T> static T apply(T a, T b) {
    if constexpr (kBool<T>) {
      return a && b;
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
  template <typename T> static constexpr bool kSupports = kNumeric<T>;
  template <typename T> static T apply(T a, T b) {
    if constexpr (kFloat<T>) {
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

struct Atan2 {
  template <typename T> static constexpr bool kSupports = kFloat<T>;
  template <typename T> static T apply(T a, T b) { return std::atan2(a, b); }
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

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

#define RS_FLOAT_UNARY(Name, expr)                                                                 \
  struct Name {                                                                                    \
    template <typename T> static constexpr bool kSupports = kFloat<T>;                             \
    template <typename T> static T apply(T x) { return expr; }                                     \
  };

RS_FLOAT_UNARY(Sqrt, std::sqrt(x))
RS_FLOAT_UNARY(Rsqrt, T(1) / std::sqrt(x))
RS_FLOAT_UNARY(Cbrt, std::cbrt(x))
RS_FLOAT_UNARY(Exponential, std::exp(x))
RS_FLOAT_UNARY(ExponentialMinusOne, std::expm1(x))
RS_FLOAT_UNARY(Log, std::log(x))
RS_FLOAT_UNARY(LogPlusOne, std::log1p(x))
RS_FLOAT_UNARY(Logistic, T(1) / (T(1) + std::exp(-x)))
RS_FLOAT_UNARY(Sine, std::sin(x))
RS_FLOAT_UNARY(Cosine, std::cos(x))
RS_FLOAT_UNARY(Tan, std::tan(x))
RS_FLOAT_UNARY(Tanh, std::tanh(x))
RS_FLOAT_UNARY(Floor, std::floor(x))
RS_FLOAT_UNARY(Ceil, std::ceil(x))
RS_FLOAT_UNARY(RoundNearestAfz, std::round(x))
RS_FLOAT_UNARY(RoundNearestEven, std::nearbyint(x))
RS_FLOAT_UNARY(Erf, std::erf(x))
RS_FLOAT_UNARY(Erfc, std::erfc(x))
RS_FLOAT_UNARY(Asin, std::asin(x))
RS_FLOAT_UNARY(Acos, std::acos(x))
RS_FLOAT_UNARY(Atan, std::atan(x))
RS_FLOAT_UNARY(Sinh, std::sinh(x))
RS_FLOAT_UNARY(Cosh, std::cosh(x))
RS_FLOAT_UNARY(Asinh, std::asinh(x))
RS_FLOAT_UNARY(Acosh, std::acosh(x))
RS_FLOAT_UNARY(Atanh, std::atanh(x))
RS_FLOAT_UNARY(Lgamma, std::lgamma(x))
RS_FLOAT_UNARY(Square, x *x)
#undef RS_FLOAT_UNARY

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

struct Abs {
  template <typename T> static constexpr bool kSupports = kNumeric<T>;
  template <typename T> static T apply(T x) {
    if constexpr (kFloat<T>)
      return std::fabs(x);
    else if constexpr (std::is_signed_v<T>)
      return x < 0 ? wrapSub(T(0), x) : x;
    else
      return x;
  }
};

struct Negate {
  template <typename T> static constexpr bool kSupports = kNumeric<T>;
  template <typename T> static T apply(T x) {
    if constexpr (kFloat<T>)
      return -x;
    else
      return wrapSub(T(0), x);
  }
};

struct Sign {
  template <typename T> static constexpr bool kSupports = kNumeric<T>;
  template <typename T> static T apply(T x) {
    if constexpr (kFloat<T>) {
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

template <typename Op, typename T> auto applyUnary(T x) {
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
