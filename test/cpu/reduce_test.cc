//===- test/cpu/reduce_test.cc - reduce and reduce_window ------------------===//
//
// reduce over inner and outer dims (fast paths), with a non-identity init value, NaN in
// max, a multi-operand argmax body and a body that is not a single op (general path);
// reduce_window with padding, strides, base and window dilations.
//
//===----------------------------------------------------------------------===//
#include "cpu_test_util.h"

#include <cmath>
#include <limits>
#include <numeric>

namespace rs::cpu::testing {
namespace {

std::string reduceModule(const std::string &in_type, const std::string &elem,
                         const std::string &out_type, const std::string &dims,
                         const std::string &body_op) {
  const std::string s = "tensor<" + elem + ">";
  return "func.func @main(%x: " + in_type + ", %init: " + s + ") -> " + out_type + " {\n" +
         "  %0 = \"stablehlo.reduce\"(%x, %init) <{dimensions = array<i64: " + dims + ">}> ({\n" +
         "  ^bb0(%a: " + s + ", %b: " + s + "):\n" + "    %1 = \"" + body_op + "\"(%a, %b) : (" +
         s + ", " + s + ") -> " + s + "\n" + "    \"stablehlo.return\"(%1) : (" + s + ") -> ()\n" +
         "  }) : (" + in_type + ", " + s + ") -> " + out_type + "\n" + "  return %0 : " + out_type +
         "\n}\n";
}

TEST(Reduce, SumOverInnerAndOuterDims) {
  std::vector<int32_t> x(24);
  std::iota(x.begin(), x.end(), 0);
  Tensor in = makeTensor<int32_t>({2, 3, 4}, x);
  Tensor init = makeTensor<int32_t>({}, {100});
  auto inner =
      runText(reduceModule("tensor<2x3x4xi32>", "i32", "tensor<2x3xi32>", "2", "stablehlo.add"),
              {in, init});
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_EQ(valuesOf<int32_t>(inner[0]), (std::vector<int32_t>{106, 122, 138, 154, 170, 186}));
  auto outer =
      runText(reduceModule("tensor<2x3x4xi32>", "i32", "tensor<4xi32>", "0, 1", "stablehlo.add"),
              {in, init});
  ASSERT_EQ(outer.size(), 1u);
  EXPECT_EQ(valuesOf<int32_t>(outer[0]), (std::vector<int32_t>{160, 166, 172, 178}));
  auto middle = runText(
      reduceModule("tensor<2x3x4xi32>", "i32", "tensor<2x4xi32>", "1", "stablehlo.multiply"),
      {in, makeTensor<int32_t>({}, {1})});
  ASSERT_EQ(middle.size(), 1u);
  EXPECT_EQ(valuesOf<int32_t>(middle[0]),
            (std::vector<int32_t>{0, 45, 120, 231, 12 * 16 * 20, 13 * 17 * 21, 14 * 18 * 22,
                                  15 * 19 * 23}));
  auto all = runText(
      reduceModule("tensor<2x3x4xi32>", "i32", "tensor<i32>", "0, 1, 2", "stablehlo.maximum"),
      {in, makeTensor<int32_t>({}, {-1})});
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(valuesOf<int32_t>(all[0]), std::vector<int32_t>{23});
}

TEST(Reduce, MaxPropagatesNaNAndEmptyDimsGiveInit) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out =
      runText(reduceModule("tensor<2x3xf32>", "f32", "tensor<2xf32>", "1", "stablehlo.maximum"),
              {makeTensor<float>({2, 3}, {1, nan, 3, 4, 5, 6}),
               makeTensor<float>({}, {-std::numeric_limits<float>::infinity()})});
  ASSERT_EQ(out.size(), 1u);
  auto v = valuesOf<float>(out[0]);
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 6.0f);
  auto empty =
      runText(reduceModule("tensor<2x0xf32>", "f32", "tensor<2xf32>", "1", "stablehlo.add"),
              {Tensor::zeros(DType::kF32, {2, 0}), makeTensor<float>({}, {7})});
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_EQ(valuesOf<float>(empty[0]), (std::vector<float>{7, 7}));
}

TEST(Reduce, ArgmaxWithTwoOperandsUsesTheBody) {
  // Index of the max value, lowest index on ties (jnp.argmax's body).
  const std::string text = R"(
func.func @main(%x: tensor<3x4xf32>) -> tensor<3xi32> {
  %iota = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<3x4xi32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = "stablehlo.reduce"(%x, %iota, %ninf, %zero) <{dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<f32>, %ai: tensor<i32>, %b: tensor<f32>, %bi: tensor<i32>):
    %gt = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %eq = stablehlo.compare EQ, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %lt = stablehlo.compare LT, %ai, %bi, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %tie = stablehlo.and %eq, %lt : tensor<i1>
    %take = stablehlo.or %gt, %tie : tensor<i1>
    %v = stablehlo.select %gt, %a, %b : tensor<i1>, tensor<f32>
    %i = stablehlo.select %take, %ai, %bi : tensor<i1>, tensor<i32>
    stablehlo.return %v, %i : tensor<f32>, tensor<i32>
  }) : (tensor<3x4xf32>, tensor<3x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<3xf32>, tensor<3xi32>)
  return %r#1 : tensor<3xi32>
}
)";
  auto out = runText(text, {makeTensor<float>({3, 4}, {1, 5, 2, 5, -1, -2, -3, -4, 0, 0, 0, 9})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<int32_t>(out[0]), (std::vector<int32_t>{1, 0, 3}));
}

TEST(Reduce, GeneralBodyKeepsRowMajorOrder) {
  // acc = acc * 10 + x folds the digits in order, so the result shows the visiting order.
  const std::string text = R"(
func.func @main(%x: tensor<2x3xi64>) -> tensor<2xi64> {
  %init = stablehlo.constant dense<0> : tensor<i64>
  %ten = stablehlo.constant dense<10> : tensor<i64>
  %r = "stablehlo.reduce"(%x, %init) <{dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<i64>, %b: tensor<i64>):
    %m = stablehlo.multiply %a, %ten : tensor<i64>
    %s = stablehlo.add %m, %b : tensor<i64>
    stablehlo.return %s : tensor<i64>
  }) : (tensor<2x3xi64>, tensor<i64>) -> tensor<2xi64>
  return %r : tensor<2xi64>
}
)";
  auto out = runText(text, {makeTensor<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<int64_t>(out[0]), (std::vector<int64_t>{123, 456}));
}

std::string reduceWindowModule(const std::string &in_type, const std::string &out_type,
                               const std::string &attrs, const std::string &body_op) {
  return "func.func @main(%x: " + in_type + ", %init: tensor<f32>) -> " + out_type + " {\n" +
         "  %0 = \"stablehlo.reduce_window\"(%x, %init) <{" + attrs + "}> ({\n" +
         "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n" + "    %1 = \"" + body_op +
         "\"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n" +
         "    \"stablehlo.return\"(%1) : (tensor<f32>) -> ()\n" + "  }) : (" + in_type +
         ", tensor<f32>) -> " + out_type + "\n  return %0 : " + out_type + "\n}\n";
}

TEST(ReduceWindow, MaxPoolWithPaddingAndStride) {
  // 4x4 input, 3x3 window, stride 2, padding (0,1) per dim (as JAX SAME pooling).
  std::vector<float> x(16);
  std::iota(x.begin(), x.end(), 0.0f);
  auto out = runText(
      reduceWindowModule("tensor<4x4xf32>", "tensor<2x2xf32>",
                         "window_dimensions = array<i64: 3, 3>, window_strides = array<i64: 2, 2>, "
                         "padding = dense<[[0, 1], [0, 1]]> : tensor<2x2xi64>",
                         "stablehlo.maximum"),
      {makeTensor<float>({4, 4}, x), makeTensor<float>({}, {-1e9f})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<float>(out[0]), (std::vector<float>{10, 11, 14, 15}));
}

TEST(ReduceWindow, PaddingHoldsTheInitValue) {
  // Cumulative sum as JAX writes it (window 4, low padding 3), with init 1: every window
  // counts the init once plus once per padding element it covers.
  auto out = runText(reduceWindowModule("tensor<4xf32>", "tensor<4xf32>",
                                        "window_dimensions = array<i64: 4>, "
                                        "padding = dense<[[3, 0]]> : tensor<1x2xi64>",
                                        "stablehlo.add"),
                     {makeTensor<float>({4}, {1, 2, 3, 4}), makeTensor<float>({}, {1})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<float>(out[0]), (std::vector<float>{1 + 4, 3 + 3, 6 + 2, 10 + 1}));
}

TEST(ReduceWindow, BaseAndWindowDilations) {
  // Base dilation 2 turns [1,2,3] into [1,h,2,h,3] (holes = init 0); window 2 with window
  // dilation 2 sums elements 2 apart: [1+2, h+h, 2+3] = [3, 0, 5].
  auto out = runText(reduceWindowModule("tensor<3xf32>", "tensor<3xf32>",
                                        "window_dimensions = array<i64: 2>, "
                                        "base_dilations = array<i64: 2>, "
                                        "window_dilations = array<i64: 2>",
                                        "stablehlo.add"),
                     {makeTensor<float>({3}, {1, 2, 3}), makeTensor<float>({}, {0})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<float>(out[0]), (std::vector<float>{3, 0, 5}));
}

TEST(ReduceWindow, RejectsWrongResultShape) {
  auto p = compileText(reduceWindowModule("tensor<4xf32>", "tensor<2xf32>",
                                          "window_dimensions = array<i64: 2>", "stablehlo.add"));
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("expected tensor<3xf32>"), std::string::npos)
      << p.status().message();
}

} // namespace
} // namespace rs::cpu::testing
