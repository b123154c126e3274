//===- test/cpu/fft_test.cc - stablehlo.fft --------------------------------===//
//
// Exact results of stablehlo.fft (openxla/stablehlo docs/spec.md "fft") on transforms
// whose twiddles are quarter turns (exact): FFT, IFFT, RFFT and IRFFT in 1 and 2 dims,
// f32 and f64, zero-size batches, and the plan-time errors.
//
//===----------------------------------------------------------------------===//
#include "cpu_test_util.h"

#include <complex>

namespace rs::cpu::testing {
namespace {

using C64 = std::complex<float>;
using C128 = std::complex<double>;

std::string fftProps(const std::string &type, const std::string &lengths) {
  return "<{fft_type = #stablehlo<fft_type " + type + ">, fft_length = array<i64: " + lengths +
         ">}>";
}

TEST(Fft, ComplexForwardAndInverse) {
  const std::string t = "tensor<4xcomplex<f64>>";
  const std::vector<C128> x = {{1, 0}, {2, 0}, {3, 0}, {4, 0}};
  auto out =
      runText(opModule("stablehlo.fft", {t}, t, fftProps("FFT", "4")), {makeTensor<C128>({4}, x)});
  ASSERT_EQ(out.size(), 1u);
  const std::vector<C128> spectrum = {{10, 0}, {-2, 2}, {-2, 0}, {-2, -2}};
  EXPECT_EQ(valuesOf<C128>(out[0]), spectrum);
  auto back = runText(opModule("stablehlo.fft", {t}, t, fftProps("IFFT", "4")),
                      {makeTensor<C128>({4}, spectrum)});
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(valuesOf<C128>(back[0]), x);
}

TEST(Fft, TwoDimensionsOverABatch) {
  // Batch of 2, FFT over [2, 2]: X[k0, k1] = sum x[j0, j1] (-1)^(j0 k0 + j1 k1).
  const std::string t = "tensor<2x2x2xcomplex<f32>>";
  auto out =
      runText(opModule("stablehlo.fft", {t}, t, fftProps("FFT", "2, 2")),
              {makeTensor<C64>({2, 2, 2},
                               {{1, 1}, {2, 0}, {3, 0}, {4, -1}, {0, 0}, {0, 0}, {0, 0}, {0, 2}})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(
      valuesOf<C64>(out[0]),
      (std::vector<C64>{{10, 0}, {-2, 2}, {-4, 2}, {0, 0}, {0, 2}, {0, -2}, {0, -2}, {0, 2}}));
}

TEST(Fft, RealForwardAndInverse) {
  auto out = runText(opModule("stablehlo.fft", {"tensor<2x4xf64>"}, "tensor<2x3xcomplex<f64>>",
                              fftProps("RFFT", "4")),
                     {makeTensor<double>({2, 4}, {1, 2, 3, 4, 0, 1, 0, -1})});
  ASSERT_EQ(out.size(), 1u);
  const std::vector<C128> half = {{10, 0}, {-2, 2}, {-2, 0}, {0, 0}, {0, -2}, {0, 0}};
  EXPECT_EQ(valuesOf<C128>(out[0]), half);
  auto back = runText(opModule("stablehlo.fft", {"tensor<2x3xcomplex<f64>>"}, "tensor<2x4xf64>",
                               fftProps("IRFFT", "4")),
                      {makeTensor<C128>({2, 3}, half)});
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(valuesOf<double>(back[0]), (std::vector<double>{1, 2, 3, 4, 0, 1, 0, -1}));
}

TEST(Fft, IrfftOddLengthAndTwoDims) {
  // IRFFT of length 3 from 2 entries: X[2] = conj(X[1]).
  auto out = runText(opModule("stablehlo.fft", {"tensor<2xcomplex<f32>>"}, "tensor<3xf32>",
                              fftProps("IRFFT", "3")),
                     {makeTensor<C64>({2}, {{3, 0}, {0, 0}})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<float>(out[0]), (std::vector<float>{1, 1, 1}));
  // 2-D: RFFT over [2, 4] then IRFFT back.
  const std::vector<double> x = {1, 0, 2, 0, -1, 3, 0, 1};
  auto spec = runText(opModule("stablehlo.fft", {"tensor<2x4xf64>"}, "tensor<2x3xcomplex<f64>>",
                               fftProps("RFFT", "2, 4")),
                      {makeTensor<double>({2, 4}, x)});
  ASSERT_EQ(spec.size(), 1u);
  EXPECT_EQ(valuesOf<C128>(spec[0]),
            (std::vector<C128>{{6, 0}, {-2, -2}, {-2, 0}, {0, 0}, {0, 2}, {8, 0}}));
  auto back = runText(opModule("stablehlo.fft", {"tensor<2x3xcomplex<f64>>"}, "tensor<2x4xf64>",
                               fftProps("IRFFT", "2, 4")),
                      {spec[0]});
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(valuesOf<double>(back[0]), x);
}

TEST(Fft, ZeroSizeBatchAndErrors) {
  auto out = runText(opModule("stablehlo.fft", {"tensor<0x3xcomplex<f64>>"}, "tensor<0x4xf64>",
                              fftProps("IRFFT", "4")),
                     {Tensor::zeros(DType::kComplex128, {0, 3})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].numElements(), 0);
  auto p = compileText(opModule("stablehlo.fft", {"tensor<4xcomplex<f32>>"},
                                "tensor<4xcomplex<f32>>", fftProps("FFT", "8")));
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status().message(),
            "test.mlir:2:3: 'stablehlo.fft' op fft_length [8] does not fit operand shape [4] "
            "(in function @main)");
  p = compileText(opModule("stablehlo.fft", {"tensor<4xf32>"}, "tensor<3xcomplex<f64>>",
                           fftProps("RFFT", "4")));
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().message(),
            "test.mlir:2:3: 'stablehlo.fft' op operand type tensor<4xf32> and result type "
            "tensor<3xcomplex<f64>> do not fit fft_type RFFT (in function @main)");
}

} // namespace
} // namespace rs::cpu::testing
