//===- test/cpu/plan_limits_test.cc - Memory limits and op locations of plans ===//
//
// Program::compile() refuses a program whose single buffer, or whose entry function's
// buffers live at once, need more than the context's memory limit, or whose byte size
// overflows; run() turns a failed allocation (std::bad_alloc) into ResourceExhausted for
// that call. Nothing here allocates more than a few MiB: the limits are set small, and the
// failed allocation asks for more bytes than any address space has.
//
// Op locations in compile errors are ir::Location::toString(): file:line:col for text, the
// byte offset and the debug location's source position for a portable artifact.
//
//===----------------------------------------------------------------------===//
#include "cpu_test_util.h"

#include "support/file.h"

#include <filesystem>
#include <limits>

namespace rs::cpu::testing {
namespace {

std::shared_ptr<CpuContext> contextWithLimit(int64_t memory_limit_bytes) {
  CpuOptions options;
  options.num_threads = 1;
  options.memory_limit_bytes = memory_limit_bytes;
  Result<std::shared_ptr<CpuContext>> ctx = createCpuContext(options);
  EXPECT_TRUE(ctx.isOk()) << ctx.status().toString();
  return ctx.isOk() ? *ctx : nullptr;
}

Result<std::unique_ptr<Program>> compileWithLimit(const std::string &text,
                                                  int64_t memory_limit_bytes) {
  RS_ASSIGN_OR_RETURN(ir::Module m, ir::parseModule(text, "test.mlir"));
  return Program::compile(m, "main", contextWithLimit(memory_limit_bytes));
}

/// main(x: f32[4]) = x + sum(broadcast(1.0) to `shape`).
std::string sumOfOnes(const std::string &shape, const std::string &dims) {
  return R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %big = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<f32>) -> tensor<)" +
         shape + R"(xf32>
  %sum = stablehlo.reduce(%big init: %zero) applies stablehlo.add across dimensions = [)" +
         dims + R"(] : (tensor<)" + shape + R"(xf32>, tensor<f32>) -> tensor<f32>
  %b = stablehlo.broadcast_in_dim %sum, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %y = stablehlo.add %x, %b : tensor<4xf32>
  return %y : tensor<4xf32>
})";
}

/// Runs `p` on x = [1, 2, 3, 4].
Result<std::vector<Tensor>> runOn1234(const Program &p) {
  const std::vector<Tensor> args{makeTensor<float>({4}, {1, 2, 3, 4})};
  return p.run(args);
}

TEST(PlanLimits, BufferOverTheLimitIsRefusedAtCompile) {
  // 1024 x 1024 f32: 4 MiB, over a 1 MiB limit.
  Result<std::unique_ptr<Program>> p = compileWithLimit(sumOfOnes("1024x1024", "0, 1"), 1 << 20);
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(p.status().message(),
            "test.mlir:4:3: 'stablehlo.broadcast_in_dim' op type tensor<1024x1024xf32> needs "
            "4194304 bytes, more than the cpu executor's memory limit of 1048576 bytes (in "
            "function @main)");
  // The broadcast and the reduce's result live at once: 4194308 bytes. Under that limit it
  // compiles and runs.
  Result<std::unique_ptr<Program>> fits = compileWithLimit(sumOfOnes("1024x1024", "0, 1"), 4194308);
  ASSERT_TRUE(fits.isOk()) << fits.status().toString();
  Result<std::vector<Tensor>> out = runOn1234(**fits);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  EXPECT_EQ(valuesOf<float>((*out)[0]), (std::vector<float>{1048577, 1048578, 1048579, 1048580}));
}

TEST(PlanLimits, ByteSizeOverflowIsRefusedAtCompile) {
  // 2^32 x 2^32 x 4 f32: 2^66 bytes, no int64 holds that.
  Result<std::unique_ptr<Program>> p =
      compileWithLimit(sumOfOnes("4294967296x4294967296x4", "0, 1, 2"), 0);
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(p.status().message(),
            "test.mlir:4:3: 'stablehlo.broadcast_in_dim' op type "
            "tensor<4294967296x4294967296x4xf32> needs more than 9223372036854775807 bytes (in "
            "function @main)");
}

TEST(PlanLimits, BuffersLiveAtOnceOverTheLimitAreRefusedAtCompile) {
  // Two results of 640000 bytes each, both live at the end: 1280000 bytes at once.
  const std::string text = R"(func.func @main() -> (tensor<160000xf32>, tensor<160000xi32>) {
  %a = stablehlo.iota dim = 0 : tensor<160000xf32>
  %b = stablehlo.iota dim = 0 : tensor<160000xi32>
  return %a, %b : tensor<160000xf32>, tensor<160000xi32>
})";
  Result<std::unique_ptr<Program>> p = compileWithLimit(text, 1 << 20);
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(p.status().message(),
            "test.mlir: function @main holds 1280000 bytes of intermediate buffers at once, "
            "more than the cpu executor's memory limit of 1048576 bytes");
  EXPECT_TRUE(compileWithLimit(text, 1280000).isOk());
}

TEST(PlanLimits, FailedAllocationFailsTheCallNotTheProcess) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reports an allocation this large instead of throwing";
#endif
  // 2^24 x 2^24 x 256 f32: 2^58 bytes (and the reduce's 4), more than any address space; with
  // no memory limit the program compiles and the allocation fails when it runs.
  Result<std::unique_ptr<Program>> p = compileWithLimit(
      sumOfOnes("16777216x16777216x256", "0, 1, 2"), std::numeric_limits<int64_t>::max());
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  Result<std::vector<Tensor>> out = runOn1234(**p);
  ASSERT_FALSE(out.isOk());
  EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(out.status().message(),
            "test.mlir: function @main: out of memory while allocating its buffers (it plans "
            "288230376151711748 bytes of intermediate buffers at once)");
  // The program (and the process) still serve calls.
  Result<std::unique_ptr<Program>> small = compileText(sumOfOnes("2x3", "0, 1"), 1);
  ASSERT_TRUE(small.isOk()) << small.status().toString();
  Result<std::vector<Tensor>> ok = runOn1234(**small);
  ASSERT_TRUE(ok.isOk()) << ok.status().toString();
  EXPECT_EQ(valuesOf<float>((*ok)[0]), (std::vector<float>{7, 8, 9, 10}));
}

TEST(PlanLimits, DefaultLimitIsPositive) {
  EXPECT_GT(contextWithLimit(0)->memoryLimitBytes(), 0);
  CpuOptions negative;
  negative.memory_limit_bytes = -1;
  Result<std::shared_ptr<CpuContext>> ctx = createCpuContext(negative);
  ASSERT_FALSE(ctx.isOk());
  EXPECT_EQ(ctx.status().message(), "cpu options: memory_limit_bytes -1 is negative");
}

TEST(PlanLocations, PortableArtifactOpErrorGivesByteOffsetAndSource) {
  // jax.export of x + rng_uniform(0, 1, x.shape): stablehlo.rng has no cpu kernel.
  const std::string path =
      (std::filesystem::path(RS_SOURCE_DIR) / "test/cpu/data/unsupported_rng.mlirbc").string();
  Result<ir::Module> m = ir::parseModuleFile(path);
  ASSERT_TRUE(m.isOk()) << m.status().toString();
  Result<std::unique_ptr<Program>> p = Program::compile(*m, "main", contextWithThreads(1));
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(p.status().message(),
            path + ": byte 319 (/work/trial18b/repro/mine/export_unsup.py:9:24): "
                   "'stablehlo.rng' op is not supported by the cpu executor (in function @main)");
}

} // namespace
} // namespace rs::cpu::testing
