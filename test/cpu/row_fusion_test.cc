//===- test/cpu/row_fusion_test.cc - Row-blocked reductions and their users -===//
//
// cpu/row_fusion.cc: softmax and layer norm written as BERT's JAX export writes them give the
// same bits as the same ops kept apart by optimization_barrier (no fusion of any kind), for
// 1, 2 and 4 threads, with several blocks of rows; the step counts show the runs fused.
//
//===----------------------------------------------------------------------===//
#include "cpu/compiler.h"
#include "cpu_test_util.h"

#include <gtest/gtest.h>

namespace rs::cpu::testing {
namespace {

/// One op of a test function: `text` names its operands as $name.
struct Line {
  std::string name, text, type;
};

/// The function @main(args) -> result of `lines`; with `barriers`, every value passes
/// through stablehlo.optimization_barrier before its uses (nothing fuses across it).
std::string module(const std::string &args, const std::vector<Line> &lines,
                   const std::string &result, bool barriers) {
  auto use = [&](std::string text) {
    for (size_t at; (at = text.find('$')) != std::string::npos;) {
      size_t end = at + 1;
      while (end < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_'))
        ++end;
      const std::string name = text.substr(at + 1, end - at - 1);
      text.replace(at, end - at, "%" + name + (barriers && name.rfind("arg", 0) ? "_b" : ""));
    }
    return text;
  };
  std::string out = "func.func @main(" + args + ") -> " + lines.back().type + " {\n";
  for (const Line &l : lines) {
    out += "  %" + l.name + " = " + use(l.text) + "\n";
    if (barriers)
      out +=
          "  %" + l.name + "_b = stablehlo.optimization_barrier %" + l.name + " : " + l.type + "\n";
  }
  return out + "  return " + use("$" + result) + " : " + lines.back().type + "\n}\n";
}

size_t stepCount(const std::string &text) {
  auto m = ir::parseModule(text, "test.mlir");
  EXPECT_TRUE(m.isOk()) << m.status().toString();
  if (!m.isOk())
    return 0;
  Compiler compiler(*m, kernelRegistry());
  auto main = compiler.function("main");
  EXPECT_TRUE(main.isOk()) << main.status().toString();
  return main.isOk() ? (*main)->steps.size() : 0;
}

void expectSameBits(const std::string &fused, const std::string &apart,
                    const std::vector<Tensor> &args) {
  const auto want = runText(apart, args, 1);
  ASSERT_EQ(want.size(), 1u);
  const std::vector<float> w = valuesOf<float>(want[0]);
  for (int threads : {1, 2, 4}) {
    const auto got = runText(fused, args, threads);
    ASSERT_EQ(got.size(), 1u);
    const std::vector<float> g = valuesOf<float>(got[0]);
    ASSERT_EQ(g.size(), w.size());
    for (size_t i = 0; i < g.size(); ++i)
      ASSERT_EQ(bitsOf(g[i]), bitsOf(w[i])) << "element " << i << ", threads " << threads;
  }
}

std::vector<float> values(size_t n, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(
               static_cast<int64_t>((i * 7919 + static_cast<size_t>(seed) * 131) % 2001) - 1000) /
           97.0f;
  return v;
}

// Softmax over the last dim of [4, 3, 60, 40]: 720 rows, several blocks.
const std::vector<Line> kSoftmax = {
    {"ninf", "stablehlo.constant dense<0xFF800000> : tensor<f32>", "tensor<f32>"},
    {"max",
     "stablehlo.reduce($arg0 init: $ninf) applies stablehlo.maximum across dimensions = [3] : "
     "(tensor<4x3x60x40xf32>, tensor<f32>) -> tensor<4x3x60xf32>",
     "tensor<4x3x60xf32>"},
    {"ninfb", "stablehlo.broadcast_in_dim $ninf, dims = [] : (tensor<f32>) -> tensor<4x3x60xf32>",
     "tensor<4x3x60xf32>"},
    {"m", "stablehlo.maximum $ninfb, $max : tensor<4x3x60xf32>", "tensor<4x3x60xf32>"},
    {"m1",
     "stablehlo.broadcast_in_dim $m, dims = [0, 1, 2] : (tensor<4x3x60xf32>) -> "
     "tensor<4x3x60x1xf32>",
     "tensor<4x3x60x1xf32>"},
    {"mb",
     "stablehlo.broadcast_in_dim $m1, dims = [0, 1, 2, 3] : (tensor<4x3x60x1xf32>) -> "
     "tensor<4x3x60x40xf32>",
     "tensor<4x3x60x40xf32>"},
    {"d", "stablehlo.subtract $arg0, $mb : tensor<4x3x60x40xf32>", "tensor<4x3x60x40xf32>"},
    {"e", "stablehlo.exponential $d : tensor<4x3x60x40xf32>", "tensor<4x3x60x40xf32>"},
    {"zero", "stablehlo.constant dense<0.000000e+00> : tensor<f32>", "tensor<f32>"},
    {"s",
     "stablehlo.reduce($e init: $zero) applies stablehlo.add across dimensions = [3] : "
     "(tensor<4x3x60x40xf32>, tensor<f32>) -> tensor<4x3x60xf32>",
     "tensor<4x3x60xf32>"},
    {"s1",
     "stablehlo.broadcast_in_dim $s, dims = [0, 1, 2] : (tensor<4x3x60xf32>) -> "
     "tensor<4x3x60x1xf32>",
     "tensor<4x3x60x1xf32>"},
    {"sb",
     "stablehlo.broadcast_in_dim $s1, dims = [0, 1, 2, 3] : (tensor<4x3x60x1xf32>) -> "
     "tensor<4x3x60x40xf32>",
     "tensor<4x3x60x40xf32>"},
    {"p", "stablehlo.divide $e, $sb : tensor<4x3x60x40xf32>", "tensor<4x3x60x40xf32>"},
};

TEST(RowFusion, SoftmaxGivesTheBitsOfSeparateOps) {
  const std::string args = "%arg0: tensor<4x3x60x40xf32>";
  expectSameBits(module(args, kSoftmax, "p", false), module(args, kSoftmax, "p", true),
                 {makeTensor<float>({4, 3, 60, 40}, values(4 * 3 * 60 * 40, 1))});
  // Two constants, then one step for the reduces, subtract, exponential and divide.
  EXPECT_EQ(stepCount(module(args, kSoftmax, "p", false)), 3u);
}

// Layer norm over the last dim of [6, 50, 96] with scale and shift vectors (300 rows).
const std::vector<Line> kLayerNorm = {
    {"zero", "stablehlo.constant dense<0.000000e+00> : tensor<f32>", "tensor<f32>"},
    {"sum",
     "stablehlo.reduce($arg0 init: $zero) applies stablehlo.add across dimensions = [2] : "
     "(tensor<6x50x96xf32>, tensor<f32>) -> tensor<6x50xf32>",
     "tensor<6x50xf32>"},
    {"sum1",
     "stablehlo.broadcast_in_dim $sum, dims = [0, 1] : (tensor<6x50xf32>) -> tensor<6x50x1xf32>",
     "tensor<6x50x1xf32>"},
    {"n", "stablehlo.constant dense<9.600000e+01> : tensor<f32>", "tensor<f32>"},
    {"nb", "stablehlo.broadcast_in_dim $n, dims = [] : (tensor<f32>) -> tensor<6x50x1xf32>",
     "tensor<6x50x1xf32>"},
    {"mean", "stablehlo.divide $sum1, $nb : tensor<6x50x1xf32>", "tensor<6x50x1xf32>"},
    {"meanb",
     "stablehlo.broadcast_in_dim $mean, dims = [0, 1, 2] : (tensor<6x50x1xf32>) -> "
     "tensor<6x50x96xf32>",
     "tensor<6x50x96xf32>"},
    {"c", "stablehlo.subtract $arg0, $meanb : tensor<6x50x96xf32>", "tensor<6x50x96xf32>"},
    {"sq", "stablehlo.multiply $c, $c : tensor<6x50x96xf32>", "tensor<6x50x96xf32>"},
    {"var0",
     "stablehlo.reduce($sq init: $zero) applies stablehlo.add across dimensions = [2] : "
     "(tensor<6x50x96xf32>, tensor<f32>) -> tensor<6x50xf32>",
     "tensor<6x50xf32>"},
    {"var1",
     "stablehlo.broadcast_in_dim $var0, dims = [0, 1] : (tensor<6x50xf32>) -> tensor<6x50x1xf32>",
     "tensor<6x50x1xf32>"},
    {"var", "stablehlo.divide $var1, $nb : tensor<6x50x1xf32>", "tensor<6x50x1xf32>"},
    {"eps", "stablehlo.constant dense<9.99999974E-6> : tensor<f32>", "tensor<f32>"},
    {"epsb", "stablehlo.broadcast_in_dim $eps, dims = [] : (tensor<f32>) -> tensor<6x50x1xf32>",
     "tensor<6x50x1xf32>"},
    {"ve", "stablehlo.add $var, $epsb : tensor<6x50x1xf32>", "tensor<6x50x1xf32>"},
    {"r", "stablehlo.rsqrt $ve : tensor<6x50x1xf32>", "tensor<6x50x1xf32>"},
    {"rb",
     "stablehlo.broadcast_in_dim $r, dims = [0, 1, 2] : (tensor<6x50x1xf32>) -> "
     "tensor<6x50x96xf32>",
     "tensor<6x50x96xf32>"},
    {"y", "stablehlo.multiply $c, $rb : tensor<6x50x96xf32>", "tensor<6x50x96xf32>"},
    {"g1", "stablehlo.broadcast_in_dim $arg1, dims = [2] : (tensor<96xf32>) -> tensor<1x1x96xf32>",
     "tensor<1x1x96xf32>"},
    {"gb",
     "stablehlo.broadcast_in_dim $g1, dims = [0, 1, 2] : (tensor<1x1x96xf32>) -> "
     "tensor<6x50x96xf32>",
     "tensor<6x50x96xf32>"},
    {"yg", "stablehlo.multiply $y, $gb : tensor<6x50x96xf32>", "tensor<6x50x96xf32>"},
    {"b1", "stablehlo.broadcast_in_dim $arg2, dims = [2] : (tensor<96xf32>) -> tensor<1x1x96xf32>",
     "tensor<1x1x96xf32>"},
    {"bb",
     "stablehlo.broadcast_in_dim $b1, dims = [0, 1, 2] : (tensor<1x1x96xf32>) -> "
     "tensor<6x50x96xf32>",
     "tensor<6x50x96xf32>"},
    {"out", "stablehlo.add $yg, $bb : tensor<6x50x96xf32>", "tensor<6x50x96xf32>"},
};

TEST(RowFusion, LayerNormGivesTheBitsOfSeparateOps) {
  const std::string args =
      "%arg0: tensor<6x50x96xf32>, %arg1: tensor<96xf32>, %arg2: tensor<96xf32>";
  expectSameBits(module(args, kLayerNorm, "out", false), module(args, kLayerNorm, "out", true),
                 {makeTensor<float>({6, 50, 96}, values(6 * 50 * 96, 2)),
                  makeTensor<float>({96}, values(96, 3)), makeTensor<float>({96}, values(96, 4))});
  // Three constants and the two vector reshapes move ahead of one step for the rest.
  EXPECT_EQ(stepCount(module(args, kLayerNorm, "out", false)), 6u);
}

} // namespace
} // namespace rs::cpu::testing
