//===- cpu/kernels/half.h - f16, bf16 and minifloat element types ----------===//
//
// Private to cpu/. Storage types for IEEE binary16 (F16) and bfloat16 (BF16), 2 bytes
// each, with conversions: to float (exact) and from float or from double/integers with
// round-to-nearest-even (NaN stays NaN, quieted; overflow gives infinity); the bit
// conversions are ir/float_bits.h's, so constants and kernels round alike. Arithmetic on
// them is done in f32 and rounded once to the storage type; for +, -, *, / and sqrt this is
// the correctly rounded result (f32 has more than 2p + 2 bits for p = 11 and 8).
// The minifloats (Minifloat<DType::kF8E4M3FN> and the others, one byte each; formats and
// rounding rules in ir/float_bits.h) are the same kind of type: kIsHalf holds for them, so
// every kernel that takes f16 takes them too, computing in f32 and rounding once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/float_bits.h"
#include "support/dtype.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace rs::cpu {

namespace half_detail {

/// An integer rounded to float with round-to-odd (exact below 2^24).
template <typename I> float intToOddFloat(I x) {
  using U = std::make_unsigned_t<I>;
  const bool neg = std::is_signed_v<I> && x < 0;
  uint64_t u =
      neg ? uint64_t{0} - static_cast<uint64_t>(x) : static_cast<uint64_t>(static_cast<U>(x));
  if (u < (uint64_t{1} << 24))
    return neg ? -static_cast<float>(u) : static_cast<float>(u);
  const int shift = 64 - std::countl_zero(u) - 24;
  uint64_t mant = u >> shift;
  if (u & ((uint64_t{1} << shift) - 1))
    mant |= 1; // sticky: round to odd
  const float v = std::ldexp(static_cast<float>(mant), shift);
  return neg ? -v : v;
}

} // namespace half_detail

/// IEEE binary16.
struct F16 {
  uint16_t bits = 0;
  static F16 fromFloat(float f) { return F16{ir::floatToF16Bits(f)}; }
  float toFloat() const { return ir::f16BitsToFloat(bits); }
};

/// bfloat16 (the top half of an f32).
struct BF16 {
  uint16_t bits = 0;
  static BF16 fromFloat(float f) { return BF16{ir::floatToBF16Bits(f)}; }
  float toFloat() const { return ir::bf16BitsToFloat(bits); }
};

/// A minifloat of dtype `kType`: its bits in the low bits of one byte. toFloat is exact (a
/// table of the 256 patterns); fromFloat rounds to nearest-even with the format's overflow,
/// NaN and zero rules (ir::roundToMinifloat).
template <DType kType> struct Minifloat {
  uint8_t bits = 0;
  static const ir::FloatFormat &format() { return *ir::minifloatFormat(kType); }
  static Minifloat fromFloat(float f) { return Minifloat{ir::roundToMinifloat(f, format())}; }
  float toFloat() const {
    static const std::array<float, 256> table = [] {
      std::array<float, 256> t{};
      for (int b = 0; b < 256; ++b)
        t[static_cast<size_t>(b)] =
            static_cast<float>(ir::minifloatToDouble(static_cast<uint8_t>(b), format()));
      return t;
    }();
    return table[bits];
  }
};

template <typename T> struct IsMinifloat : std::false_type {};
template <DType kType> struct IsMinifloat<Minifloat<kType>> : std::true_type {};

/// The floats stored in fewer than 4 bytes and computed in f32: F16, BF16, the minifloats.
template <typename T>
constexpr bool kIsHalf = std::is_same_v<T, F16> || std::is_same_v<T, BF16> || IsMinifloat<T>::value;

/// A value of any arithmetic type (or a half) converted to half type H, rounded once.
template <typename H, typename From> H toHalf(From x) {
  if constexpr (kIsHalf<From>)
    return H::fromFloat(x.toFloat());
  else if constexpr (std::is_same_v<From, bool>)
    return H::fromFloat(x ? 1.0f : 0.0f);
  else if constexpr (std::is_same_v<From, float>)
    return H::fromFloat(x);
  else if constexpr (std::is_same_v<From, double>)
    return H::fromFloat(ir::roundToOddFloat(x));
  else
    return H::fromFloat(half_detail::intToOddFloat(x));
}

} // namespace rs::cpu
