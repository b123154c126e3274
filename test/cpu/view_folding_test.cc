//===- test/cpu/view_folding_test.cc - Views folded into dot_general -------===//
//
// cpu/view_folding.cc: the head split of an attention layer (slice, reshape, transpose of
// a packed q/k/v tensor) and the head merge after it (transpose of the product) give the
// same bits as the products computed from copies: every element one FMA chain in k order,
// checked against std::fma here, for 1, 2 and 4 threads. The step count shows that the
// copies are gone; a view that is also returned stays a step, with the same results.
//
//===----------------------------------------------------------------------===//
#include "cpu/compiler.h"
#include "cpu_test_util.h"

#include <gtest/gtest.h>

#include <cmath>

namespace rs::cpu::testing {
namespace {

constexpr int64_t kB = 2, kS = 6, kH = 2, kD = 4, kW = kH * kD;

/// Attention on qkv [2, 6, 24] (q, k, v of 2 heads of 4), without softmax. `extra_result`
/// also returns k transposed for the product (a view read twice).
std::string attentionModule(bool extra_result) {
  std::string text = R"(
func.func @main(%qkv: tensor<2x6x24xf32>) -> (tensor<2x6x8xf32>RESULT_TYPE) {
  %q0 = stablehlo.slice %qkv [0:2, 0:6, 0:8] : (tensor<2x6x24xf32>) -> tensor<2x6x8xf32>
  %k0 = stablehlo.slice %qkv [0:2, 0:6, 8:16] : (tensor<2x6x24xf32>) -> tensor<2x6x8xf32>
  %v0 = stablehlo.slice %qkv [0:2, 0:6, 16:24] : (tensor<2x6x24xf32>) -> tensor<2x6x8xf32>
  %q1 = stablehlo.reshape %q0 : (tensor<2x6x8xf32>) -> tensor<2x6x2x4xf32>
  %q = stablehlo.transpose %q1, dims = [0, 2, 1, 3] : (tensor<2x6x2x4xf32>) -> tensor<2x2x6x4xf32>
  %k1 = stablehlo.reshape %k0 : (tensor<2x6x8xf32>) -> tensor<2x6x2x4xf32>
  %k2 = stablehlo.transpose %k1, dims = [0, 2, 1, 3] : (tensor<2x6x2x4xf32>) -> tensor<2x2x6x4xf32>
  %kt = stablehlo.transpose %k2, dims = [0, 1, 3, 2] : (tensor<2x2x6x4xf32>) -> tensor<2x2x4x6xf32>
  %v1 = stablehlo.reshape %v0 : (tensor<2x6x8xf32>) -> tensor<2x6x2x4xf32>
  %v = stablehlo.transpose %v1, dims = [0, 2, 1, 3] : (tensor<2x6x2x4xf32>) -> tensor<2x2x6x4xf32>
  %s = stablehlo.dot_general %q, %kt, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<2x2x6x4xf32>, tensor<2x2x4x6xf32>) -> tensor<2x2x6x6xf32>
  %c = stablehlo.dot_general %s, %v, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<2x2x6x6xf32>, tensor<2x2x6x4xf32>) -> tensor<2x2x6x4xf32>
  %ct = stablehlo.transpose %c, dims = [0, 2, 1, 3] : (tensor<2x2x6x4xf32>) -> tensor<2x6x2x4xf32>
  %o = stablehlo.reshape %ct : (tensor<2x6x2x4xf32>) -> tensor<2x6x8xf32>
  return %o RESULT : tensor<2x6x8xf32>RESULT_TYPE
}
)";
  auto replace = [&](const std::string &from, const std::string &to) {
    for (size_t at; (at = text.find(from)) != std::string::npos;)
      text.replace(at, from.size(), to);
  };
  replace("RESULT_TYPE", extra_result ? ", tensor<2x2x4x6xf32>" : "");
  replace("RESULT", extra_result ? ", %kt" : "");
  return text;
}

std::vector<float> inputs() {
  std::vector<float> x(kB * kS * 3 * kW);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(static_cast<int64_t>(i * 7919) % 2001 - 1000) / 300.0f;
  return x;
}

/// The output [2, 6, 8] with each product element one std::fma chain in k order.
std::vector<float> reference(const std::vector<float> &x) {
  auto at = [&](int64_t b, int64_t s, int64_t part, int64_t h, int64_t d) {
    return x[static_cast<size_t>((b * kS + s) * 3 * kW + part * kW + h * kD + d)];
  };
  std::vector<float> out(kB * kS * kW);
  for (int64_t b = 0; b < kB; ++b)
    for (int64_t h = 0; h < kH; ++h) {
      float scores[kS][kS];
      for (int64_t i = 0; i < kS; ++i)
        for (int64_t j = 0; j < kS; ++j) {
          float acc = 0.0f;
          for (int64_t d = 0; d < kD; ++d)
            acc = std::fma(at(b, i, 0, h, d), at(b, j, 1, h, d), acc);
          scores[i][j] = acc;
        }
      for (int64_t i = 0; i < kS; ++i)
        for (int64_t d = 0; d < kD; ++d) {
          float acc = 0.0f;
          for (int64_t j = 0; j < kS; ++j)
            acc = std::fma(scores[i][j], at(b, j, 2, h, d), acc);
          out[static_cast<size_t>((b * kS + i) * kW + h * kD + d)] = acc;
        }
    }
  return out;
}

size_t stepCount(const std::string &text) {
  auto module = ir::parseModule(text, "test.mlir");
  EXPECT_TRUE(module.isOk()) << module.status().toString();
  if (!module.isOk())
    return 0;
  Compiler compiler(*module, kernelRegistry());
  auto main = compiler.function("main");
  EXPECT_TRUE(main.isOk()) << main.status().toString();
  return main.isOk() ? (*main)->steps.size() : 0;
}

TEST(ViewFolding, AttentionHeadsGiveTheBitsOfFmaChains) {
  const std::vector<float> x = inputs(), want = reference(x);
  for (bool extra : {false, true})
    for (int threads : {1, 2, 4}) {
      auto out = runText(attentionModule(extra), {makeTensor<float>({kB, kS, 3 * kW}, x)}, threads);
      ASSERT_EQ(out.size(), extra ? 2u : 1u);
      const std::vector<float> got = valuesOf<float>(out[0]);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(bitsOf(got[i]), bitsOf(want[i]))
            << "element " << i << ", threads " << threads << ", extra " << extra;
      if (extra) { // k transposed: kt[b, h, d, s] = qkv[b, s, 8 + h * 4 + d]
        const std::vector<float> kt = valuesOf<float>(out[1]);
        for (int64_t b = 0; b < kB; ++b)
          for (int64_t h = 0; h < kH; ++h)
            for (int64_t d = 0; d < kD; ++d)
              for (int64_t s = 0; s < kS; ++s)
                ASSERT_EQ(kt[static_cast<size_t>(((b * kH + h) * kD + d) * kS + s)],
                          x[static_cast<size_t>((b * kS + s) * 3 * kW + kW + h * kD + d)]);
      }
    }
}

TEST(ViewFolding, CopiesLeaveThePlan) {
  // Unfolded: 3 slices, 3 reshapes, 4 transposes, 2 products, transpose, reshape (14).
  // Folded: the 2 products (the second writing the merged heads) and the final reshape.
  EXPECT_EQ(stepCount(attentionModule(false)), 3u);
  // k's chain is returned too, so it stays (slice, reshape, 2 transposes) and the first
  // product reads its end.
  EXPECT_EQ(stepCount(attentionModule(true)), 7u);
}

TEST(ViewFolding, ReshapeOfAView) {
  // [2, 3, 4] row-major, transposed to [4, 2, 3] (strides 1, 12, 4).
  StridedView v{{4, 2, 3}, {1, 12, 4}, 5};
  StridedView merged = v;
  ASSERT_TRUE(merged.reshape({4, 6})); // dims 2 x 3 are contiguous (12 = 4 * 3)
  EXPECT_EQ(merged.strides, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(merged.offset, 5);
  StridedView split = v;
  ASSERT_TRUE(split.reshape({2, 2, 1, 2, 3})); // 4 -> 2 x 2, a size-1 dim
  EXPECT_EQ(split.strides, (std::vector<int64_t>{2, 1, 0, 12, 4}));
  StridedView across = v;
  EXPECT_FALSE(across.reshape({8, 3})); // 4 x 2 do not merge: 1 != 12 * 2
  EXPECT_EQ(across.shape, v.shape);
}

} // namespace
} // namespace rs::cpu::testing
