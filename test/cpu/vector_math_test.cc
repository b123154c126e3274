//===- test/cpu/vector_math_test.cc - f32 erfc and exp of the CPU executor ===//
//
// ops::erfcF32 (kernels/erfc_f32.h) and ops::expF32 (kernels/exp_f32.h) against the
// double-precision libm function rounded once to f32, over millions of bit patterns.
//
//===----------------------------------------------------------------------===//
#include "cpu/kernels/erfc_f32.h"
#include "cpu/kernels/exp_f32.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

namespace rs::cpu {
namespace {

/// Compares `f` with `reference` (double precision) rounded once to f32 over every 256th f32
/// bit pattern of both signs but NaNs (16.7 million values): at most one ulp apart, and
/// that for at most one value in a million (a double result close to an f32 rounding
/// boundary may round the other way).
void expectRoundedDouble(float (*f)(float), double (*reference)(double), const char *name) {
  int64_t checked = 0, off_by_one = 0;
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += 256) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(bits));
    if (std::isnan(x))
      continue;
    const float want = static_cast<float>(reference(static_cast<double>(x)));
    const float got = f(x);
    ++checked;
    if (std::bit_cast<uint32_t>(got) == std::bit_cast<uint32_t>(want))
      continue;
    const int32_t ulps = std::abs(std::bit_cast<int32_t>(got) - std::bit_cast<int32_t>(want));
    ASSERT_LE(ulps, 1) << name << "(" << x << ") = " << got << ", want " << want;
    ++off_by_one;
  }
  EXPECT_GT(checked, 16000000);
  EXPECT_LE(off_by_one, checked / 1000000) << off_by_one << " of " << checked << " off by 1 ulp";
  std::printf("%s: %lld values, %lld off by one ulp from the rounded double\n", name,
              static_cast<long long>(checked), static_cast<long long>(off_by_one));
}

TEST(ErfcF32, MatchesDoubleErfcRoundedToFloat) {
  expectRoundedDouble(
      &ops::erfcF32, [](double x) { return std::erfc(x); }, "erfcF32");
  EXPECT_TRUE(std::isnan(ops::erfcF32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(ops::erfcF32(std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(ops::erfcF32(-std::numeric_limits<float>::infinity()), 2.0f);
  EXPECT_EQ(ops::erfcF32(0.0f), 1.0f);
  EXPECT_EQ(ops::erfcF32(-0.0f), 1.0f);
}

TEST(ExpF32, MatchesDoubleExpRoundedToFloat) {
  // Plus the specials and the edges of the finite, subnormal and zero results.
  expectRoundedDouble(
      &ops::expF32, [](double x) { return std::exp(x); }, "expF32");
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(std::isnan(ops::expF32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(ops::expF32(inf), inf);
  EXPECT_EQ(std::bit_cast<uint32_t>(ops::expF32(-inf)), 0u);
  EXPECT_EQ(ops::expF32(0.0f), 1.0f);
  EXPECT_EQ(ops::expF32(-0.0f), 1.0f);
  EXPECT_EQ(ops::expF32(88.7f),
            static_cast<float>(std::exp(static_cast<double>(88.7f))));   // near FLT_MAX
  EXPECT_EQ(ops::expF32(88.8f), inf);                                    // overflow
  EXPECT_EQ(ops::expF32(-100.0f), static_cast<float>(std::exp(-100.0))); // subnormal result
  EXPECT_GT(ops::expF32(-100.0f), 0.0f);
  EXPECT_EQ(ops::expF32(-104.0f), 0.0f); // below the smallest subnormal's half
}

} // namespace
} // namespace rs::cpu
