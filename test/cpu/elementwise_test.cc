//===- test/cpu/elementwise_test.cc - Elementwise, compare, convert --------===//
//
// Exact results of the CPU executor's elementwise ops on hand-written modules: integer
// division/remainder by zero and INT_MIN / -1, wrapping arithmetic, shifts past the bit
// width, NaN and signed zeros in maximum/minimum/compare, rounding modes, conversions
// with saturation, select/clamp with scalar operands; transcendental ops against std::.
//
//===----------------------------------------------------------------------===//
#include "cpu_test_util.h"

#include "cpu/kernels/erfc_f32.h"

#include <cmath>
#include <iterator>
#include <limits>
#include <random>

namespace rs::cpu::testing {
namespace {

constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(Elementwise, SignedDivisionByZeroAndOverflow) {
  std::vector<int32_t> a = {7, -7, 7, kMin32, 5, 0};
  std::vector<int32_t> b = {2, 2, 0, -1, -3, 0};
  EXPECT_EQ(binary<int32_t>("stablehlo.divide", "tensor<6xi32>", a, b),
            (std::vector<int32_t>{3, -3, -1, kMin32, -1, -1}));
  EXPECT_EQ(binary<int32_t>("stablehlo.remainder", "tensor<6xi32>", a, b),
            (std::vector<int32_t>{1, -1, 7, 0, 2, 0}));
}

TEST(Elementwise, UnsignedDivisionByZero) {
  std::vector<uint32_t> a = {7, 7, 0xFFFFFFFFu};
  std::vector<uint32_t> b = {2, 0, 16};
  EXPECT_EQ(binary<uint32_t>("stablehlo.divide", "tensor<3xui32>", a, b),
            (std::vector<uint32_t>{3, 0xFFFFFFFFu, 0x0FFFFFFFu}));
  EXPECT_EQ(binary<uint32_t>("stablehlo.remainder", "tensor<3xui32>", a, b),
            (std::vector<uint32_t>{1, 7, 15}));
}

TEST(Elementwise, FloatRemainderHasDividendSign) {
  EXPECT_EQ(binary<float>("stablehlo.remainder", "tensor<3xf32>", {5.5f, -5.5f, 1.0f},
                          {2.0f, 2.0f, 0.0f})[1],
            -1.5f);
  EXPECT_TRUE(std::isnan(binary<float>("stablehlo.remainder", "tensor<1xf32>", {1.0f}, {0.0f})[0]));
}

TEST(Elementwise, IntegerArithmeticWraps) {
  EXPECT_EQ(binary<int8_t>("stablehlo.add", "tensor<2xi8>", {127, -128}, {1, -1}),
            (std::vector<int8_t>{-128, 127}));
  EXPECT_EQ(binary<uint8_t>("stablehlo.multiply", "tensor<2xui8>", {16, 255}, {16, 255}),
            (std::vector<uint8_t>{0, 1}));
  EXPECT_EQ(binary<int16_t>("stablehlo.multiply", "tensor<1xi16>", {-32768}, {-1}),
            (std::vector<int16_t>{-32768}));
  EXPECT_EQ(binary<int32_t>("stablehlo.subtract", "tensor<1xi32>", {kMin32}, {1}),
            (std::vector<int32_t>{kMax32}));
  EXPECT_EQ(unary<int32_t>("stablehlo.negate", "tensor<2xi32>", "tensor<2xi32>", {kMin32, 5}),
            (std::vector<int32_t>{kMin32, -5}));
  EXPECT_EQ(unary<int32_t>("stablehlo.abs", "tensor<2xi32>", "tensor<2xi32>", {kMin32, -5}),
            (std::vector<int32_t>{kMin32, 5}));
}

TEST(Elementwise, ShiftsPastBitWidth) {
  EXPECT_EQ(binary<int32_t>("stablehlo.shift_left", "tensor<5xi32>", {1, 1, 1, -1, 3},
                            {0, 31, 32, -1, 1}),
            (std::vector<int32_t>{1, kMin32, 0, 0, 6}));
  EXPECT_EQ(binary<int32_t>("stablehlo.shift_right_logical", "tensor<4xi32>", {-1, -1, 8, 8},
                            {28, 32, 1, -3}),
            (std::vector<int32_t>{15, 0, 4, 0}));
  EXPECT_EQ(binary<int32_t>("stablehlo.shift_right_arithmetic", "tensor<5xi32>", {-8, -8, 8, -1, 8},
                            {1, 40, 40, 31, -1}),
            (std::vector<int32_t>{-4, -1, 0, -1, 0}));
  EXPECT_EQ(binary<uint8_t>("stablehlo.shift_left", "tensor<2xui8>", {0x81, 1}, {1, 8}),
            (std::vector<uint8_t>{0x02, 0}));
}

TEST(Elementwise, IntegerPower) {
  EXPECT_EQ(binary<int32_t>("stablehlo.power", "tensor<7xi32>", {2, 3, -1, 1, -2, 2, 0},
                            {10, -1, -3, -5, 3, 31, 0}),
            (std::vector<int32_t>{1024, 0, -1, 1, -8, kMin32, 1}));
}

TEST(Elementwise, MaximumMinimumPropagateNaNAndOrderZeros) {
  std::vector<float> a = {kNaN, 1.0f, -0.0f, 0.0f, -kInf};
  std::vector<float> b = {1.0f, kNaN, 0.0f, -0.0f, 3.0f};
  auto mx = binary<float>("stablehlo.maximum", "tensor<5xf32>", a, b);
  auto mn = binary<float>("stablehlo.minimum", "tensor<5xf32>", a, b);
  ASSERT_EQ(mx.size(), 5u);
  ASSERT_EQ(mn.size(), 5u);
  EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mx[1]));
  EXPECT_TRUE(std::isnan(mn[0]) && std::isnan(mn[1]));
  EXPECT_EQ(bitsOf(mx[2]), bitsOf(0.0f));
  EXPECT_EQ(bitsOf(mx[3]), bitsOf(0.0f));
  EXPECT_EQ(bitsOf(mn[2]), bitsOf(-0.0f));
  EXPECT_EQ(bitsOf(mn[3]), bitsOf(-0.0f));
  EXPECT_EQ(mx[4], 3.0f);
  EXPECT_EQ(mn[4], -kInf);
}

TEST(Elementwise, BooleanArithmetic) {
  auto run = [](const std::string &op) {
    auto out = runText(opModule(op, {"tensor<4xi1>", "tensor<4xi1>"}, "tensor<4xi1>"),
                       {makeTensor<bool>({4}, {false, false, true, true}),
                        makeTensor<bool>({4}, {false, true, false, true})});
    return out.empty() ? std::vector<bool>{} : valuesOf<bool>(out[0]);
  };
  EXPECT_EQ(run("stablehlo.add"), (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(run("stablehlo.multiply"), (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(run("stablehlo.xor"), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(run("stablehlo.maximum"), (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(run("stablehlo.minimum"), (std::vector<bool>{false, false, false, true}));
}

TEST(Elementwise, BitOps) {
  EXPECT_EQ(unary<int32_t>("stablehlo.popcnt", "tensor<3xi32>", "tensor<3xi32>", {0, -1, 0x70}),
            (std::vector<int32_t>{0, 32, 3}));
  EXPECT_EQ(
      unary<int32_t>("stablehlo.count_leading_zeros", "tensor<3xi32>", "tensor<3xi32>", {0, -1, 1}),
      (std::vector<int32_t>{32, 0, 31}));
  EXPECT_EQ(unary<int32_t>("stablehlo.not", "tensor<2xi32>", "tensor<2xi32>", {0, 5}),
            (std::vector<int32_t>{-1, -6}));
  EXPECT_EQ(binary<int32_t>("stablehlo.and", "tensor<1xi32>", {12}, {10}), std::vector<int32_t>{8});
  EXPECT_EQ(binary<int32_t>("stablehlo.or", "tensor<1xi32>", {12}, {10}), std::vector<int32_t>{14});
  EXPECT_EQ(binary<int32_t>("stablehlo.xor", "tensor<1xi32>", {12}, {10}), std::vector<int32_t>{6});
}

TEST(Elementwise, SignAndRounding) {
  auto sign = unary<float>("stablehlo.sign", "tensor<5xf32>", "tensor<5xf32>",
                           {kNaN, -0.0f, 0.0f, -2.5f, 3.0f});
  ASSERT_EQ(sign.size(), 5u);
  EXPECT_TRUE(std::isnan(sign[0]));
  EXPECT_EQ(bitsOf(sign[1]), bitsOf(-0.0f));
  EXPECT_EQ(bitsOf(sign[2]), bitsOf(0.0f));
  EXPECT_EQ(sign[3], -1.0f);
  EXPECT_EQ(sign[4], 1.0f);
  EXPECT_EQ(unary<int32_t>("stablehlo.sign", "tensor<3xi32>", "tensor<3xi32>", {-7, 0, 9}),
            (std::vector<int32_t>{-1, 0, 1}));
  std::vector<float> halves = {0.5f, 1.5f, 2.5f, -0.5f, -2.5f};
  EXPECT_EQ(unary<float>("stablehlo.round_nearest_even", "tensor<5xf32>", "tensor<5xf32>", halves),
            (std::vector<float>{0.0f, 2.0f, 2.0f, -0.0f, -2.0f}));
  EXPECT_EQ(unary<float>("stablehlo.round_nearest_afz", "tensor<5xf32>", "tensor<5xf32>", halves),
            (std::vector<float>{1.0f, 2.0f, 3.0f, -1.0f, -3.0f}));
  EXPECT_EQ(unary<float>("stablehlo.floor", "tensor<2xf32>", "tensor<2xf32>", {-1.5f, 1.5f}),
            (std::vector<float>{-2.0f, 1.0f}));
  EXPECT_EQ(unary<float>("stablehlo.ceil", "tensor<2xf32>", "tensor<2xf32>", {-1.5f, 1.5f}),
            (std::vector<float>{-1.0f, 2.0f}));
}

TEST(Elementwise, IsFinite) {
  auto out = unary<float, bool>("stablehlo.is_finite", "tensor<4xf32>", "tensor<4xi1>",
                                {1.0f, kInf, -kInf, kNaN});
  EXPECT_EQ(out, (std::vector<bool>{true, false, false, false}));
}

TEST(Elementwise, ErfcKernelEqualsTheScalarErfcF32InEveryLane) {
  // 4099 values over [-12, 12] (a length that leaves a scalar remainder): the kernel's
  // vector loop (AVX2, or AVX-512 where the CPU has it) must give each element the bits of
  // the scalar erfcF32.
  std::vector<float> x(4099);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = -12.0f + 24.0f * static_cast<float>(i) / static_cast<float>(x.size() - 1);
  auto out = unary<float>("chlo.erfc", "tensor<4099xf32>", "tensor<4099xf32>", x);
  ASSERT_EQ(out.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(bitsOf(out[i]), bitsOf(ops::erfcF32(x[i]))) << "erfc(" << x[i] << ")";
}

TEST(Elementwise, ErfcKernelEqualsTheScalarErfcF32OnMixedChunks) {
  // The AVX-512 loop runs the |x| < 1 piece on every element and the others on gathered
  // elements, choosing per chunk of 512 whether the |x| >= 3 piece runs at all: chunks that are
  // all small, small with a few near, one far element among many, and every kind (NaN, +-inf,
  // +-0, subnormals) mixed; a length that leaves a partial chunk and a scalar remainder. Also
  // through a fused chain (negate, erfc, negate), where erfc may run in place.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> small(-0.999f, 0.999f), near(1.0f, 2.999f),
      far(3.0f, 12.0f);
  const float specials[] = {kNaN, kInf,  -kInf, 0.0f,  -0.0f, 1e-40f, -1e-40f,
                            1.0f, -1.0f, 3.0f,  -3.0f, 1e30f, -1e30f, std::nextafter(1.0f, 0.0f)};
  std::vector<float> x(512 * 6 + 300 + 7);
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t chunk = i / 512;
    const float sign = rng() % 2 ? -1.0f : 1.0f;
    if (chunk == 0)
      x[i] = small(rng);
    else if (chunk == 1)
      x[i] = rng() % 16 ? small(rng) : sign * near(rng);
    else if (chunk == 2)
      x[i] = i == 2 * 512 + 300 ? -far(rng) : small(rng);
    else if (chunk == 3)
      x[i] = sign * near(rng);
    else if (chunk == 4)
      x[i] = sign * far(rng);
    else
      x[i] = rng() % 4 ? specials[rng() % std::size(specials)]
                       : sign * (rng() % 2 ? near(rng) : far(rng));
  }
  const std::string type = "tensor<" + std::to_string(x.size()) + "xf32>";
  auto out = unary<float>("chlo.erfc", type, type, x);
  ASSERT_EQ(out.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(bitsOf(out[i]), bitsOf(ops::erfcF32(x[i]))) << "erfc(" << x[i] << ") at " << i;
  auto chained = runText(
      "func.func @main(%a: " + type + ") -> " + type + " {\n  %0 = stablehlo.negate %a : " + type +
          "\n  %1 = chlo.erfc %0 : " + type + " -> " + type +
          "\n  %2 = stablehlo.negate %1 : " + type + "\n  return %2 : " + type + "\n}\n",
      {makeTensor<float>({static_cast<int64_t>(x.size())}, x)});
  ASSERT_EQ(chained.size(), 1u);
  auto values = valuesOf<float>(chained[0]);
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(bitsOf(values[i]), bitsOf(-ops::erfcF32(-x[i]))) << "-erfc(-" << x[i] << ") at " << i;
}

TEST(Elementwise, TranscendentalsMatchStd) {
  std::vector<float> x = {-3.0f, -0.5f, 0.0f, 0.25f, 1.0f, 2.0f, 10.0f};
  struct Case {
    const char *op;
    float (*ref)(float);
  };
  const Case cases[] = {
      {"stablehlo.exponential", [](float v) { return std::exp(v); }},
      {"stablehlo.exponential_minus_one", [](float v) { return std::expm1(v); }},
      {"stablehlo.tanh", [](float v) { return std::tanh(v); }},
      {"stablehlo.sine", [](float v) { return std::sin(v); }},
      {"stablehlo.cosine", [](float v) { return std::cos(v); }},
      {"stablehlo.tan", [](float v) { return std::tan(v); }},
      {"stablehlo.logistic", [](float v) { return 1.0f / (1.0f + std::exp(-v)); }},
      {"stablehlo.cbrt", [](float v) { return std::cbrt(v); }},
      // f32 erfc is our own vectorisable one (erfc_f32.h): the double erfc rounded once.
      {"chlo.erfc", [](float v) { return static_cast<float>(std::erfc(static_cast<double>(v))); }},
      {"chlo.erf", [](float v) { return std::erf(v); }},
  };
  for (const Case &c : cases) {
    auto out = unary<float>(c.op, "tensor<7xf32>", "tensor<7xf32>", x);
    ASSERT_EQ(out.size(), x.size()) << c.op;
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_EQ(bitsOf(out[i]), bitsOf(c.ref(x[i]))) << c.op << "(" << x[i] << ")";
  }
  std::vector<float> pos = {0.25f, 1.0f, 4.0f};
  EXPECT_EQ(unary<float>("stablehlo.sqrt", "tensor<3xf32>", "tensor<3xf32>", pos),
            (std::vector<float>{0.5f, 1.0f, 2.0f}));
  EXPECT_EQ(unary<float>("stablehlo.rsqrt", "tensor<3xf32>", "tensor<3xf32>", pos),
            (std::vector<float>{2.0f, 1.0f, 0.5f}));
  EXPECT_EQ(unary<float>("stablehlo.log", "tensor<3xf32>", "tensor<3xf32>", pos)[1], 0.0f);
  EXPECT_EQ(unary<float>("stablehlo.log_plus_one", "tensor<3xf32>", "tensor<3xf32>", pos)[0],
            std::log1p(0.25f));
  EXPECT_EQ(binary<float>("stablehlo.atan2", "tensor<1xf32>", {1.0f}, {-1.0f})[0],
            std::atan2(1.0f, -1.0f));
  EXPECT_EQ(binary<double>("stablehlo.power", "tensor<1xf64>", {2.0}, {0.5})[0], std::sqrt(2.0));
}

//===----------------------------------------------------------------------===//
// compare, select, clamp
//===----------------------------------------------------------------------===//

std::vector<bool> compare(const std::string &dir, const std::string &kind, const std::string &type,
                          const Tensor &a, const Tensor &b, int64_t n) {
  std::string result = "tensor<" + std::to_string(n) + "xi1>";
  std::string props = "<{comparison_direction = #stablehlo<comparison_direction " + dir +
                      ">, compare_type = #stablehlo<comparison_type " + kind + ">}>";
  auto out = runText(opModule("stablehlo.compare", {type, type}, result, props), {a, b});
  return out.empty() ? std::vector<bool>{} : valuesOf<bool>(out[0]);
}

TEST(Compare, FloatNaNIsUnordered) {
  Tensor a = makeTensor<float>({3}, {kNaN, 1.0f, kNaN});
  Tensor b = makeTensor<float>({3}, {1.0f, kNaN, kNaN});
  const std::string t = "tensor<3xf32>";
  for (const char *dir : {"EQ", "LT", "LE", "GT", "GE"})
    EXPECT_EQ(compare(dir, "FLOAT", t, a, b, 3), (std::vector<bool>{false, false, false})) << dir;
  EXPECT_EQ(compare("NE", "FLOAT", t, a, b, 3), (std::vector<bool>{true, true, true}));
  Tensor z1 = makeTensor<float>({1}, {-0.0f}), z2 = makeTensor<float>({1}, {0.0f});
  EXPECT_EQ(compare("EQ", "FLOAT", "tensor<1xf32>", z1, z2, 1), std::vector<bool>{true});
}

TEST(Compare, TotalOrder) {
  Tensor a = makeTensor<float>({4}, {-kNaN, -kInf, -0.0f, kInf});
  Tensor b = makeTensor<float>({4}, {-kInf, -1.0f, 0.0f, kNaN});
  EXPECT_EQ(compare("LT", "TOTALORDER", "tensor<4xf32>", a, b, 4),
            (std::vector<bool>{true, true, true, true}));
  EXPECT_EQ(compare("EQ", "TOTALORDER", "tensor<4xf32>", b, b, 4),
            (std::vector<bool>{true, true, true, true}));
  EXPECT_EQ(compare("EQ", "TOTALORDER", "tensor<4xf32>", a, b, 4),
            (std::vector<bool>{false, false, false, false}));
}

TEST(Compare, SignedAndUnsignedDirections) {
  Tensor a = makeTensor<int32_t>({3}, {-1, 2, 5});
  Tensor b = makeTensor<int32_t>({3}, {1, 2, 3});
  const std::string t = "tensor<3xi32>";
  EXPECT_EQ(compare("LT", "SIGNED", t, a, b, 3), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(compare("LT", "UNSIGNED", t, a, b, 3), (std::vector<bool>{false, false, false}));
  EXPECT_EQ(compare("LE", "SIGNED", t, a, b, 3), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(compare("GT", "SIGNED", t, a, b, 3), (std::vector<bool>{false, false, true}));
  EXPECT_EQ(compare("GE", "SIGNED", t, a, b, 3), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(compare("EQ", "SIGNED", t, a, b, 3), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(compare("NE", "SIGNED", t, a, b, 3), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(compare("GT", "UNSIGNED", t, a, b, 3), (std::vector<bool>{true, false, true}));
}

TEST(Compare, RejectsCompareTypeThatDoesNotFit) {
  std::string props = "<{comparison_direction = #stablehlo<comparison_direction LT>, "
                      "compare_type = #stablehlo<comparison_type FLOAT>}>";
  auto p = compileText(
      opModule("stablehlo.compare", {"tensor<2xi32>", "tensor<2xi32>"}, "tensor<2xi1>", props));
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("compare_type FLOAT does not fit element type i32"),
            std::string::npos)
      << p.status().message();
}

TEST(Select, ScalarAndElementwisePredicate) {
  auto out = runText(opModule("stablehlo.select", {"tensor<i1>", "tensor<3xi32>", "tensor<3xi32>"},
                              "tensor<3xi32>"),
                     {makeTensor<bool>({}, {false}), makeTensor<int32_t>({3}, {1, 2, 3}),
                      makeTensor<int32_t>({3}, {4, 5, 6})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<int32_t>(out[0]), (std::vector<int32_t>{4, 5, 6}));
  out = runText(opModule("stablehlo.select", {"tensor<3xi1>", "tensor<3xf32>", "tensor<3xf32>"},
                         "tensor<3xf32>"),
                {makeTensor<bool>({3}, {true, false, true}), makeTensor<float>({3}, {1, 2, 3}),
                 makeTensor<float>({3}, {4, 5, 6})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<float>(out[0]), (std::vector<float>{1, 5, 3}));
}

TEST(Clamp, ScalarBoundsAndNaN) {
  auto out = runText(
      opModule("stablehlo.clamp", {"tensor<f32>", "tensor<4xf32>", "tensor<f32>"}, "tensor<4xf32>"),
      {makeTensor<float>({}, {-1.0f}), makeTensor<float>({4}, {-5, 0.5f, 7, kNaN}),
       makeTensor<float>({}, {1.0f})});
  ASSERT_EQ(out.size(), 1u);
  auto v = valuesOf<float>(out[0]);
  EXPECT_EQ(v[0], -1.0f);
  EXPECT_EQ(v[1], 0.5f);
  EXPECT_EQ(v[2], 1.0f);
  EXPECT_TRUE(std::isnan(v[3]));
  out = runText(opModule("stablehlo.clamp", {"tensor<3xi32>", "tensor<3xi32>", "tensor<3xi32>"},
                         "tensor<3xi32>"),
                {makeTensor<int32_t>({3}, {0, 0, 5}), makeTensor<int32_t>({3}, {-3, 3, 3}),
                 makeTensor<int32_t>({3}, {2, 2, 9})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<int32_t>(out[0]), (std::vector<int32_t>{0, 2, 5}));
}

//===----------------------------------------------------------------------===//
// convert
//===----------------------------------------------------------------------===//

TEST(Convert, FloatToIntTruncatesAndSaturates) {
  EXPECT_EQ((unary<float, int32_t>("stablehlo.convert", "tensor<7xf32>", "tensor<7xi32>",
                                   {1.9f, -1.9f, 3e9f, -3e9f, kNaN, kInf, -kInf})),
            (std::vector<int32_t>{1, -1, kMax32, kMin32, 0, kMax32, kMin32}));
  EXPECT_EQ((unary<float, uint8_t>("stablehlo.convert", "tensor<4xf32>", "tensor<4xui8>",
                                   {-5.0f, 300.0f, 2.5f, -0.5f})),
            (std::vector<uint8_t>{0, 255, 2, 0}));
  EXPECT_EQ((unary<double, int64_t>("stablehlo.convert", "tensor<2xf64>", "tensor<2xi64>",
                                    {1e19, -1e19})),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::max(),
                                  std::numeric_limits<int64_t>::min()}));
}

TEST(Convert, BooleansAndIntegers) {
  EXPECT_EQ(
      (unary<int32_t, bool>("stablehlo.convert", "tensor<3xi32>", "tensor<3xi1>", {0, 2, -1})),
      (std::vector<bool>{false, true, true}));
  EXPECT_EQ((unary<float, bool>("stablehlo.convert", "tensor<3xf32>", "tensor<3xi1>",
                                {0.0f, -0.0f, kNaN})),
            (std::vector<bool>{false, false, true}));
  EXPECT_EQ(
      (unary<bool, float>("stablehlo.convert", "tensor<2xi1>", "tensor<2xf32>", {true, false})),
      (std::vector<float>{1.0f, 0.0f}));
  EXPECT_EQ((unary<int64_t, int32_t>("stablehlo.convert", "tensor<2xi64>", "tensor<2xi32>",
                                     {(int64_t{1} << 32) + 5, -1})),
            (std::vector<int32_t>{5, -1}));
  EXPECT_EQ(
      (unary<int32_t, uint32_t>("stablehlo.convert", "tensor<1xi32>", "tensor<1xui32>", {-1})),
      (std::vector<uint32_t>{0xFFFFFFFFu}));
  EXPECT_EQ((unary<int32_t, int64_t>("stablehlo.convert", "tensor<1xi32>", "tensor<1xi64>", {-7})),
            (std::vector<int64_t>{-7}));
}

TEST(Convert, RoundsToNearestEven) {
  EXPECT_EQ((unary<int32_t, float>("stablehlo.convert", "tensor<2xi32>", "tensor<2xf32>",
                                   {16777217, 16777219})),
            (std::vector<float>{16777216.0f, 16777220.0f}));
  EXPECT_EQ((unary<double, float>("stablehlo.convert", "tensor<1xf64>", "tensor<1xf32>",
                                  {1.0 + 1.0 / (1 << 24)})),
            (std::vector<float>{1.0f}));
}

TEST(Elementwise, UnsupportedElementTypeFailsAtCompile) {
  auto p = compileText(opModule("stablehlo.sine", {"tensor<2xi32>"}, "tensor<2xi32>"));
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(p.status().message(),
            "test.mlir:2:3: 'stablehlo.sine' op element type i32 is not supported by the cpu "
            "executor (in function @main)");
}

// The compiler folds a broadcast_in_dim of a bias vector, a per-row value or a scalar into the
// binary op that reads it (either operand); a transposing broadcast, one used twice by the same
// op and one that is also a result stay materialised. 4x96x48 spans two elementwise tiles whose
// boundary falls inside a row. Every element must equal the plain per-element result, on 1 and
// on 3 threads.
TEST(Elementwise, BroadcastOperandsFoldIntoBinaryOps) {
  const std::string t = "tensor<4x96x48xf32>";
  const std::string text =
      "func.func @main(%x: " + t +
      ", %v: tensor<48xf32>, %r: tensor<4x96xf32>, %s: tensor<f32>, %m: tensor<48x96xf32>) -> (" +
      t + ", " + t + ", " + t + ", " + t + ", " + t + ", " + t + ") {\n" +
      "  %bv = \"stablehlo.broadcast_in_dim\"(%v) <{broadcast_dimensions = array<i64: 2>}> : "
      "(tensor<48xf32>) -> " +
      t + "\n" +
      "  %br = \"stablehlo.broadcast_in_dim\"(%r) <{broadcast_dimensions = array<i64: 0, 1>}> : "
      "(tensor<4x96xf32>) -> " +
      t + "\n" +
      "  %bs = \"stablehlo.broadcast_in_dim\"(%s) <{broadcast_dimensions = array<i64>}> : "
      "(tensor<f32>) -> " +
      t + "\n" +
      "  %bm = \"stablehlo.broadcast_in_dim\"(%m) <{broadcast_dimensions = array<i64: 2, 1>}> : "
      "(tensor<48x96xf32>) -> " +
      t + "\n" + "  %0 = \"stablehlo.subtract\"(%x, %bv) : (" + t + ", " + t + ") -> " + t + "\n" +
      "  %1 = \"stablehlo.subtract\"(%br, %x) : (" + t + ", " + t + ") -> " + t + "\n" +
      "  %2 = \"stablehlo.divide\"(%x, %bs) : (" + t + ", " + t + ") -> " + t + "\n" +
      "  %3 = \"stablehlo.add\"(%x, %bm) : (" + t + ", " + t + ") -> " + t + "\n" +
      "  %4 = \"stablehlo.multiply\"(%bv, %bv) : (" + t + ", " + t + ") -> " + t + "\n" +
      "  return %0, %1, %2, %3, %4, %bs : " + t + ", " + t + ", " + t + ", " + t + ", " + t + ", " +
      t + "\n}\n";
  std::vector<float> x(4 * 96 * 48), v(48), r(4 * 96), m(48 * 96);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i) * 0.37f - 1000.0f;
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(i) * 1.1f + 0.3f;
  for (size_t i = 0; i < r.size(); ++i)
    r[i] = static_cast<float>(i) * -0.7f;
  for (size_t i = 0; i < m.size(); ++i)
    m[i] = static_cast<float>(i) * 0.013f;
  const float s = 3.0f;
  for (int threads : {1, 3}) {
    auto out = runText(text,
                       {makeTensor<float>({4, 96, 48}, x), makeTensor<float>({48}, v),
                        makeTensor<float>({4, 96}, r), makeTensor<float>({}, {s}),
                        makeTensor<float>({48, 96}, m)},
                       threads);
    ASSERT_EQ(out.size(), 6u);
    std::vector<std::vector<float>> got;
    for (const Tensor &o : out)
      got.push_back(valuesOf<float>(o));
    for (size_t i = 0; i < x.size(); ++i) {
      const size_t c = i % 48, row = i / 48, mid = row % 96;
      volatile float e0 = x[i] - v[c], e1 = r[row] - x[i], e2 = x[i] / s,
                     e3 = x[i] + m[c * 96 + mid], e4 = v[c] * v[c];
      ASSERT_EQ(got[0][i], e0) << i;
      ASSERT_EQ(got[1][i], e1) << i;
      ASSERT_EQ(got[2][i], e2) << i;
      ASSERT_EQ(got[3][i], e3) << i;
      ASSERT_EQ(got[4][i], e4) << i;
      ASSERT_EQ(got[5][i], s) << i;
    }
  }
}

} // namespace
} // namespace rs::cpu::testing
