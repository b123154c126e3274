//===- test/cpu/control_flow_test.cc - Control flow, calls, errors ---------===//
//
// while (with values captured from the enclosing function), case (index out of range
// selects the last branch), if, func.call (shared callee, nested calls),
// optimization_barrier; compile errors: unsupported op (name and file:line:col),
// unsupported types, recursion, a missing entry; run errors: argument count, dtype and
// shape; the context (thread counts, floating-point environment).
//
//===----------------------------------------------------------------------===//
#include "cpu_test_util.h"

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace rs::cpu::testing {
namespace {

TEST(ControlFlow, WhileWithCapturedValues) {
  // sum = 0; for (i = 0; i < n; ++i) sum += step; with n and step defined outside the loop.
  const std::string text = R"(
func.func @main(%n: tensor<i64>, %step: tensor<i64>) -> (tensor<i64>, tensor<i64>) {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %r0, %r1 = stablehlo.while(%i = %zero, %sum = %zero) : tensor<i64>, tensor<i64>
  cond {
    %c = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %i1 = stablehlo.add %i, %one : tensor<i64>
    %s1 = stablehlo.add %sum, %step : tensor<i64>
    stablehlo.return %i1, %s1 : tensor<i64>, tensor<i64>
  }
  return %r0, %r1 : tensor<i64>, tensor<i64>
}
)";
  auto out = runText(text, {makeTensor<int64_t>({}, {10}), makeTensor<int64_t>({}, {3})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(valuesOf<int64_t>(out[0]), std::vector<int64_t>{10});
  EXPECT_EQ(valuesOf<int64_t>(out[1]), std::vector<int64_t>{30});
  out = runText(text, {makeTensor<int64_t>({}, {-1}), makeTensor<int64_t>({}, {3})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(valuesOf<int64_t>(out[1]), std::vector<int64_t>{0}); // body never runs
}

TEST(ControlFlow, CaseOutOfRangeTakesLastBranch) {
  const std::string text = R"(
func.func @main(%i: tensor<i32>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.case"(%i) ({
    %a = stablehlo.negate %x : tensor<2xf32>
    stablehlo.return %a : tensor<2xf32>
  }, {
    %b = stablehlo.add %x, %x : tensor<2xf32>
    stablehlo.return %b : tensor<2xf32>
  }, {
    stablehlo.return %x : tensor<2xf32>
  }) : (tensor<i32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
)";
  auto run = [&](int32_t i) {
    auto out = runText(text, {makeTensor<int32_t>({}, {i}), makeTensor<float>({2}, {1, -2})});
    return out.empty() ? std::vector<float>{} : valuesOf<float>(out[0]);
  };
  EXPECT_EQ(run(0), (std::vector<float>{-1, 2}));
  EXPECT_EQ(run(1), (std::vector<float>{2, -4}));
  EXPECT_EQ(run(2), (std::vector<float>{1, -2}));
  EXPECT_EQ(run(7), (std::vector<float>{1, -2}));
  EXPECT_EQ(run(-1), (std::vector<float>{1, -2}));
}

TEST(ControlFlow, If) {
  const std::string text = R"(
func.func @main(%p: tensor<i1>, %x: tensor<i32>) -> tensor<i32> {
  %0 = "stablehlo.if"(%p) ({
    %a = stablehlo.add %x, %x : tensor<i32>
    stablehlo.return %a : tensor<i32>
  }, {
    %b = stablehlo.negate %x : tensor<i32>
    stablehlo.return %b : tensor<i32>
  }) : (tensor<i1>) -> tensor<i32>
  return %0 : tensor<i32>
}
)";
  auto t = runText(text, {makeTensor<bool>({}, {true}), makeTensor<int32_t>({}, {5})});
  auto f = runText(text, {makeTensor<bool>({}, {false}), makeTensor<int32_t>({}, {5})});
  ASSERT_EQ(t.size(), 1u);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(valuesOf<int32_t>(t[0]), std::vector<int32_t>{10});
  EXPECT_EQ(valuesOf<int32_t>(f[0]), std::vector<int32_t>{-5});
}

TEST(ControlFlow, CallsAndBarrier) {
  const std::string text = R"(
func.func private @square(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.multiply %x, %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @fourth(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = call @square(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = call @square(%0) : (tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = call @fourth(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1:2 = stablehlo.optimization_barrier %0, %x : tensor<3xf32>, tensor<3xf32>
  return %1#0, %1#1 : tensor<3xf32>, tensor<3xf32>
}
)";
  auto out = runText(text, {makeTensor<float>({3}, {1, 2, -3})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(valuesOf<float>(out[0]), (std::vector<float>{1, 16, 81}));
  EXPECT_EQ(valuesOf<float>(out[1]), (std::vector<float>{1, 2, -3}));
}

TEST(ControlFlow, TuplesAreResolvedWhileCompiling) {
  const std::string text = R"(
func.func @main(%x: tensor<2xf32>, %y: tensor<i64>) -> (tensor<2xf32>, tensor<i64>) {
  %inner = stablehlo.tuple %y : tuple<tensor<i64>>
  %t = stablehlo.tuple %x, %inner : tuple<tensor<2xf32>, tuple<tensor<i64>>>
  %0 = stablehlo.get_tuple_element %t[0] : (tuple<tensor<2xf32>, tuple<tensor<i64>>>) -> tensor<2xf32>
  %1 = stablehlo.get_tuple_element %t[1] : (tuple<tensor<2xf32>, tuple<tensor<i64>>>) -> tuple<tensor<i64>>
  %2 = stablehlo.get_tuple_element %1[0] : (tuple<tensor<i64>>) -> tensor<i64>
  %3 = stablehlo.add %0, %0 : tensor<2xf32>
  return %3, %2 : tensor<2xf32>, tensor<i64>
}
)";
  auto out = runText(text, {makeTensor<float>({2}, {1, 2}), makeTensor<int64_t>({}, {7})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(valuesOf<float>(out[0]), (std::vector<float>{2, 4}));
  EXPECT_EQ(valuesOf<int64_t>(out[1]), (std::vector<int64_t>{7}));

  // A tuple returned from the function has no tensor slot.
  auto p = compileText(R"(
func.func @main(%x: tensor<2xf32>) -> tuple<tensor<2xf32>> {
  %t = stablehlo.tuple %x : tuple<tensor<2xf32>>
  return %t : tuple<tensor<2xf32>>
}
)");
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), StatusCode::kUnimplemented);
}

TEST(ControlFlow, CompositeCallsItsDecomposition) {
  const std::string text = R"(
func.func private @add_n.impl(%arg0: tensor<i64>) -> tensor<i64> {
  %0 = stablehlo.constant dense<2> : tensor<i64>
  %1 = stablehlo.add %arg0, %0 : tensor<i64>
  return %1 : tensor<i64>
}
func.func @main(%x: tensor<i64>) -> tensor<i64> {
  %0 = stablehlo.composite "stablehlo.add_n" %x {
    composite_attributes = { n = 2 : i64 },
    decomposition = @add_n.impl
  } : (tensor<i64>) -> tensor<i64>
  return %0 : tensor<i64>
}
)";
  auto out = runText(text, {makeTensor<int64_t>({}, {5})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<int64_t>(out[0]), (std::vector<int64_t>{7}));
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST(CompileErrors, UnsupportedOpNamesOpAndLocation) {
  const std::string text = "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                           "  %0 = stablehlo.add %x, %x : tensor<2xf32>\n"
                           "  %1 = stablehlo.custom_call @foo(%0) : (tensor<2xf32>) -> "
                           "tensor<2xf32>\n"
                           "  return %1 : tensor<2xf32>\n}\n";
  auto p = compileText(text);
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(p.status().message(),
            "test.mlir:3:3: 'stablehlo.custom_call' op is not supported by the cpu executor "
            "(in function @main)");
}

TEST(CompileErrors, UnsupportedOpInsideARegionOrCallee) {
  const std::string text = R"(func.func private @f(%x: tensor<f32>) -> tensor<f32> {
  %0 = "stablehlo.rng_bit_generator"(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %0 = call @f(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
)";
  auto p = compileText(text);
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(p.status().message(),
            "test.mlir:2:3: 'stablehlo.rng_bit_generator' op is not supported by the cpu "
            "executor (in function @f) (in function @main)");
}

TEST(CompileErrors, UnsupportedTypes) {
  auto p =
      compileText(opModule("stablehlo.and", {"tensor<2xf16>", "tensor<2xf16>"}, "tensor<2xf16>"));
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(p.status().message(),
            "test.mlir:2:3: 'stablehlo.and' op element type f16 is not supported by the cpu "
            "executor (in function @main)");
  p = compileText(
      opModule("stablehlo.floor", {"tensor<2xcomplex<f32>>"}, "tensor<2xcomplex<f32>>"));
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(p.status().message(),
            "test.mlir:2:3: 'stablehlo.floor' op element type complex<f32> is not supported by "
            "the cpu executor (in function @main)");
}

TEST(CompileErrors, RecursionAndMissingEntry) {
  const std::string text = R"(func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %0 = call @main(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
)";
  auto p = compileText(text);
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(p.status().message().find("function @main is called recursively"), std::string::npos)
      << p.status().message();
  auto missing = compileText(text, 2, "serve");
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);

  // A call of a function the module lacks names the call's line.
  auto no_callee = compileText(R"(func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %0 = call @absent(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
)");
  ASSERT_FALSE(no_callee.isOk());
  EXPECT_EQ(no_callee.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(no_callee.status().message(), "test.mlir:2:3: 'func.call' op calls @absent, which the "
                                          "module does not define (in function @main)");
}

TEST(RunErrors, ArgumentCountDtypeAndShape) {
  auto p =
      compileText(opModule("stablehlo.add", {"tensor<2xf32>", "tensor<2xf32>"}, "tensor<2xf32>"));
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  Tensor good = makeTensor<float>({2}, {1, 2});
  auto r = (*p)->run(std::vector<Tensor>{good});
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "cpu program @main: expected 2 arguments, got 1");
  r = (*p)->run(std::vector<Tensor>{good, makeTensor<int32_t>({2}, {1, 2})});
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(),
            "cpu program @main: argument 1 is tensor<2xi32>, expected tensor<2xf32>");
  r = (*p)->run(std::vector<Tensor>{makeTensor<float>({1, 2}, {1, 2}), good});
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(),
            "cpu program @main: argument 0 is tensor<1x2xf32>, expected tensor<2xf32>");
  EXPECT_EQ((*p)->inputTypes().size(), 2u);
  EXPECT_EQ((*p)->outputTypes()[0].toString(), "tensor<2xf32>");
}

TEST(Context, RejectsBadThreadCount) {
  EXPECT_FALSE(createCpuContext(CpuOptions{-1}).isOk());
  auto c = createCpuContext(CpuOptions{0});
  ASSERT_TRUE(c.isOk());
  EXPECT_GE((*c)->numThreads(), 1);
}

#if defined(__SSE__)
TEST(Context, RunsInTheDefaultFloatingPointEnvironment) {
  // A caller with flush-to-zero on still gets the IEEE (denormal) product, on 1 thread and
  // with a pool, and keeps its own mode afterwards.
  for (int threads : {1, 4}) {
    auto p = compileText(
        opModule("stablehlo.multiply", {"tensor<1xf32>", "tensor<1xf32>"}, "tensor<1xf32>"),
        threads);
    ASSERT_TRUE(p.isOk()) << p.status().toString();
    const unsigned saved = _MM_GET_FLUSH_ZERO_MODE();
    _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
    auto out = (*p)->run(
        std::vector<Tensor>{makeTensor<float>({1}, {1e-20f}), makeTensor<float>({1}, {1e-20f})});
    const unsigned after = _MM_GET_FLUSH_ZERO_MODE();
    _MM_SET_FLUSH_ZERO_MODE(saved);
    ASSERT_TRUE(out.isOk());
    EXPECT_NE(valuesOf<float>((*out)[0])[0], 0.0f);
    EXPECT_EQ(after, static_cast<unsigned>(_MM_FLUSH_ZERO_ON));
  }
}
#endif

} // namespace
} // namespace rs::cpu::testing
