//===- test/cpu/half_test.cc - f16 and bf16 --------------------------------===//
//
// Exact bit patterns of f16/bf16 conversions (round to nearest even, overflow to
// infinity, subnormals, NaN), arithmetic rounded once from f32, comparisons and a bf16
// reduce; plus bitcast_convert and reduce_precision.
//
//===----------------------------------------------------------------------===//
#include "cpu_test_util.h"

#include <limits>

namespace rs::cpu::testing {
namespace {

Tensor halfTensor(DType t, const std::vector<uint16_t> &bits) {
  Tensor x = Tensor::zeros(t, {static_cast<int64_t>(bits.size())});
  std::memcpy(x.mutableData(), bits.data(), bits.size() * 2);
  return x;
}

std::vector<uint16_t> halfBits(const Tensor &t) {
  std::vector<uint16_t> out(static_cast<size_t>(t.numElements()));
  std::memcpy(out.data(), t.data(), out.size() * 2);
  return out;
}

TEST(Half, F32ToF16RoundsToNearestEven) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {1.0f,
                          1.0f + 1.0f / 2048, // halfway between 1 and 1+2^-10: to even (1)
                          1.0f + 3.0f / 2048, // halfway: to even (1 + 2^-9)
                          65504.0f,
                          65519.0f,
                          65520.0f,
                          -inf,
                          5.9604645e-8f, // 2^-24, smallest subnormal
                          2.9802322e-8f, // 2^-25: halfway to zero, ties to even (0)
                          -0.0f,
                          std::numeric_limits<float>::quiet_NaN()};
  auto out = runText(opModule("stablehlo.convert", {"tensor<11xf32>"}, "tensor<11xf16>"),
                     {makeTensor<float>({11}, x)});
  ASSERT_EQ(out.size(), 1u);
  auto b = halfBits(out[0]);
  EXPECT_EQ(b[0], 0x3c00);
  EXPECT_EQ(b[1], 0x3c00);
  EXPECT_EQ(b[2], 0x3c02);
  EXPECT_EQ(b[3], 0x7bff);
  EXPECT_EQ(b[4], 0x7bff);
  EXPECT_EQ(b[5], 0x7c00); // 65520 rounds to infinity
  EXPECT_EQ(b[6], 0xfc00);
  EXPECT_EQ(b[7], 0x0001);
  EXPECT_EQ(b[8], 0x0000);
  EXPECT_EQ(b[9], 0x8000);
  EXPECT_EQ(b[10] & 0x7c00, 0x7c00);
  EXPECT_NE(b[10] & 0x03ff, 0);
}

TEST(Half, IntegerToBF16RoundsOnce) {
  // 2^24 + 2^16 + 1 is just above the midpoint between two bf16 values (2^24 and 2^24 +
  // 2^17): correct rounding goes up; rounding through f32 first (to 2^24 + 2^16, the
  // midpoint) and then to even would go down.
  auto out = runText(opModule("stablehlo.convert", {"tensor<1xi32>"}, "tensor<1xbf16>"),
                     {makeTensor<int32_t>({1}, {(1 << 24) + (1 << 16) + 1})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(halfBits(out[0])[0], 0x4b81); // 2^24 + 2^17
}

TEST(Half, ArithmeticIsRoundedOnceFromF32) {
  // bf16: 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even (1).
  auto out =
      runText(opModule("stablehlo.add", {"tensor<2xbf16>", "tensor<2xbf16>"}, "tensor<2xbf16>"),
              {halfTensor(DType::kBF16, {0x3f80, 0x4040}),   // 1, 3
               halfTensor(DType::kBF16, {0x3b80, 0x3f80})}); // 2^-8, 1
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(halfBits(out[0]), (std::vector<uint16_t>{0x3f80, 0x4080})); // 1, 4
  out = runText(opModule("stablehlo.multiply", {"tensor<2xf16>", "tensor<2xf16>"}, "tensor<2xf16>"),
                {halfTensor(DType::kF16, {0x5bff, 0x5c00}), // 255.875, 256
                 halfTensor(DType::kF16, {0x5bff, 0x5c00})});
  ASSERT_EQ(out.size(), 1u);
  // 255.875^2 = 65472 (exact in f16); 256^2 = 65536 overflows to infinity.
  EXPECT_EQ(halfBits(out[0]), (std::vector<uint16_t>{0x7bfe, 0x7c00}));
}

TEST(Half, CompareAndMaximumWithNaN) {
  Tensor a = halfTensor(DType::kF16, {0x7e00, 0x3c00, 0x8000}); // NaN, 1, -0
  Tensor b = halfTensor(DType::kF16, {0x3c00, 0x4000, 0x0000}); // 1, 2, +0
  auto lt =
      runText(opModule("stablehlo.compare", {"tensor<3xf16>", "tensor<3xf16>"}, "tensor<3xi1>",
                       "<{comparison_direction = #stablehlo<comparison_direction LT>}>"),
              {a, b});
  ASSERT_EQ(lt.size(), 1u);
  EXPECT_EQ(valuesOf<bool>(lt[0]), (std::vector<bool>{false, true, false}));
  auto mx = runText(
      opModule("stablehlo.maximum", {"tensor<3xf16>", "tensor<3xf16>"}, "tensor<3xf16>"), {a, b});
  ASSERT_EQ(mx.size(), 1u);
  auto bits = halfBits(mx[0]);
  EXPECT_EQ(bits[0] & 0x7e00, 0x7e00);
  EXPECT_EQ(bits[1], 0x4000);
  EXPECT_EQ(bits[2], 0x0000);
}

TEST(Half, BF16ReduceAddRoundsEachStep) {
  // 256 + 1 + 1 in bf16: each step rounds 257 back to 256 (ties to even).
  const std::string text = R"(
func.func @main(%x: tensor<3xbf16>) -> tensor<bf16> {
  %zero = stablehlo.constant dense<0.0> : tensor<bf16>
  %r = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0]
      : (tensor<3xbf16>, tensor<bf16>) -> tensor<bf16>
  return %r : tensor<bf16>
}
)";
  auto out = runText(text, {halfTensor(DType::kBF16, {0x4380, 0x3f80, 0x3f80})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(halfBits(out[0]), std::vector<uint16_t>{0x4380});
}

TEST(Bitcast, BytesAndBits) {
  auto out = runText(opModule("stablehlo.bitcast_convert", {"tensor<2xf32>"}, "tensor<2xi32>"),
                     {makeTensor<float>({2}, {1.0f, -2.0f})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<int32_t>(out[0]),
            (std::vector<int32_t>{0x3f800000, static_cast<int32_t>(0xc0000000u)}));
  out = runText(opModule("stablehlo.bitcast_convert", {"tensor<2xi8>"}, "tensor<i16>"),
                {makeTensor<int8_t>({2}, {0x34, 0x12})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<int16_t>(out[0]), std::vector<int16_t>{0x1234});
  out = runText(opModule("stablehlo.bitcast_convert", {"tensor<ui8>"}, "tensor<8xi1>"),
                {makeTensor<uint8_t>({}, {0x05})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<bool>(out[0]),
            (std::vector<bool>{true, false, true, false, false, false, false, false}));
}

TEST(ReducePrecision, RoundsMantissaAndClampsExponent) {
  // e8m7 (bfloat16's format): 1 + 2^-8 ties to 1, 1 + 3 * 2^-8 ties to 1 + 2^-6.
  auto out = runText(opModule("stablehlo.reduce_precision", {"tensor<2xf32>"}, "tensor<2xf32>",
                              "<{exponent_bits = 8 : i32, mantissa_bits = 7 : i32}>"),
                     {makeTensor<float>({2}, {1.0f + 1.0f / 256, 1.0f + 3.0f / 256})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<float>(out[0]), (std::vector<float>{1.0f, 1.0f + 1.0f / 64}));
  // e5m10 (f16's format): below the smallest normal flushes to zero, above the largest
  // finite becomes infinity.
  out = runText(opModule("stablehlo.reduce_precision", {"tensor<3xf32>"}, "tensor<3xf32>",
                         "<{exponent_bits = 5 : i32, mantissa_bits = 10 : i32}>"),
                {makeTensor<float>({3}, {1e-10f, 70000.0f, -65504.0f})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<float>(out[0]),
            (std::vector<float>{0.0f, std::numeric_limits<float>::infinity(), -65504.0f}));
}

} // namespace
} // namespace rs::cpu::testing
