//===- cpu/kernels/element_types.h - C++ types of the element types --------===//
//
// Private to cpu/. The C++ type that stores each element type (TypeTag, the visit*Type
// dispatchers kernels plan their loops with), the part type of a complex type, and the
// convert loop between two element types (convert.cc).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/kernels/half.h"
#include "support/dtype.h"

#include <complex>
#include <cstdint>

namespace rs::cpu {

template <typename T> struct TypeTag { using type = T; };

/// Calls f(TypeTag<T>{}) for the C++ type that stores `t` (bool for i1), for the types
/// arithmetic kernels support; returns false (without calling f) for any other type.
/// The sub-byte integers come as their 8-bit storage type (int8_t for i2/i4, uint8_t for
/// ui2/ui4): kernels compute on them as 8-bit integers and the compiler wraps the results
/// to the bit width afterwards (sub_byte.cc).
template <typename F> bool visitArithmeticType(DType t, F &&f) {
  switch (t) {
  case DType::kBool: f(TypeTag<bool>{}); return true;
  case DType::kI2:
  case DType::kI4:
  case DType::kI8: f(TypeTag<int8_t>{}); return true;
  case DType::kI16: f(TypeTag<int16_t>{}); return true;
  case DType::kI32: f(TypeTag<int32_t>{}); return true;
  case DType::kI64: f(TypeTag<int64_t>{}); return true;
  case DType::kU2:
  case DType::kU4:
  case DType::kU8: f(TypeTag<uint8_t>{}); return true;
  case DType::kU16: f(TypeTag<uint16_t>{}); return true;
  case DType::kU32: f(TypeTag<uint32_t>{}); return true;
  case DType::kU64: f(TypeTag<uint64_t>{}); return true;
  case DType::kF32: f(TypeTag<float>{}); return true;
  case DType::kF64: f(TypeTag<double>{}); return true;
  default: return false;
  }
}

/// visitArithmeticType plus the 16-bit floats (F16, BF16) and the minifloats (see half.h).
template <typename F> bool visitNumericType(DType t, F &&f) {
  switch (t) {
  case DType::kF16: f(TypeTag<F16>{}); return true;
  case DType::kBF16: f(TypeTag<BF16>{}); return true;
  case DType::kF4E2M1FN: f(TypeTag<Minifloat<DType::kF4E2M1FN>>{}); return true;
  case DType::kF6E2M3FN: f(TypeTag<Minifloat<DType::kF6E2M3FN>>{}); return true;
  case DType::kF6E3M2FN: f(TypeTag<Minifloat<DType::kF6E3M2FN>>{}); return true;
  case DType::kF8E3M4: f(TypeTag<Minifloat<DType::kF8E3M4>>{}); return true;
  case DType::kF8E4M3: f(TypeTag<Minifloat<DType::kF8E4M3>>{}); return true;
  case DType::kF8E4M3FN: f(TypeTag<Minifloat<DType::kF8E4M3FN>>{}); return true;
  case DType::kF8E4M3FNUZ: f(TypeTag<Minifloat<DType::kF8E4M3FNUZ>>{}); return true;
  case DType::kF8E4M3B11FNUZ: f(TypeTag<Minifloat<DType::kF8E4M3B11FNUZ>>{}); return true;
  case DType::kF8E5M2: f(TypeTag<Minifloat<DType::kF8E5M2>>{}); return true;
  case DType::kF8E5M2FNUZ: f(TypeTag<Minifloat<DType::kF8E5M2FNUZ>>{}); return true;
  case DType::kF8E8M0FNU: f(TypeTag<Minifloat<DType::kF8E8M0FNU>>{}); return true;
  default: return visitArithmeticType(t, f);
  }
}

/// Calls f(TypeTag<std::complex<P>>{}) for complex<f32> (P = float) and complex<f64>
/// (P = double), interleaved (re, im) storage; returns false for any other type.
template <typename F> bool visitComplexType(DType t, F &&f) {
  switch (t) {
  case DType::kComplex64: f(TypeTag<std::complex<float>>{}); return true;
  case DType::kComplex128: f(TypeTag<std::complex<double>>{}); return true;
  default: return false;
  }
}

/// visitNumericType plus the complex types.
template <typename F> bool visitNumericOrComplexType(DType t, F &&f) {
  return visitComplexType(t, f) || visitNumericType(t, f);
}

/// The part type of a complex type (f32 / f64); `t` itself for any other type.
inline DType complexPartType(DType t) {
  return t == DType::kComplex64 ? DType::kF32 : t == DType::kComplex128 ? DType::kF64 : t;
}

/// The elementwise loop of stablehlo.convert from `from` to `to` (see convert.cc), or
/// nullptr when either type is unsupported.
using ConvertFn = void (*)(const uint8_t *in, uint8_t *out, int64_t n);
ConvertFn convertFn(DType from, DType to);

} // namespace rs::cpu
