//===- test/cpu/fusion_test.cc - Loop fusion of elementwise steps ----------===//
//
// cpu/fusion.cc: a fused chain gives the same bits as its ops run one program each, its
// values read by later steps or returned stay visible, constants between the ops move ahead,
// and the step count shows that the chain was fused.
//
//===----------------------------------------------------------------------===//
#include "cpu/compiler.h"
#include "cpu_test_util.h"

#include <gtest/gtest.h>

namespace rs::cpu::testing {
namespace {

// 8 x 1111 = 8888 elements: three parallel tiles of the fused step, and tiles of the
// scratch loop with a remainder.
const char *kChain = R"(
func.func @main(%x: tensor<8x1111xf32>, %b: tensor<1111xf32>) -> (tensor<8x1111xf32>, tensor<8x1111xf32>, tensor<8xf32>) {
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<1111xf32>) -> tensor<8x1111xf32>
  %0 = stablehlo.add %x, %bb : tensor<8x1111xf32>
  %c = stablehlo.constant dense<5.000000e-01> : tensor<f32>
  %cb = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<8x1111xf32>
  %1 = stablehlo.multiply %0, %cb : tensor<8x1111xf32>
  %2 = stablehlo.negate %0 : tensor<8x1111xf32>
  %3 = stablehlo.exponential %2 : tensor<8x1111xf32>
  %4 = stablehlo.multiply %1, %3 : tensor<8x1111xf32>
  %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %5 = stablehlo.reduce(%4 init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x1111xf32>, tensor<f32>) -> tensor<8xf32>
  %6 = stablehlo.exponential %4 : tensor<8x1111xf32>
  %7 = stablehlo.subtract %6, %0 : tensor<8x1111xf32>
  return %4, %7, %5 : tensor<8x1111xf32>, tensor<8x1111xf32>, tensor<8xf32>
}
)";

constexpr int64_t kRows = 8, kCols = 1111, kN = kRows * kCols;

std::vector<float> flat(const Tensor &t) { return valuesOf<float>(t); }

/// The chain one op per program (nothing to fuse), on rank-1 tensors of kN elements.
struct Reference {
  std::vector<float> v4, v7, v5;
};
Reference runOneOpAtATime(const std::vector<float> &x, const std::vector<float> &b) {
  const std::string t = "tensor<" + std::to_string(kN) + "xf32>";
  std::vector<float> bb(kN), half(kN, 0.5f);
  for (int64_t i = 0; i < kN; ++i)
    bb[static_cast<size_t>(i)] = b[static_cast<size_t>(i % kCols)];
  Reference r;
  const auto v0 = binary<float>("stablehlo.add", t, x, bb);
  const auto v1 = binary<float>("stablehlo.multiply", t, v0, half);
  const auto v2 = unary<float>("stablehlo.negate", t, t, v0);
  const auto v3 = unary<float>("stablehlo.exponential", t, t, v2);
  r.v4 = binary<float>("stablehlo.multiply", t, v1, v3);
  const auto v6 = unary<float>("stablehlo.exponential", t, t, r.v4);
  r.v7 = binary<float>("stablehlo.subtract", t, v6, v0);
  const std::string reduce = R"(
func.func @main(%a: tensor<8x1111xf32>) -> tensor<8xf32> {
  %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x1111xf32>, tensor<f32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
)";
  auto out = runText(reduce, {makeTensor<float>({kRows, kCols}, r.v4)});
  if (!out.empty())
    r.v5 = flat(out[0]);
  return r;
}

void expectSameBits(const std::vector<float> &got, const std::vector<float> &want,
                    const char *what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(bitsOf(got[i]), bitsOf(want[i])) << what << " element " << i;
}

TEST(Fusion, ChainGivesTheBitsOfOneOpAtATime) {
  std::vector<float> x(kN), b(kCols);
  for (int64_t i = 0; i < kN; ++i)
    x[static_cast<size_t>(i)] = static_cast<float>((i * 7919) % 2001 - 1000) / 300.0f;
  for (int64_t j = 0; j < kCols; ++j)
    b[static_cast<size_t>(j)] = static_cast<float>(j % 13) / 7.0f - 0.9f;
  const Reference want = runOneOpAtATime(x, b);
  ASSERT_FALSE(want.v5.empty());
  for (int threads : {1, 3}) {
    auto out = runText(
        kChain, {makeTensor<float>({kRows, kCols}, x), makeTensor<float>({kCols}, b)}, threads);
    ASSERT_EQ(out.size(), 3u);
    expectSameBits(flat(out[0]), want.v4, "%4 (returned and read by the reduce)");
    expectSameBits(flat(out[1]), want.v7, "%7 (second chain, reads %0 of the first)");
    expectSameBits(flat(out[2]), want.v5, "%5 (reduce of a fused value)");
  }
}

TEST(Fusion, ChainBecomesOneStepPerRun) {
  auto module = ir::parseModule(kChain, "test.mlir");
  ASSERT_TRUE(module.isOk()) << module.status().toString();
  Compiler compiler(*module, kernelRegistry());
  auto main = compiler.function("main");
  ASSERT_TRUE(main.isOk()) << main.status().toString();
  // Unfused: add, constant, multiply, negate, exponential, multiply, constant, reduce,
  // exponential, subtract (the broadcasts fold into their users). Fused: the two constants
  // first, then [add .. multiply], and the reduce with [exponential, subtract] row by row
  // (cpu/row_fusion.h).
  EXPECT_EQ((*main)->steps.size(), 4u);
}

/// Operands of the dot_general tests: a [16, 64], w [64, 300], bias b [300]; the product
/// alone (one program), and the bias broadcast to the product's 4800 elements.
struct DotOperands {
  std::vector<float> a = std::vector<float>(16 * 64), w = std::vector<float>(64 * 300),
                     b = std::vector<float>(300);
  explicit DotOperands(int seed) {
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = static_cast<float>(static_cast<int>(i * (29 + seed) % 97) - 48) / 13.0f;
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = static_cast<float>(static_cast<int>(i * (53 + seed) % 89) - 44) / 23.0f;
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = static_cast<float>(i % 7) - 3.5f;
  }
  std::vector<Tensor> args() const {
    return {makeTensor<float>({16, 64}, a), makeTensor<float>({64, 300}, w),
            makeTensor<float>({300}, b)};
  }
  std::vector<float> product() const {
    const char *dot = R"(
func.func @main(%a: tensor<16x64xf32>, %w: tensor<64x300xf32>) -> tensor<16x300xf32> {
  %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x300xf32>) -> tensor<16x300xf32>
  return %0 : tensor<16x300xf32>
}
)";
    auto out = runText(dot, {makeTensor<float>({16, 64}, a), makeTensor<float>({64, 300}, w)});
    return out.size() == 1 ? flat(out[0]) : std::vector<float>{};
  }
  std::vector<float> broadcastBias() const {
    std::vector<float> bb(4800);
    for (size_t i = 0; i < bb.size(); ++i)
      bb[i] = b[i % 300];
    return bb;
  }
};

const std::string kFlat = "tensor<4800xf32>";

// dot_general [16, 64] x [64, 300] -> bias add -> scale -> negate, the chain as the
// product's epilogue (run on each output tile as soon as it is written).
const char *kDotChain = R"(
func.func @main(%a: tensor<16x64xf32>, %w: tensor<64x300xf32>, %b: tensor<300xf32>) -> (tensor<16x300xf32>, tensor<16x300xf32>) {
  %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x300xf32>) -> tensor<16x300xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<300xf32>) -> tensor<16x300xf32>
  %1 = stablehlo.add %0, %bb : tensor<16x300xf32>
  %c = stablehlo.constant dense<1.250000e-01> : tensor<f32>
  %cb = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<16x300xf32>
  %2 = stablehlo.multiply %1, %cb : tensor<16x300xf32>
  %3 = stablehlo.negate %2 : tensor<16x300xf32>
  return %3, %1 : tensor<16x300xf32>, tensor<16x300xf32>
}
)";

TEST(Fusion, ElementwiseChainRunsAsTheProductsEpilogue) {
  auto module = ir::parseModule(kDotChain, "test.mlir");
  ASSERT_TRUE(module.isOk()) << module.status().toString();
  Compiler compiler(*module, kernelRegistry());
  auto main = compiler.function("main");
  ASSERT_TRUE(main.isOk()) << main.status().toString();
  // Unfused: dot_general, add, constant, multiply, negate. Fused: the constant, then the
  // product with [add, multiply, negate] as its epilogue.
  EXPECT_EQ((*main)->steps.size(), 2u);

  const DotOperands ops(0);
  const auto v0 = ops.product();
  ASSERT_FALSE(v0.empty());
  const auto v1 = binary<float>("stablehlo.add", kFlat, v0, ops.broadcastBias());
  const auto v2 = binary<float>("stablehlo.multiply", kFlat, v1, std::vector<float>(4800, 0.125f));
  const auto v3 = unary<float>("stablehlo.negate", kFlat, kFlat, v2);
  for (int threads : {1, 3}) {
    auto out = runText(kDotChain, ops.args(), threads);
    ASSERT_EQ(out.size(), 2u);
    expectSameBits(flat(out[0]), v3, "%3 (end of the epilogue)");
    expectSameBits(flat(out[1]), v1, "%1 (returned from inside the epilogue)");
  }
}

TEST(Fusion, EpilogueComputesInPlaceOnlyAfterTheLastReadOfTheProduct) {
  // %0 is read by %1 and %2: the product may share a buffer only with %3 (defined after the
  // last read of %0), never with %1, which is returned too.
  const char *text = R"(
func.func @main(%a: tensor<16x64xf32>, %w: tensor<64x300xf32>, %b: tensor<300xf32>) -> (tensor<16x300xf32>, tensor<16x300xf32>) {
  %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x300xf32>) -> tensor<16x300xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<300xf32>) -> tensor<16x300xf32>
  %1 = stablehlo.add %0, %bb : tensor<16x300xf32>
  %2 = stablehlo.multiply %1, %0 : tensor<16x300xf32>
  %3 = stablehlo.negate %2 : tensor<16x300xf32>
  return %3, %1 : tensor<16x300xf32>, tensor<16x300xf32>
}
)";
  const DotOperands ops(7);
  const auto v0 = ops.product();
  ASSERT_FALSE(v0.empty());
  const auto v1 = binary<float>("stablehlo.add", kFlat, v0, ops.broadcastBias());
  const auto v2 = binary<float>("stablehlo.multiply", kFlat, v1, v0);
  const auto v3 = unary<float>("stablehlo.negate", kFlat, kFlat, v2);
  auto out = runText(text, ops.args());
  ASSERT_EQ(out.size(), 2u);
  expectSameBits(flat(out[0]), v3, "%3");
  expectSameBits(flat(out[1]), v1, "%1");
}

TEST(Fusion, SmallTensorsStayUnfused) {
  // Below kMinFusedElements a pass is cheaper than the fused loop's bookkeeping.
  const char *small = R"(
func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = stablehlo.negate %x : tensor<16xf32>
  %1 = stablehlo.exponential %0 : tensor<16xf32>
  return %1 : tensor<16xf32>
}
)";
  auto module = ir::parseModule(small, "test.mlir");
  ASSERT_TRUE(module.isOk()) << module.status().toString();
  Compiler compiler(*module, kernelRegistry());
  auto main = compiler.function("main");
  ASSERT_TRUE(main.isOk()) << main.status().toString();
  EXPECT_EQ((*main)->steps.size(), 2u);
}

TEST(Fusion, TwoGroupBroadcastsFoldIntoTheChain) {
  // An attention mask [2, 1, 1, 50] over [2, 3, 40, 50] (contiguous runs of the mask row)
  // and m [2, 40] over dims 0 and 2 (one mask element per run of 50). 12000 elements: three
  // parallel tiles whose boundaries fall inside rows. Integer-valued floats: exact sums.
  const char *text = R"(
func.func @main(%x: tensor<2x3x40x50xf32>, %mask: tensor<2x1x1x50xf32>, %m: tensor<2x40xf32>) -> tensor<2x3x40x50xf32> {
  %mb = stablehlo.broadcast_in_dim %mask, dims = [0, 1, 2, 3] : (tensor<2x1x1x50xf32>) -> tensor<2x3x40x50xf32>
  %0 = stablehlo.add %x, %mb : tensor<2x3x40x50xf32>
  %b = stablehlo.broadcast_in_dim %m, dims = [0, 2] : (tensor<2x40xf32>) -> tensor<2x3x40x50xf32>
  %1 = stablehlo.multiply %b, %0 : tensor<2x3x40x50xf32>
  return %1 : tensor<2x3x40x50xf32>
}
)";
  constexpr int64_t kA = 2, kH = 3, kS = 40, kT = 50, kAll = kA * kH * kS * kT;
  std::vector<float> x(kAll), mask(kA * kT), m(kA * kS), want(kAll);
  for (int64_t i = 0; i < kAll; ++i)
    x[static_cast<size_t>(i)] = static_cast<float>(i % 97 - 48);
  for (size_t i = 0; i < mask.size(); ++i)
    mask[i] = static_cast<float>(static_cast<int64_t>(i % 7) - 3);
  for (size_t i = 0; i < m.size(); ++i)
    m[i] = static_cast<float>(static_cast<int64_t>(i % 5) - 2);
  for (int64_t a = 0; a < kA; ++a)
    for (int64_t h = 0; h < kH; ++h)
      for (int64_t s = 0; s < kS; ++s)
        for (int64_t t = 0; t < kT; ++t) {
          const size_t i = static_cast<size_t>(((a * kH + h) * kS + s) * kT + t);
          want[i] =
              m[static_cast<size_t>(a * kS + s)] * (x[i] + mask[static_cast<size_t>(a * kT + t)]);
        }
  for (int threads : {1, 2, 4}) {
    auto out = runText(text,
                       {makeTensor<float>({kA, kH, kS, kT}, x),
                        makeTensor<float>({kA, 1, 1, kT}, mask), makeTensor<float>({kA, kS}, m)},
                       threads);
    ASSERT_EQ(out.size(), 1u);
    expectSameBits(flat(out[0]), want, "%1");
  }
  auto module = ir::parseModule(text, "test.mlir");
  ASSERT_TRUE(module.isOk()) << module.status().toString();
  Compiler compiler(*module, kernelRegistry());
  auto main = compiler.function("main");
  ASSERT_TRUE(main.isOk()) << main.status().toString();
  EXPECT_EQ((*main)->steps.size(), 1u); // both broadcasts folded, add and multiply fused
}

} // namespace
} // namespace rs::cpu::testing
