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

#include "cpu/kernels/element_ops_common.h"
#include "cpu/kernels/element_ops_unary.h"
#include "cpu/kernels/element_types.h"

#include <string_view>

namespace rs::cpu::ops {

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

/// The fast path of a reduction kernel (reduce, reduce_window) for the body op `body_op`
/// (forReductionOp) and element type `t`: `make(Op{}, tag)`, `tag` the element-type tag of
/// visitNumericOrComplexType, when the functor supports the type (kSupported); nullptr for
/// any other body or type.
template <typename Fn, typename Make>
Fn reductionFastPath(std::string_view body_op, DType t, Make &&make) {
  Fn fn = nullptr;
  forReductionOp(body_op, [&](auto op) {
    using Op = decltype(op);
    visitNumericOrComplexType(t, [&](auto tag) {
      if constexpr (kSupported<Op, typename decltype(tag)::type>)
        fn = make(op, tag);
    });
  });
  return fn;
}

} // namespace rs::cpu::ops
