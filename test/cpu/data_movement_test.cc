//===- test/cpu/data_movement_test.cc - Layout and slicing ops -------------===//
//
// Exact results of broadcast_in_dim, transpose, reshape, slice, concatenate, pad
// (negative and interior padding), reverse, iota, dynamic_slice and dynamic_update_slice
// (start index clamping per spec) and constants, on hand-written modules.
//
//===----------------------------------------------------------------------===//
#include "cpu_test_util.h"

#include <numeric>

namespace rs::cpu::testing {
namespace {

std::vector<int32_t> iota32(int n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

std::vector<int32_t> run1(const std::string &op, const std::vector<std::string> &arg_types,
                          const std::string &result, const std::string &props,
                          const std::vector<Tensor> &args) {
  auto out = runText(opModule(op, arg_types, result, props), args);
  return out.empty() ? std::vector<int32_t>{} : valuesOf<int32_t>(out[0]);
}

TEST(DataMovement, BroadcastInDim) {
  // [3] -> [2,3] along dim 1, and [2,1] -> [2,3] (size-1 broadcast), and a transposing map.
  EXPECT_EQ(run1("stablehlo.broadcast_in_dim", {"tensor<3xi32>"}, "tensor<2x3xi32>",
                 "<{broadcast_dimensions = array<i64: 1>}>", {makeTensor<int32_t>({3}, {1, 2, 3})}),
            (std::vector<int32_t>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(run1("stablehlo.broadcast_in_dim", {"tensor<2x1xi32>"}, "tensor<2x3xi32>",
                 "<{broadcast_dimensions = array<i64: 0, 1>}>",
                 {makeTensor<int32_t>({2, 1}, {7, 8})}),
            (std::vector<int32_t>{7, 7, 7, 8, 8, 8}));
  EXPECT_EQ(run1("stablehlo.broadcast_in_dim", {"tensor<2x3xi32>"}, "tensor<3x2xi32>",
                 "<{broadcast_dimensions = array<i64: 1, 0>}>",
                 {makeTensor<int32_t>({2, 3}, iota32(6))}),
            (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(run1("stablehlo.broadcast_in_dim", {"tensor<i32>"}, "tensor<2x2xi32>",
                 "<{broadcast_dimensions = array<i64>}>", {makeTensor<int32_t>({}, {5})}),
            (std::vector<int32_t>{5, 5, 5, 5}));
}

TEST(DataMovement, BroadcastRejectsMismatchedSize) {
  auto p = compileText(opModule("stablehlo.broadcast_in_dim", {"tensor<2xi32>"}, "tensor<3xi32>",
                                "<{broadcast_dimensions = array<i64: 0>}>"));
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("operand dimension 0 of size 2 cannot broadcast"),
            std::string::npos)
      << p.status().message();
}

TEST(DataMovement, TransposeAndReshape) {
  EXPECT_EQ(run1("stablehlo.transpose", {"tensor<2x3x2xi32>"}, "tensor<2x2x3xi32>",
                 "<{permutation = array<i64: 2, 0, 1>}>",
                 {makeTensor<int32_t>({2, 3, 2}, iota32(12))}),
            (std::vector<int32_t>{0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11}));
  auto out = runText(opModule("stablehlo.reshape", {"tensor<2x3xi32>"}, "tensor<3x2xi32>"),
                     {makeTensor<int32_t>({2, 3}, iota32(6))});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(valuesOf<int32_t>(out[0]), iota32(6));
}

TEST(DataMovement, SliceWithStrides) {
  EXPECT_EQ(run1("stablehlo.slice", {"tensor<3x5xi32>"}, "tensor<2x2xi32>",
                 "<{start_indices = array<i64: 1, 0>, limit_indices = array<i64: 3, 4>, "
                 "strides = array<i64: 1, 3>}>",
                 {makeTensor<int32_t>({3, 5}, iota32(15))}),
            (std::vector<int32_t>{5, 8, 10, 13}));
}

TEST(DataMovement, Concatenate) {
  auto out = runText(
      "func.func @main(%a: tensor<2x1xi32>, %b: tensor<2x2xi32>) -> tensor<2x3xi32> {\n"
      "  %0 = \"stablehlo.concatenate\"(%a, %b) <{dimension = 1 : i64}> : (tensor<2x1xi32>, "
      "tensor<2x2xi32>) -> tensor<2x3xi32>\n  return %0 : tensor<2x3xi32>\n}\n",
      {makeTensor<int32_t>({2, 1}, {9, 8}), makeTensor<int32_t>({2, 2}, {1, 2, 3, 4})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<int32_t>(out[0]), (std::vector<int32_t>{9, 1, 2, 8, 3, 4}));
}

TEST(DataMovement, PadWithNegativeAndInteriorPadding) {
  // [1,2,3] with interior 1 is 1 9 2 9 3; low -1 drops the 1, high 2 appends 9 9.
  EXPECT_EQ(run1("stablehlo.pad", {"tensor<3xi32>", "tensor<i32>"}, "tensor<6xi32>",
                 "<{edge_padding_low = array<i64: -1>, edge_padding_high = array<i64: 2>, "
                 "interior_padding = array<i64: 1>}>",
                 {makeTensor<int32_t>({3}, {1, 2, 3}), makeTensor<int32_t>({}, {9})}),
            (std::vector<int32_t>{9, 2, 9, 3, 9, 9}));
  EXPECT_EQ(run1("stablehlo.pad", {"tensor<2x2xi32>", "tensor<i32>"}, "tensor<3x4xi32>",
                 "<{edge_padding_low = array<i64: 1, 0>, edge_padding_high = array<i64: 0, 2>, "
                 "interior_padding = array<i64: 0, 0>}>",
                 {makeTensor<int32_t>({2, 2}, {1, 2, 3, 4}), makeTensor<int32_t>({}, {0})}),
            (std::vector<int32_t>{0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0}));
}

TEST(DataMovement, ReverseAndIota) {
  EXPECT_EQ(run1("stablehlo.reverse", {"tensor<2x3xi32>"}, "tensor<2x3xi32>",
                 "<{dimensions = array<i64: 1>}>", {makeTensor<int32_t>({2, 3}, iota32(6))}),
            (std::vector<int32_t>{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(run1("stablehlo.iota", {}, "tensor<2x3xi32>", "<{iota_dimension = 1 : i64}>", {}),
            (std::vector<int32_t>{0, 1, 2, 0, 1, 2}));
  auto out =
      runText(opModule("stablehlo.iota", {}, "tensor<3xf32>", "<{iota_dimension = 0 : i64}>"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<float>(out[0]), (std::vector<float>{0, 1, 2}));
}

TEST(DataMovement, DynamicSliceClampsStartIndices) {
  const std::string text =
      "func.func @main(%x: tensor<4x4xi32>, %i: tensor<i64>, %j: tensor<i64>) -> tensor<2x3xi32> "
      "{\n"
      "  %0 = \"stablehlo.dynamic_slice\"(%x, %i, %j) <{slice_sizes = array<i64: 2, 3>}> : "
      "(tensor<4x4xi32>, tensor<i64>, tensor<i64>) -> tensor<2x3xi32>\n"
      "  return %0 : tensor<2x3xi32>\n}\n";
  auto slice = [&](int64_t i, int64_t j) {
    auto out = runText(text, {makeTensor<int32_t>({4, 4}, iota32(16)), makeTensor<int64_t>({}, {i}),
                              makeTensor<int64_t>({}, {j})});
    return out.empty() ? std::vector<int32_t>{} : valuesOf<int32_t>(out[0]);
  };
  EXPECT_EQ(slice(1, 1), (std::vector<int32_t>{5, 6, 7, 9, 10, 11}));
  EXPECT_EQ(slice(3, 5), (std::vector<int32_t>{9, 10, 11, 13, 14, 15})); // clamped to (2, 1)
  EXPECT_EQ(slice(-4, -1), (std::vector<int32_t>{0, 1, 2, 4, 5, 6}));    // clamped to (0, 0)
  EXPECT_EQ(slice(std::numeric_limits<int64_t>::min(), 0), slice(0, 0));
}

TEST(DataMovement, DynamicUpdateSliceClampsStartIndices) {
  const std::string text =
      "func.func @main(%x: tensor<3x3xi32>, %u: tensor<2x2xi32>, %i: tensor<i32>, %j: tensor<i32>)"
      " -> tensor<3x3xi32> {\n"
      "  %0 = \"stablehlo.dynamic_update_slice\"(%x, %u, %i, %j) : (tensor<3x3xi32>, "
      "tensor<2x2xi32>, tensor<i32>, tensor<i32>) -> tensor<3x3xi32>\n"
      "  return %0 : tensor<3x3xi32>\n}\n";
  Tensor x = makeTensor<int32_t>({3, 3}, std::vector<int32_t>(9, 0));
  Tensor u = makeTensor<int32_t>({2, 2}, {1, 2, 3, 4});
  auto out = runText(text, {x, u, makeTensor<int32_t>({}, {5}), makeTensor<int32_t>({}, {-2})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<int32_t>(out[0]), (std::vector<int32_t>{0, 0, 0, 1, 2, 0, 3, 4, 0}));
  EXPECT_EQ(valuesOf<int32_t>(x), std::vector<int32_t>(9, 0)); // the argument is untouched
}

TEST(DataMovement, ConstantsAndSplats) {
  auto out = runText("func.func @main() -> (tensor<2x2xf32>, tensor<3xi1>) {\n"
                     "  %0 = stablehlo.constant dense<1.5> : tensor<2x2xf32>\n"
                     "  %1 = stablehlo.constant dense<[true, false, true]> : tensor<3xi1>\n"
                     "  return %0, %1 : tensor<2x2xf32>, tensor<3xi1>\n}\n");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(valuesOf<float>(out[0]), std::vector<float>(4, 1.5f));
  EXPECT_EQ(valuesOf<bool>(out[1]), (std::vector<bool>{true, false, true}));
}

TEST(DataMovement, OutputsNeverAliasArgumentsOrConstants) {
  const std::string text =
      "func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<1x2xf32>, "
      "tensor<2xf32>) {\n"
      "  %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
      "  %r = stablehlo.reshape %x : (tensor<2xf32>) -> tensor<1x2xf32>\n"
      "  return %x, %c, %r, %c : tensor<2xf32>, tensor<2xf32>, tensor<1x2xf32>, tensor<2xf32>\n}\n";
  Tensor x = makeTensor<float>({2}, {3, 4});
  auto out = runText(text, {x});
  ASSERT_EQ(out.size(), 4u);
  std::vector<const uint8_t *> seen = {x.data()};
  for (const Tensor &t : out) {
    for (const uint8_t *p : seen)
      EXPECT_NE(t.data(), p);
    seen.push_back(t.data());
  }
  EXPECT_EQ(valuesOf<float>(out[0]), (std::vector<float>{3, 4}));
  EXPECT_EQ(valuesOf<float>(out[1]), (std::vector<float>{1, 2}));
  EXPECT_EQ(valuesOf<float>(out[2]), (std::vector<float>{3, 4}));
  EXPECT_EQ(valuesOf<float>(out[3]), (std::vector<float>{1, 2}));
}

} // namespace
} // namespace rs::cpu::testing
