//===- test/cpu/narrow_types_test.cc - sub-byte integers and minifloats ----===//
//
// i2/ui2/i4/ui4 computed through 8 bits and wrapped (or saturated, for a convert from a
// float) to the bit width; ops whose 8-bit result is not the N-bit one refused; minifloat
// conversions and arithmetic rounded once from f32 with the format's overflow rules; a
// dot_general in f8.
//
//===----------------------------------------------------------------------===//
#include "cpu_test_util.h"

namespace rs::cpu::testing {
namespace {

/// The bytes of a one-byte-per-element result.
std::vector<uint8_t> bytesOf(const Tensor &t) {
  return std::vector<uint8_t>(t.data(), t.data() + t.byteSize());
}

/// Runs a module without arguments; its results' bytes.
std::vector<std::vector<uint8_t>> runBytes(const std::string &text) {
  std::vector<std::vector<uint8_t>> out;
  for (const Tensor &t : runText(text))
    out.push_back(bytesOf(t));
  return out;
}

std::vector<uint8_t> i8s(std::initializer_list<int> v) {
  std::vector<uint8_t> out;
  for (int x : v)
    out.push_back(static_cast<uint8_t>(static_cast<int8_t>(x)));
  return out;
}

TEST(SubByteInts, ArithmeticWrapsToTheBitWidth) {
  auto out = runBytes(R"(
func.func @main() -> (tensor<3xi4>, tensor<2xi4>, tensor<2xui4>, tensor<2xi4>, tensor<2xi2>) {
  %a = stablehlo.constant dense<[7, -8, 5]> : tensor<3xi4>
  %b = stablehlo.constant dense<[1, -1, 5]> : tensor<3xi4>
  %sum = stablehlo.add %a, %b : tensor<3xi4>
  %c = stablehlo.constant dense<[4, -8]> : tensor<2xi4>
  %d = stablehlo.constant dense<[4, -1]> : tensor<2xi4>
  %prod = stablehlo.multiply %c, %d : tensor<2xi4>
  %u = stablehlo.constant dense<[15, 8]> : tensor<2xui4>
  %v = stablehlo.constant dense<[1, 8]> : tensor<2xui4>
  %usum = stablehlo.add %u, %v : tensor<2xui4>
  %neg = stablehlo.negate %c : tensor<2xi4>
  %e = stablehlo.constant dense<[1, -2]> : tensor<2xi2>
  %shl = stablehlo.shift_left %e, %e : tensor<2xi2>
  return %sum, %prod, %usum, %neg, %shl : tensor<3xi4>, tensor<2xi4>, tensor<2xui4>, tensor<2xi4>, tensor<2xi2>
}
)");
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0], i8s({-8, 7, -6}));
  EXPECT_EQ(out[1], i8s({0, -8}));  // 16 wraps to 0; -8 * -1 = 8 wraps to -8
  EXPECT_EQ(out[2], i8s({0, 0}));   // ui4: 16 wraps to 0
  EXPECT_EQ(out[3], i8s({-4, -8})); // -(-8) wraps to -8
  EXPECT_EQ(out[4], i8s({-2, 0}));  // 1 << 1 = 2 wraps to -2; shift by -2 (>= 2 bits) gives 0
}

TEST(SubByteInts, ConvertWrapsIntegersAndSaturatesFloats) {
  auto out = runBytes(R"(
func.func @main() -> (tensor<3xi4>, tensor<4xi4>, tensor<2xui4>, tensor<2xf32>) {
  %i = stablehlo.constant dense<[9, -9, 16]> : tensor<3xi32>
  %0 = stablehlo.convert %i : (tensor<3xi32>) -> tensor<3xi4>
  %f = stablehlo.constant dense<[100.0, -100.0, 3.7, -3.7]> : tensor<4xf32>
  %1 = stablehlo.convert %f : (tensor<4xf32>) -> tensor<4xi4>
  %g = stablehlo.constant dense<[20.0, -1.0]> : tensor<2xf32>
  %2 = stablehlo.convert %g : (tensor<2xf32>) -> tensor<2xui4>
  %h = stablehlo.constant dense<[-8, 7]> : tensor<2xi4>
  %3 = stablehlo.convert %h : (tensor<2xi4>) -> tensor<2xf32>
  return %0, %1, %2, %3 : tensor<3xi4>, tensor<4xi4>, tensor<2xui4>, tensor<2xf32>
}
)");
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], i8s({-7, 7, 0}));
  EXPECT_EQ(out[1], i8s({7, -8, 3, -3}));
  EXPECT_EQ(out[2], i8s({15, 0}));
  float f[2];
  std::memcpy(f, out[3].data(), 8);
  EXPECT_EQ(f[0], -8.0f);
  EXPECT_EQ(f[1], 7.0f);
}

TEST(SubByteInts, DotGeneralAndIotaWrap) {
  auto out = runBytes(R"(
func.func @main() -> (tensor<i4>, tensor<20xui4>) {
  %a = stablehlo.constant dense<[3, 3]> : tensor<2xi4>
  %0 = stablehlo.dot_general %a, %a, contracting_dims = [0] x [0] : (tensor<2xi4>, tensor<2xi4>) -> tensor<i4>
  %1 = stablehlo.iota dim = 0 : tensor<20xui4>
  return %0, %1 : tensor<i4>, tensor<20xui4>
}
)");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], i8s({2})); // 18 wraps to 2
  std::vector<uint8_t> iota;
  for (int i = 0; i < 20; ++i)
    iota.push_back(static_cast<uint8_t>(i % 16));
  EXPECT_EQ(out[1], iota);
}

TEST(SubByteInts, OpsNeedingTheHighBitsAreUnimplemented) {
  for (const char *op :
       {"stablehlo.shift_right_logical", "stablehlo.popcnt", "stablehlo.count_leading_zeros"}) {
    const bool unary = std::string(op) != "stablehlo.shift_right_logical";
    auto p = compileText(opModule(op,
                                  unary ? std::vector<std::string>{"tensor<2xi4>"}
                                        : std::vector<std::string>{"tensor<2xi4>", "tensor<2xi4>"},
                                  "tensor<2xi4>"));
    ASSERT_FALSE(p.isOk()) << op;
    EXPECT_EQ(p.status().code(), StatusCode::kUnimplemented) << op;
    EXPECT_NE(p.status().message().find("element type i4"), std::string::npos)
        << p.status().message();
  }
  auto p = compileText(opModule("stablehlo.bitcast_convert", {"tensor<2xi4>"}, "tensor<i8>"));
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), StatusCode::kUnimplemented);
}

TEST(Minifloats, ConvertFromF32RoundsWithTheFormatsRules) {
  const std::vector<float> x = {1.0f, 448.0f, 464.0f, 465.0f, -1e6f, -0.0f, 0x1p-10f, 0.1f};
  auto out = runText(opModule("stablehlo.convert", {"tensor<8xf32>"}, "tensor<8xf8E4M3FN>"),
                     {makeTensor<float>({8}, x)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(bytesOf(out[0]),
            (std::vector<uint8_t>{0x38, 0x7E, 0x7E, 0x7F, 0xFF, 0x80, 0x00, 0x1D}));
  out = runText(opModule("stablehlo.convert", {"tensor<8xf32>"}, "tensor<8xf8E4M3FNUZ>"),
                {makeTensor<float>({8}, x)});
  ASSERT_EQ(out.size(), 1u);
  // bias 8: 448 and beyond are NaN (0x80), -0 is +0, 2^-10 the smallest subnormal.
  EXPECT_EQ(bytesOf(out[0]),
            (std::vector<uint8_t>{0x40, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01, 0x25}));
}

TEST(Minifloats, ArithmeticRoundsOnceAndOverflowsByFormat) {
  auto out = runBytes(R"(
func.func @main() -> (tensor<2xf8E4M3FN>, tensor<2xf8E5M2>, tensor<2xf4E2M1FN>, tensor<f8E4M3>) {
  %a = stablehlo.constant dense<[448.0, 1.0]> : tensor<2xf8E4M3FN>
  %b = stablehlo.constant dense<[32.0, 0.0625]> : tensor<2xf8E4M3FN>
  %0 = stablehlo.add %a, %b : tensor<2xf8E4M3FN>
  %c = stablehlo.constant dense<[57344.0, -57344.0]> : tensor<2xf8E5M2>
  %d = stablehlo.constant dense<[8192.0, -8192.0]> : tensor<2xf8E5M2>
  %1 = stablehlo.add %c, %d : tensor<2xf8E5M2>
  %e = stablehlo.constant dense<[6.0, -6.0]> : tensor<2xf4E2M1FN>
  %2 = stablehlo.multiply %e, %e : tensor<2xf4E2M1FN>
  %f = stablehlo.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]> : tensor<8xf8E4M3>
  %3 = stablehlo.dot_general %f, %f, contracting_dims = [0] x [0] : (tensor<8xf8E4M3>, tensor<8xf8E4M3>) -> tensor<f8E4M3>
  return %0, %1, %2, %3 : tensor<2xf8E4M3FN>, tensor<2xf8E5M2>, tensor<2xf4E2M1FN>, tensor<f8E4M3>
}
)");
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], (std::vector<uint8_t>{0x7F, 0x38})); // 480: NaN; 1.0625: to even (1)
  EXPECT_EQ(out[1], (std::vector<uint8_t>{0x7C, 0xFC})); // infinities
  EXPECT_EQ(out[2], (std::vector<uint8_t>{0x7, 0x7}));   // 36 saturates to 6
  EXPECT_EQ(out[3], (std::vector<uint8_t>{0x71}));       // 140 rounds to 144
}

} // namespace
} // namespace rs::cpu::testing
