//===- test/cpu/special_ops_test.cc - triangular_solve, chlo special functions ===//
//
// stablehlo.triangular_solve on batches, both sides, transposes and unit diagonals
// (integer solutions, so results are exact; complex with ADJOINT), and chlo.erf_inv / digamma /
// bessel_i1e against identities and known constants.
//
//===----------------------------------------------------------------------===//
#include "cpu_test_util.h"

#include <cmath>
#include <complex>
#include <limits>
#include <numbers>

namespace rs::cpu::testing {
namespace {

TEST(TriangularSolve, RightSideTransposedUnitDiagonalBatched) {
  // op(a) = unit-diagonal lower(a)^T; 100 and 7 sit where the op must not read.
  Tensor a = makeTensor<float>({2, 3, 3}, {7, 100, 100, 2, 7, 100, 3, 4, 7, //
                                           7, 100, 100, 1, 7, 100, -1, 2, 7});
  // b = x op(a) for x = [[1, 2, 3], [0, -1, 2]] and [[2, 0, 1], [1, 1, 1]].
  Tensor b = makeTensor<float>({2, 2, 3}, {1, 4, 14, 0, -1, -2, 2, 2, -1, 1, 2, 2});
  auto out = runText(opModule("stablehlo.triangular_solve",
                              {"tensor<2x3x3xf32>", "tensor<2x2x3xf32>"}, "tensor<2x2x3xf32>",
                              "{left_side = false, lower = true, unit_diagonal = true, transpose_a "
                              "= #stablehlo<transpose TRANSPOSE>}"),
                     {a, b});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<float>(out[0]), (std::vector<float>{1, 2, 3, 0, -1, 2, 2, 0, 1, 1, 1, 1}));
}

TEST(TriangularSolve, LeftSideLowerAndUpper) {
  Tensor a = makeTensor<double>({2, 2}, {2, 5, 1, 4});
  Tensor b = makeTensor<double>({2, 1}, {2, 9});
  auto lower = runText(opModule("stablehlo.triangular_solve",
                                {"tensor<2x2xf64>", "tensor<2x1xf64>"}, "tensor<2x1xf64>",
                                "{left_side = true, lower = true, unit_diagonal = false, "
                                "transpose_a = #stablehlo<transpose NO_TRANSPOSE>}"),
                       {a, b});
  ASSERT_EQ(lower.size(), 1u);
  EXPECT_EQ(valuesOf<double>(lower[0]), (std::vector<double>{1, 2})); // [[2,0],[1,4]]
  auto upper = runText(opModule("stablehlo.triangular_solve",
                                {"tensor<2x2xf64>", "tensor<2x1xf64>"}, "tensor<2x1xf64>",
                                "{left_side = true, lower = false, unit_diagonal = false, "
                                "transpose_a = #stablehlo<transpose ADJOINT>}"),
                       {a, b});
  ASSERT_EQ(upper.size(), 1u);
  // op(a) = [[2,0],[5,4]]: x0 = 1, x1 = (9 - 5) / 4.
  EXPECT_EQ(valuesOf<double>(upper[0]), (std::vector<double>{1, 1}));
}

TEST(TriangularSolve, ComplexNoTransposeAndAdjoint) {
  using C = std::complex<double>;
  // a = [[1+i, 9], [2-2i, 3+4i]] (9 is never read), x = [1, i].
  Tensor a = makeTensor<C>({2, 2}, {{1, 1}, {9, 0}, {2, -2}, {3, 4}});
  const std::string types = "{left_side = true, lower = true, unit_diagonal = false, "
                            "transpose_a = #stablehlo<transpose ";
  auto solve = [&](const std::string &mode, const std::vector<C> &b) {
    auto out = runText(opModule("stablehlo.triangular_solve",
                                {"tensor<2x2xcomplex<f64>>", "tensor<2x1xcomplex<f64>>"},
                                "tensor<2x1xcomplex<f64>>", types + mode + ">}"),
                       {a, makeTensor<C>({2, 1}, b)});
    return out.empty() ? std::vector<C>{} : valuesOf<C>(out[0]);
  };
  // lower(a) x = [1+i, (2-2i) + (3+4i)i].
  EXPECT_EQ(solve("NO_TRANSPOSE", {{1, 1}, {-2, 1}}), (std::vector<C>{{1, 0}, {0, 1}}));
  // conj(lower(a))^T x = [(1-i) + (2+2i)i, (3-4i)i].
  EXPECT_EQ(solve("ADJOINT", {{-1, 1}, {4, 3}}), (std::vector<C>{{1, 0}, {0, 1}}));
}

TEST(TriangularSolve, RejectsMismatchedShapesAndIntegers) {
  auto bad =
      compileText(opModule("stablehlo.triangular_solve", {"tensor<2x2xf32>", "tensor<3x1xf32>"},
                           "tensor<3x1xf32>", "{left_side = true, lower = true}"));
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  auto ints =
      compileText(opModule("stablehlo.triangular_solve", {"tensor<2x2xi32>", "tensor<2x1xi32>"},
                           "tensor<2x1xi32>", "{left_side = true, lower = true}"));
  ASSERT_FALSE(ints.isOk());
  EXPECT_EQ(ints.status().code(), StatusCode::kUnimplemented);
}

std::vector<double> applyF64(const std::string &op, const std::vector<double> &x) {
  const std::string type = "tensor<" + std::to_string(x.size()) + "xf64>";
  auto out = runText(opModule(op, {type}, type),
                     {makeTensor<double>({static_cast<int64_t>(x.size())}, x)});
  return out.size() == 1 ? valuesOf<double>(out[0]) : std::vector<double>{};
}

TEST(SpecialFunctions, ErfInv) {
  auto y = applyF64("chlo.erf_inv", {std::erf(0.5), std::erf(-2.0), 1.0, -1.0, 1.5, -0.0});
  ASSERT_EQ(y.size(), 6u);
  EXPECT_NEAR(y[0], 0.5, 1e-15);
  EXPECT_NEAR(y[1], -2.0, 1e-13);
  EXPECT_EQ(y[2], std::numeric_limits<double>::infinity());
  EXPECT_EQ(y[3], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_TRUE(y[5] == 0.0 && std::signbit(y[5]));
}

TEST(SpecialFunctions, Digamma) {
  const double gamma = 0.57721566490153286;
  auto y = applyF64("chlo.digamma", {1.0, 0.5, -0.5, 0.0, -2.0, 20.0});
  ASSERT_EQ(y.size(), 6u);
  EXPECT_NEAR(y[0], -gamma, 4e-15); // the recurrence's sums round a few ulp
  EXPECT_NEAR(y[1], -gamma - 2 * std::numbers::ln2, 4e-15);
  EXPECT_NEAR(y[2], -gamma - 2 * std::numbers::ln2 + 2, 1e-14); // psi(x+1) = psi(x) + 1/x
  EXPECT_TRUE(std::isnan(y[3]));
  EXPECT_TRUE(std::isnan(y[4]));
  double harmonic = 0; // psi(20) = H_19 - gamma
  for (int k = 1; k < 20; ++k)
    harmonic += 1.0 / k;
  EXPECT_NEAR(y[5], harmonic - gamma, 1e-14);
}

TEST(SpecialFunctions, BesselI1e) {
  const double i1_of_1 = 0.56515910399248503; // I1(1)
  auto y = applyF64("chlo.bessel_i1e", {1.0, -1.0, 0.0, 50.0, std::nextafter(50.0, 51.0)});
  ASSERT_EQ(y.size(), 5u);
  EXPECT_NEAR(y[0], i1_of_1 * std::exp(-1.0), 1e-16);
  EXPECT_EQ(y[1], -y[0]);
  EXPECT_EQ(y[2], 0.0);
  // The power series (up to 50) and the asymptotic series (above) agree at the seam.
  EXPECT_NEAR(y[3], y[4], 1e-15);
  // Three terms of the asymptotic series; the fourth is about 5e-8 here.
  EXPECT_NEAR(y[3], 1 / std::sqrt(2 * std::numbers::pi * 50) * (1 - 3 / 400.0 - 15 / 320000.0),
              1e-7);
}

} // namespace
} // namespace rs::cpu::testing
