//===- test/cpu/gather_scatter_sort_test.cc - Indexing and sorting ops -----===//
//
// gather (index clamping, index_vector_dim, batching dims), scatter (repeated indices,
// out-of-bounds updates skipped, overwrite, a general body, two operands), sort (stable,
// several operands, a comparator with NaN handling) and chlo.top_k (ties, NaN).
//
//===----------------------------------------------------------------------===//
#include "cpu_test_util.h"

#include <cmath>
#include <limits>
#include <numeric>

namespace rs::cpu::testing {
namespace {

std::vector<int64_t> iota64(int n, int64_t from = 0) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), from);
  return v;
}

TEST(Gather, SpecExampleWithClamping) {
  // The spec's example: start index (0, 9) is clamped to (0, 2).
  const std::string text = R"(
func.func @main(%operand: tensor<3x4x2xi64>, %idx: tensor<2x3x2xi64>) -> tensor<2x3x2x2xi64> {
  %0 = "stablehlo.gather"(%operand, %idx) <{dimension_numbers = #stablehlo.gather<
      offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0],
      index_vector_dim = 2>, slice_sizes = array<i64: 1, 2, 2>, indices_are_sorted = false}>
      : (tensor<3x4x2xi64>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xi64>
  return %0 : tensor<2x3x2x2xi64>
}
)";
  auto out = runText(text, {makeTensor<int64_t>({3, 4, 2}, iota64(24, 1)),
                            makeTensor<int64_t>({2, 3, 2}, {0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 0, 9})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<int64_t>(out[0]),
            (std::vector<int64_t>{1, 2,  3,  4,  3,  4,  5,  6,  13, 14, 15, 16,
                                  9, 10, 11, 12, 11, 12, 13, 14, 17, 18, 19, 20}));
}

TEST(Gather, EmbeddingLookupWithTrailingIndexVectorDim) {
  // As the BERT fixtures: table [5, 3], ids [2, 2] -> [2, 2, 3]; index_vector_dim = rank.
  const std::string text = R"(
func.func @main(%table: tensor<5x3xf32>, %ids: tensor<2x2xi32>) -> tensor<2x2x3xf32> {
  %0 = "stablehlo.gather"(%table, %ids) <{dimension_numbers = #stablehlo.gather<
      offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0],
      index_vector_dim = 2>, slice_sizes = array<i64: 1, 3>}>
      : (tensor<5x3xf32>, tensor<2x2xi32>) -> tensor<2x2x3xf32>
  return %0 : tensor<2x2x3xf32>
}
)";
  std::vector<float> table(15);
  std::iota(table.begin(), table.end(), 0.0f);
  auto out = runText(
      text, {makeTensor<float>({5, 3}, table), makeTensor<int32_t>({2, 2}, {4, 0, -7, 100})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<float>(out[0]),
            (std::vector<float>{12, 13, 14, 0, 1, 2, 0, 1, 2, 12, 13, 14}));
}

TEST(Gather, BatchingDims) {
  // operand [2, 3], indices [2, 1]: row b takes element indices[b] of operand row b.
  const std::string text = R"(
func.func @main(%operand: tensor<2x3xi32>, %idx: tensor<2x1xi32>) -> tensor<2xi32> {
  %0 = "stablehlo.gather"(%operand, %idx) <{dimension_numbers = #stablehlo.gather<
      collapsed_slice_dims = [1], operand_batching_dims = [0],
      start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 1>,
      slice_sizes = array<i64: 1, 1>}> : (tensor<2x3xi32>, tensor<2x1xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}
)";
  auto out = runText(text, {makeTensor<int32_t>({2, 3}, {10, 11, 12, 20, 21, 22}),
                            makeTensor<int32_t>({2, 1}, {2, 1})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<int32_t>(out[0]), (std::vector<int32_t>{12, 21}));
}

std::string scatterModule(const std::string &body) {
  return R"(
func.func @main(%x: tensor<5xf32>, %idx: tensor<4x1xi32>, %upd: tensor<4xf32>) -> tensor<5xf32> {
  %0 = "stablehlo.scatter"(%x, %idx, %upd) <{scatter_dimension_numbers = #stablehlo.scatter<
      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,
      indices_are_sorted = false, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
)" + body +
         R"(
  }) : (tensor<5xf32>, tensor<4x1xi32>, tensor<4xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
)";
}

std::vector<float> scatter(const std::string &body) {
  auto out = runText(scatterModule(body), {makeTensor<float>({5}, {1, 1, 1, 1, 1}),
                                           makeTensor<int32_t>({4, 1}, {3, 0, 3, 5}),
                                           makeTensor<float>({4}, {10, 20, 30, 40})});
  return out.empty() ? std::vector<float>{} : valuesOf<float>(out[0]);
}

TEST(Scatter, RepeatedIndicesCombineAndOutOfBoundsIsSkipped) {
  // Index 3 twice (10 and 30), index 5 out of bounds (skipped).
  EXPECT_EQ(scatter("    %s = stablehlo.add %a, %b : tensor<f32>\n"
                    "    stablehlo.return %s : tensor<f32>"),
            (std::vector<float>{21, 1, 1, 41, 1}));
  EXPECT_EQ(scatter("    stablehlo.return %b : tensor<f32>"),
            (std::vector<float>{20, 1, 1, 30, 1})); // overwrite: the later update wins
  // A body that is not one op takes the general path: new = 2 * old + update.
  EXPECT_EQ(scatter("    %t = stablehlo.add %a, %a : tensor<f32>\n"
                    "    %s = stablehlo.add %t, %b : tensor<f32>\n"
                    "    stablehlo.return %s : tensor<f32>"),
            (std::vector<float>{22, 1, 1, 2 * (2 * 1 + 10) + 30, 1}));
}

TEST(Scatter, TwoOperandsAndWindows) {
  // Rows of a [3, 2] input updated by windows [2, 2] at rows idx; two operands at once.
  const std::string text = R"(
func.func @main(%x: tensor<3x2xi32>, %y: tensor<3x2xi32>, %idx: tensor<2x1xi32>,
                %u: tensor<2x2xi32>, %v: tensor<2x2xi32>) -> (tensor<3x2xi32>, tensor<3x2xi32>) {
  %0:2 = "stablehlo.scatter"(%x, %y, %idx, %u, %v) <{scatter_dimension_numbers =
      #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0],
      scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<i32>, %d: tensor<i32>):
    %s = stablehlo.add %a, %c : tensor<i32>
    %m = stablehlo.maximum %b, %d : tensor<i32>
    stablehlo.return %s, %m : tensor<i32>, tensor<i32>
  }) : (tensor<3x2xi32>, tensor<3x2xi32>, tensor<2x1xi32>, tensor<2x2xi32>, tensor<2x2xi32>)
      -> (tensor<3x2xi32>, tensor<3x2xi32>)
  return %0#0, %0#1 : tensor<3x2xi32>, tensor<3x2xi32>
}
)";
  Tensor x = makeTensor<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6});
  auto out = runText(text, {x, makeTensor<int32_t>({3, 2}, {0, 9, 0, 9, 0, 9}),
                            makeTensor<int32_t>({2, 1}, {2, 0}),
                            makeTensor<int32_t>({2, 2}, {10, 20, 30, 40}),
                            makeTensor<int32_t>({2, 2}, {5, 5, 5, 5})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(valuesOf<int32_t>(out[0]), (std::vector<int32_t>{31, 42, 3, 4, 15, 26}));
  EXPECT_EQ(valuesOf<int32_t>(out[1]), (std::vector<int32_t>{5, 9, 0, 9, 5, 9}));
  EXPECT_EQ(valuesOf<int32_t>(x), (std::vector<int32_t>{1, 2, 3, 4, 5, 6})); // input untouched
}

TEST(Sort, StableWithTwoOperandsAlongDimZero) {
  const std::string text = R"(
func.func @main(%k: tensor<4x2xi32>, %v: tensor<4x2xf32>) -> (tensor<4x2xi32>, tensor<4x2xf32>) {
  %0:2 = "stablehlo.sort"(%k, %v) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<f32>, %d: tensor<f32>):
    %lt = stablehlo.compare GT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<4x2xi32>, tensor<4x2xf32>) -> (tensor<4x2xi32>, tensor<4x2xf32>)
  return %0#0, %0#1 : tensor<4x2xi32>, tensor<4x2xf32>
}
)";
  auto out = runText(text, {makeTensor<int32_t>({4, 2}, {1, 7, 3, 7, 1, 2, 3, 9}),
                            makeTensor<float>({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(valuesOf<int32_t>(out[0]), (std::vector<int32_t>{3, 9, 3, 7, 1, 7, 1, 2}));
  // Ties keep their input order: key 3 at rows 1, 3; key 1 at rows 0, 2; key 7 at rows 0, 1.
  EXPECT_EQ(valuesOf<float>(out[1]), (std::vector<float>{2, 7, 6, 1, 0, 3, 4, 5}));
}

TEST(Sort, TotalOrderComparatorPutsNaNLast) {
  const std::string text = R"(
func.func @main(%x: tensor<6xf32>) -> tensor<6xf32> {
  %0 = "stablehlo.sort"(%x) <{dimension = -1 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %lt = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<6xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}
)";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = runText(text, {makeTensor<float>({6}, {3, nan, -1, 0.0f, -0.0f, -5})});
  ASSERT_EQ(out.size(), 1u);
  auto v = valuesOf<float>(out[0]);
  EXPECT_EQ(v[0], -5.0f);
  EXPECT_EQ(v[1], -1.0f);
  EXPECT_EQ(bitsOf(v[2]), bitsOf(-0.0f));
  EXPECT_EQ(bitsOf(v[3]), bitsOf(0.0f));
  EXPECT_EQ(v[4], 3.0f);
  EXPECT_TRUE(std::isnan(v[5]));
}

TEST(TopK, LargestFirstTiesByIndex) {
  const std::string text = R"(
func.func @main(%x: tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>) {
  %0:2 = "chlo.top_k"(%x) <{k = 3 : i64}> : (tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>)
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x3xi32>
}
)";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = runText(text, {makeTensor<float>({2, 5}, {1, 5, 3, 5, 2, 0, nan, -1, 4, 4})});
  ASSERT_EQ(out.size(), 2u);
  auto v = valuesOf<float>(out[0]);
  EXPECT_EQ(valuesOf<int32_t>(out[1]), (std::vector<int32_t>{1, 3, 2, 1, 3, 4}));
  EXPECT_EQ(v[0], 5.0f);
  EXPECT_EQ(v[2], 3.0f);
  EXPECT_TRUE(std::isnan(v[3]));
  EXPECT_EQ(v[4], 4.0f);
}

} // namespace
} // namespace rs::cpu::testing
