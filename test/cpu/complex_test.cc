//===- test/cpu/complex_test.cc - complex<f32> and complex<f64> elements ---===//
//
// Exact results of the CPU executor on complex elements (openxla/stablehlo docs/spec.md,
// "Types" and each op's section): arithmetic (textbook multiply, no contraction),
// abs/sign, real/imag/complex, compare EQ/NE, convert to and from complex, iota, and the
// byte-generic ops on 16-byte complex<f64> elements (transpose, select, reduce);
// transcendental ops against the std:: complex functions; bit-identical results across
// thread counts.
//
//===----------------------------------------------------------------------===//
#include "cpu_test_util.h"

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

namespace rs::cpu::testing {
namespace {

using C64 = std::complex<float>;
using C128 = std::complex<double>;

TEST(Complex, Arithmetic) {
  const std::string t = "tensor<2xcomplex<f32>>";
  EXPECT_EQ(binary<C64>("stablehlo.add", t, {{1, 2}, {-1, 0.5f}}, {{3, 4}, {1, -0.5f}}),
            (std::vector<C64>{{4, 6}, {0, 0}}));
  EXPECT_EQ(binary<C64>("stablehlo.subtract", t, {{1, 2}, {-1, 0.5f}}, {{3, 4}, {1, -0.5f}}),
            (std::vector<C64>{{-2, -2}, {-2, 1}}));
  EXPECT_EQ(binary<C64>("stablehlo.multiply", t, {{1, 2}, {0, 1}}, {{3, 4}, {0, 1}}),
            (std::vector<C64>{{-5, 10}, {-1, 0}}));
  EXPECT_EQ(binary<C64>("stablehlo.divide", t, {{-5, 10}, {4, 6}}, {{1, 2}, {2, 0}}),
            (std::vector<C64>{{3, 4}, {2, 3}}));
  EXPECT_EQ(unary<C64>("stablehlo.negate", t, t, {{1, -2}, {0, 0}}),
            (std::vector<C64>{{-1, 2}, {-0.0f, -0.0f}}));
  EXPECT_EQ(binary<C128>("stablehlo.multiply", "tensor<1xcomplex<f64>>", {{1.5, -2}}, {{2, 4}}),
            (std::vector<C128>{{11, 2}}));
}

TEST(Complex, MultiplyIsTextbookWithoutContraction) {
  // (a + bi)(c + di) with re = ac - bd rounded twice: a fused ac - bd would keep the low
  // bits of ac and give 2^-46 here instead of 0.
  const float a = 1.0f + 0x1p-23f;
  auto r = binary<C64>("stablehlo.multiply", "tensor<1xcomplex<f32>>", {{a, a}}, {{a, -a}});
  ASSERT_EQ(r.size(), 1u);
  const float sq = a * a;
  EXPECT_EQ(r[0], C64(sq + sq, sq - sq));
}

TEST(Complex, MaximumMinimumAreLexicographic) {
  const std::string t = "tensor<4xcomplex<f64>>";
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<C128> a = {{1.5, 2.5}, {1.5, 7.5}, {0, 1.5}, {1, nan}};
  std::vector<C128> b = {{7.5, 1.5}, {1.5, 2.5}, {-0.0, 2.5}, {2, 0}};
  auto mx = binary<C128>("stablehlo.maximum", t, a, b);
  auto mn = binary<C128>("stablehlo.minimum", t, a, b);
  ASSERT_EQ(mx.size(), 4u);
  ASSERT_EQ(mn.size(), 4u);
  EXPECT_EQ(std::vector<C128>(mx.begin(), mx.begin() + 3),
            (std::vector<C128>{{7.5, 1.5}, {1.5, 7.5}, {-0.0, 2.5}}));
  EXPECT_EQ(std::vector<C128>(mn.begin(), mn.begin() + 3),
            (std::vector<C128>{{1.5, 2.5}, {1.5, 2.5}, {0, 1.5}}));
  EXPECT_TRUE(std::isnan(mx[3].imag()) && mx[3].real() == 1); // the NaN operand propagates
  EXPECT_TRUE(std::isnan(mn[3].imag()) && mn[3].real() == 1);
}

TEST(Complex, Atan2AndCbrt) {
  auto r = binary<C128>("stablehlo.atan2", "tensor<2xcomplex<f64>>", {{1, 0}, {-1, 0}},
                        {{0, 0}, {0, 0}});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0], C128(std::atan2(1.0, 0.0), 0));
  EXPECT_EQ(r[1], C128(-std::atan2(1.0, 0.0), 0));
  auto c =
      unary<C128>("stablehlo.cbrt", "tensor<1xcomplex<f64>>", "tensor<1xcomplex<f64>>", {{3, 4}});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0], std::exp(std::log(C128(3, 4)) / 3.0));
}

TEST(Complex, AbsAndSign) {
  EXPECT_EQ((unary<C64, float>("stablehlo.abs", "tensor<2xcomplex<f32>>", "tensor<2xf32>",
                               {{3, 4}, {-5, 12}})),
            (std::vector<float>{5, 13}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto s = unary<C64>("stablehlo.sign", "tensor<4xcomplex<f32>>", "tensor<4xcomplex<f32>>",
                      {{3, 4}, {0, 0}, {nan, 1}, {0, -2}});
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0], C64(3.0f / 5.0f, 4.0f / 5.0f));
  EXPECT_EQ(s[1], C64(0, 0));
  EXPECT_TRUE(std::isnan(s[2].real()) && std::isnan(s[2].imag()));
  EXPECT_EQ(s[3], C64(0, -1));
  EXPECT_EQ(
      (unary<C128, double>("stablehlo.abs", "tensor<1xcomplex<f64>>", "tensor<1xf64>", {{-8, 6}})),
      (std::vector<double>{10}));
}

TEST(Complex, RealImagComplex) {
  EXPECT_EQ((unary<C64, float>("stablehlo.real", "tensor<2xcomplex<f32>>", "tensor<2xf32>",
                               {{1, 2}, {-3, 4}})),
            (std::vector<float>{1, -3}));
  EXPECT_EQ((unary<C128, double>("stablehlo.imag", "tensor<2xcomplex<f64>>", "tensor<2xf64>",
                                 {{1, 2}, {-3, 4}})),
            (std::vector<double>{2, 4}));
  EXPECT_EQ((unary<float>("stablehlo.imag", "tensor<2xf32>", "tensor<2xf32>", {1.5f, -2})),
            (std::vector<float>{0, 0}));
  auto out = runText(
      opModule("stablehlo.complex", {"tensor<2xf64>", "tensor<2xf64>"}, "tensor<2xcomplex<f64>>"),
      {makeTensor<double>({2}, {1, -2}), makeTensor<double>({2}, {0.5, 3})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<C128>(out[0]), (std::vector<C128>{{1, 0.5}, {-2, 3}}));
}

TEST(Complex, CompareIsLexicographic) {
  const std::string t = "tensor<5xcomplex<f32>>";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<C64> a = {{1, 2}, {1, 2}, {nan, 0}, {0, 5}, {-0.0f, 1}};
  std::vector<C64> b = {{1, 2}, {1, -2}, {nan, 0}, {1, -5}, {0.0f, 1}};
  auto run = [&](const std::string &dir, const std::string &type) {
    auto out = runText(opModule("stablehlo.compare", {t, t}, "tensor<5xi1>",
                                "<{comparison_direction = #stablehlo<comparison_direction " + dir +
                                    ">, compare_type = #stablehlo<comparison_type " + type + ">}>"),
                       {makeTensor<C64>({5}, a), makeTensor<C64>({5}, b)});
    return out.empty() ? std::vector<bool>{} : valuesOf<bool>(out[0]);
  };
  EXPECT_EQ(run("EQ", "FLOAT"), (std::vector<bool>{true, false, false, false, true}));
  EXPECT_EQ(run("NE", "FLOAT"), (std::vector<bool>{false, true, true, true, false}));
  EXPECT_EQ(run("LT", "FLOAT"), (std::vector<bool>{false, false, false, true, false}));
  EXPECT_EQ(run("GT", "FLOAT"), (std::vector<bool>{false, true, false, false, false}));
  EXPECT_EQ(run("GE", "FLOAT"), (std::vector<bool>{true, true, false, false, true}));
  EXPECT_EQ(run("LE", "FLOAT"), (std::vector<bool>{true, false, false, true, true}));
  // TOTALORDER: -0 < +0 in the real part, NaN equals itself.
  EXPECT_EQ(run("LT", "TOTALORDER"), (std::vector<bool>{false, false, false, true, true}));
  EXPECT_EQ(run("EQ", "TOTALORDER"), (std::vector<bool>{true, false, true, false, false}));
}

TEST(Complex, Convert) {
  EXPECT_EQ((unary<float, C64>("stablehlo.convert", "tensor<2xf32>", "tensor<2xcomplex<f32>>",
                               {1.5f, -2})),
            (std::vector<C64>{{1.5f, 0}, {-2, 0}}));
  EXPECT_EQ((unary<C64, C128>("stablehlo.convert", "tensor<1xcomplex<f32>>",
                              "tensor<1xcomplex<f64>>", {{0.1f, -0.2f}})),
            (std::vector<C128>{{static_cast<double>(0.1f), static_cast<double>(-0.2f)}}));
  EXPECT_EQ((unary<C128, C64>("stablehlo.convert", "tensor<1xcomplex<f64>>",
                              "tensor<1xcomplex<f32>>", {{0.1, 1e300}})),
            (std::vector<C64>{{0.1f, std::numeric_limits<float>::infinity()}}));
  // complex -> real keeps the real part (XLA).
  EXPECT_EQ((unary<C128, int32_t>("stablehlo.convert", "tensor<2xcomplex<f64>>", "tensor<2xi32>",
                                  {{7.9, 100}, {-3.5, -1}})),
            (std::vector<int32_t>{7, -3}));
  EXPECT_EQ((unary<C128, bool>("stablehlo.convert", "tensor<3xcomplex<f64>>", "tensor<3xi1>",
                               {{-1, 0}, {0, 1}, {1, 0}})),
            (std::vector<bool>{true, false, true}));
}

TEST(Complex, TranscendentalsMatchStd) {
  const std::vector<C128> x = {{0.5, 0.25}, {-1.5, 2}, {3, -0.75}};
  const std::string t = "tensor<3xcomplex<f64>>";
  auto check = [&](const std::string &op, C128 (*f)(C128)) {
    auto r = unary<C128>(op, t, t, x);
    ASSERT_EQ(r.size(), x.size()) << op;
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_EQ(r[i], f(x[i])) << op << " " << i;
  };
  check("stablehlo.exponential", [](C128 z) { return std::exp(z); });
  check("stablehlo.log", [](C128 z) { return std::log(z); });
  check("stablehlo.sqrt", [](C128 z) { return std::sqrt(z); });
  check("stablehlo.rsqrt", [](C128 z) { return C128(1) / std::sqrt(z); });
  check("stablehlo.sine", [](C128 z) { return std::sin(z); });
  check("stablehlo.cosine", [](C128 z) { return std::cos(z); });
  check("stablehlo.tanh", [](C128 z) { return std::tanh(z); });
  check("stablehlo.tan", [](C128 z) { return std::tan(z); });
  check("stablehlo.logistic", [](C128 z) { return C128(1) / (C128(1) + std::exp(-z)); });
}

TEST(Complex, Complex64TranscendentalsRoundFromDouble) {
  const std::vector<C64> x = {{0.5f, 0.25f}, {-1.5f, 2}, {7, -0.75f}};
  const std::string t = "tensor<3xcomplex<f32>>";
  auto check = [&](const std::string &op, C128 (*f)(C128)) {
    auto r = unary<C64>(op, t, t, x);
    ASSERT_EQ(r.size(), x.size()) << op;
    for (size_t i = 0; i < x.size(); ++i) {
      const C128 d = f(C128(x[i].real(), x[i].imag()));
      EXPECT_EQ(r[i], C64(static_cast<float>(d.real()), static_cast<float>(d.imag())))
          << op << " " << i;
    }
  };
  check("stablehlo.exponential", [](C128 z) { return std::exp(z); });
  check("stablehlo.sine", [](C128 z) { return std::sin(z); });
  check("stablehlo.log", [](C128 z) { return std::log(z); });
  check("chlo.cosh", [](C128 z) { return std::cosh(z); });
  check("chlo.asin", [](C128 z) { return std::asin(z); });
}

TEST(Complex, Expm1AndLog1pKeepPrecisionNearZero) {
  const std::string t = "tensor<1xcomplex<f64>>";
  auto e = unary<C128>("stablehlo.exponential_minus_one", t, t, {{1e-20, 2e-20}});
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0], C128(1e-20, 2e-20));
  auto l = unary<C128>("stablehlo.log_plus_one", t, t, {{1e-20, 2e-20}});
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0], C128(1e-20, 2e-20));
  // Away from 0: log |1 + z| + arg(1 + z) i.
  auto l2 = unary<C128>("stablehlo.log_plus_one", t, t, {{1, 1}});
  ASSERT_EQ(l2.size(), 1u);
  EXPECT_EQ(l2[0], C128(std::log(std::hypot(2.0, 1.0)), std::atan2(1.0, 2.0)));
}

TEST(Complex, IotaTransposeSelectReduce) {
  auto iota = runText(R"(func.func @main() -> tensor<3xcomplex<f64>> {
  %0 = stablehlo.iota dim = 0 : tensor<3xcomplex<f64>>
  return %0 : tensor<3xcomplex<f64>>
})");
  ASSERT_EQ(iota.size(), 1u);
  EXPECT_EQ(valuesOf<C128>(iota[0]), (std::vector<C128>{{0, 0}, {1, 0}, {2, 0}}));

  const std::string text = R"(func.func @main(%a: tensor<2x3xcomplex<f64>>, %p: tensor<3x2xi1>)
    -> (tensor<3x2xcomplex<f64>>, tensor<3xcomplex<f64>>, tensor<3x2xcomplex<f64>>) {
  %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xcomplex<f64>>) -> tensor<3x2xcomplex<f64>>
  %z = stablehlo.constant dense<(0.0, 0.0)> : tensor<complex<f64>>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.multiply across dimensions = [0] : (tensor<2x3xcomplex<f64>>, tensor<complex<f64>>) -> tensor<3xcomplex<f64>>
  %c = stablehlo.constant dense<(-1.0, 0.5)> : tensor<3x2xcomplex<f64>>
  %s = stablehlo.select %p, %t, %c : tensor<3x2xi1>, tensor<3x2xcomplex<f64>>
  return %t, %r, %s : tensor<3x2xcomplex<f64>>, tensor<3xcomplex<f64>>, tensor<3x2xcomplex<f64>>
})";
  const std::vector<C128> a = {{1, 1}, {2, 0}, {0, 3}, {1, -1}, {0.5, 0}, {0, 2}};
  for (int threads : {1, 4}) {
    auto out = runText(text,
                       {makeTensor<C128>({2, 3}, a),
                        makeTensor<bool>({3, 2}, {true, false, false, true, true, true})},
                       threads);
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(valuesOf<C128>(out[0]),
              (std::vector<C128>{{1, 1}, {1, -1}, {2, 0}, {0.5, 0}, {0, 3}, {0, 2}}));
    // Multiplying into the init value 0 gives 0 in every column.
    EXPECT_EQ(valuesOf<C128>(out[1]), (std::vector<C128>{{0, 0}, {0, 0}, {0, 0}}));
    EXPECT_EQ(valuesOf<C128>(out[2]),
              (std::vector<C128>{{1, 1}, {-1, 0.5}, {-1, 0.5}, {0.5, 0}, {0, 3}, {0, 2}}));
  }
}

TEST(Complex, ReduceAddFoldsInOrder) {
  const std::string text =
      R"(func.func @main(%a: tensor<2x3xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  %z = stablehlo.constant dense<(0.5, -0.5)> : tensor<complex<f32>>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x3xcomplex<f32>>, tensor<complex<f32>>) -> tensor<2xcomplex<f32>>
  return %r : tensor<2xcomplex<f32>>
})";
  auto out =
      runText(text, {makeTensor<C64>({2, 3}, {{1, 2}, {3, 4}, {5, 6}, {-1, 0}, {0, -1}, {2, 2}})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<C64>(out[0]), (std::vector<C64>{{9.5f, 11.5f}, {1.5f, 0.5f}}));
}

TEST(Complex, DotGeneralSumsInOrder) {
  // [2x2] x [2x1], the lhs converted from i32 to complex<f32> (real part, imag 0).
  const std::string text =
      R"(func.func @main(%a: tensor<2x2xi32>, %b: tensor<2x1xcomplex<f32>>) -> tensor<2x1xcomplex<f32>> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x2xi32>, tensor<2x1xcomplex<f32>>) -> tensor<2x1xcomplex<f32>>
  return %0 : tensor<2x1xcomplex<f32>>
})";
  for (int threads : {1, 4}) {
    auto out = runText(
        text,
        {makeTensor<int32_t>({2, 2}, {1, 2, -3, 4}), makeTensor<C64>({2, 1}, {{1, 1}, {0.5f, -2}})},
        threads);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(valuesOf<C64>(out[0]), (std::vector<C64>{{2, -3}, {-1, -11}}));
  }
}

TEST(Complex, ConvolutionUsesTheComplexProduct) {
  // 1-D, one feature: out[j] = x[j] w[0] + x[j + 1] w[1], with w = [1, i].
  const std::string props =
      "<{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, "
      "o]->[b, 0, f]>, feature_group_count = 1 : i64}>";
  for (int threads : {1, 3}) {
    auto out = runText(opModule("stablehlo.convolution",
                                {"tensor<1x3x1xcomplex<f32>>", "tensor<2x1x1xcomplex<f32>>"},
                                "tensor<1x2x1xcomplex<f32>>", props),
                       {makeTensor<C64>({1, 3, 1}, {{1, 1}, {2, 0}, {0, 1}}),
                        makeTensor<C64>({2, 1, 1}, {{1, 0}, {0, 1}})},
                       threads);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(valuesOf<C64>(out[0]), (std::vector<C64>{{1, 3}, {1, 0}}));
  }
}

TEST(Complex, BitIdenticalAcrossThreadCounts) {
  // Tiled elementwise work (more than one kElementwiseGrain), a multi-tile dot_general and
  // a reduce, all on complex elements.
  const std::string text =
      R"(func.func @main(%x: tensor<200x200xcomplex<f32>>, %a: tensor<64x48xcomplex<f64>>, %b: tensor<48x80xcomplex<f64>>) -> (tensor<200x200xcomplex<f32>>, tensor<64x80xcomplex<f64>>, tensor<200xcomplex<f32>>) {
  %m = stablehlo.multiply %x, %x : tensor<200x200xcomplex<f32>>
  %e = stablehlo.exponential %m : tensor<200x200xcomplex<f32>>
  %d = stablehlo.divide %e, %x : tensor<200x200xcomplex<f32>>
  %p = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<64x48xcomplex<f64>>, tensor<48x80xcomplex<f64>>) -> tensor<64x80xcomplex<f64>>
  %z = stablehlo.constant dense<(0.0, 0.0)> : tensor<complex<f32>>
  %r = stablehlo.reduce(%d init: %z) applies stablehlo.add across dimensions = [0] : (tensor<200x200xcomplex<f32>>, tensor<complex<f32>>) -> tensor<200xcomplex<f32>>
  return %d, %p, %r : tensor<200x200xcomplex<f32>>, tensor<64x80xcomplex<f64>>, tensor<200xcomplex<f32>>
})";
  std::vector<C64> x(200 * 200);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = C64(static_cast<float>(i % 97) / 50.0f - 0.9f, static_cast<float>(i % 89) / 60.0f);
  std::vector<C128> a(64 * 48), b(48 * 80);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = C128(std::sin(static_cast<double>(i)), std::cos(0.5 * static_cast<double>(i)));
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = C128(std::cos(static_cast<double>(i)), std::sin(0.25 * static_cast<double>(i)));
  const std::vector<Tensor> args = {makeTensor<C64>({200, 200}, x), makeTensor<C128>({64, 48}, a),
                                    makeTensor<C128>({48, 80}, b)};
  const std::vector<Tensor> ref = runText(text, args, 1);
  ASSERT_EQ(ref.size(), 3u);
  for (int threads : {2, 4, 16}) {
    auto out = runText(text, args, threads);
    ASSERT_EQ(out.size(), 3u);
    for (size_t i = 0; i < out.size(); ++i) {
      ASSERT_EQ(out[i].byteSize(), ref[i].byteSize());
      EXPECT_EQ(std::memcmp(out[i].data(), ref[i].data(), static_cast<size_t>(ref[i].byteSize())),
                0)
          << "result " << i << " with " << threads << " threads";
    }
  }
}

} // namespace
} // namespace rs::cpu::testing
