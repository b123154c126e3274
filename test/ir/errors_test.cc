//===- test/ir/errors_test.cc - diagnostics, hostile input, files, speed ---===//
#include "common/files.h"
#include "ir/parser.h"
#include "ir/printer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>

namespace rs::ir {
namespace {

namespace fs = std::filesystem;

std::string errorOf(std::string_view text) {
  Result<Module> m = parseModule(text, "e.mlir");
  if (m.isOk())
    return "ok";
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  return m.status().message();
}

using rs::testing::readFile;

/// Body of `func.func @f(%a: tensor<f32>) { <body> }`; errors on line 2 and later.
std::string inFunc(std::string_view body) {
  return "func.func @f(%a: tensor<f32>) -> tensor<f32> {\n" + std::string(body) + "\n}\n";
}

TEST(Errors, SyntaxErrorsNameTheTokenAndPosition) {
  EXPECT_EQ(errorOf("func.func @f(%a: tensor<2xf32) -> tensor<2xf32> {\n}\n"),
            "e.mlir:1:30: error: expected '>', got ')'");
  EXPECT_EQ(errorOf(inFunc("  %0 = stablehlo.add %a, %9 : tensor<f32>")),
            "e.mlir:2:26: error: use of undefined value '%9'");
  EXPECT_EQ(errorOf(inFunc("  %0 = stablehlo.abs %a : tensor<2xfloat>")),
            "e.mlir:2:36: error: expected type, got 'float'");
  EXPECT_EQ(errorOf(inFunc("  %0 = 42")), "e.mlir:2:8: error: expected operation, got '42'");
  EXPECT_EQ(errorOf("func.func @f(%a: tensor<f32>) -> tensor<f32> {\n  return %a : tensor<f32>\n"),
            "e.mlir:3:1: error: expected '}', got '<eof>'");
  EXPECT_EQ(errorOf(inFunc("  %0 = foo %a : tensor<f32>")),
            "e.mlir:2:3: error: unknown operation 'foo'");
  EXPECT_EQ(errorOf(inFunc("  %0 = stablehlo.constant dense<1.0> tensor<f32>")),
            "e.mlir:2:38: error: expected ':', got 'tensor'");
  EXPECT_EQ(errorOf("func.func @f() attributes {k = [1, 2} {\n}\n"),
            "e.mlir:1:37: error: expected ']', got '}'");
  EXPECT_EQ(errorOf("\"builtin.module\"() ({\n}) : () -> ()\nfunc.func @g() {\n}\n"),
            "e.mlir:3:1: error: expected one module per input");
}

TEST(Errors, StructuralErrors) {
  EXPECT_EQ(errorOf(inFunc("  %0:2 = stablehlo.add %a, %a : tensor<f32>")),
            "e.mlir:2:3: error: 'stablehlo.add' binds 2 results but its type lists 1");
  EXPECT_EQ(errorOf(inFunc("  %0 = \"stablehlo.add\"(%a, %a) : (tensor<f32>, tensor<f32>) -> "
                           "(tensor<f32>, tensor<f32>)")),
            "e.mlir:2:3: error: 'stablehlo.add' has 2 result types but 1 results are bound");
  EXPECT_EQ(errorOf(inFunc("  %0 = \"stablehlo.abs\"(%a) : (tensor<i32>) -> tensor<i32>")),
            "e.mlir:2:30: error: operand #0 of 'stablehlo.abs' has type tensor<f32>, but the op "
            "says tensor<i32>");
  EXPECT_EQ(errorOf(inFunc("  %0 = stablehlo.abs %a : tensor<f32>\n"
                           "  %0 = stablehlo.abs %a : tensor<f32>")),
            "e.mlir:3:3: error: redefinition of SSA value '%0'");
  // A value defined inside a region is not visible after it.
  EXPECT_EQ(errorOf(inFunc("  %c = stablehlo.constant dense<0> : tensor<i32>\n"
                           "  %0 = \"stablehlo.case\"(%c) ({\n"
                           "    %1 = stablehlo.abs %a : tensor<f32>\n"
                           "    stablehlo.return %1 : tensor<f32>\n"
                           "  }) : (tensor<i32>) -> tensor<f32>\n"
                           "  return %1 : tensor<f32>")),
            "e.mlir:7:10: error: use of undefined value '%1'");
  // Functions are isolated from each other.
  EXPECT_EQ(errorOf("func.func @f(%x: tensor<f32>) {\n  return\n}\n"
                    "func.func @g() -> tensor<f32> {\n  return %x : tensor<f32>\n}\n"),
            "e.mlir:5:10: error: use of undefined value '%x'");
  EXPECT_EQ(errorOf(inFunc("  %0 = stablehlo.abs %a : tensor<f32>\n  return %0#1 : tensor<f32>")),
            "e.mlir:3:10: error: result number 1 out of range for a group of 1 values");
  EXPECT_EQ(errorOf("\"func.func\"() <{sym_name = \"f\"}> ({\n}) : () -> ()\n"),
            "e.mlir:1:1: error: 'func.func' needs a function_type");
  EXPECT_EQ(errorOf("\"func.func\"() <{function_type = (tensor<f32>) -> (), sym_name = \"f\"}> "
                    "({\n^bb0(%x: tensor<i32>):\n  \"func.return\"() : () -> ()\n}) : () -> ()\n"),
            "e.mlir:1:1: error: arguments of function 'f' do not match its function_type");
  EXPECT_EQ(errorOf("func.func @f() attributes {a = 1, a = 2} {\n  return\n}\n"),
            "e.mlir:1:1: error: duplicate attribute 'a' on 'func.func'");
}

TEST(Errors, DeepNestingIsRejectedNotOverflowed) {
  std::string deep = "func.func @f() attributes {k = " + std::string(5000, '[') +
                     std::string(5000, ']') + "} {\n  return\n}\n";
  EXPECT_NE(errorOf(deep).find("nesting deeper than 256 levels"), std::string::npos);
  std::string types = "func.func @f(%a: " + std::string(5000, '(') + ") {\n}\n";
  EXPECT_NE(errorOf(types).find("nesting deeper than"), std::string::npos);
  std::string dense = inFunc("  %0 = stablehlo.constant dense<" + std::string(5000, '[') + "1" +
                             std::string(5000, ']') + "> : tensor<f32>");
  EXPECT_NE(errorOf(dense).find("nested too deeply"), std::string::npos);
}

/// Parsing must never crash; when it succeeds the module must print and parse back.
void expectSafe(std::string_view text, const char *what) {
  Result<Module> m = parseModule(text, "fuzz.mlir");
  if (!m.isOk()) {
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument) << what;
    EXPECT_EQ(m.status().message().rfind("fuzz.mlir:", 0), 0u) << m.status().message();
    return;
  }
  std::string printed = printGeneric(*m);
  Result<Module> again = parseModule(printed, "printed");
  ASSERT_TRUE(again.isOk()) << what << ": " << again.status().toString() << "\n" << printed;
  EXPECT_TRUE(*again == *m) << what;
}

TEST(Errors, TruncatedInputNeverCrashes) {
  fs::path bundles = fs::path(RS_SHARED_DIR) / "fixtures" / "bundles";
  for (const char *name :
       {"iris_mlp/model.b1.mlir", "op_zoo/model.b1.mlir", "op_zoo/generic/model.b1.mlir",
        "tf32_algo/portable/model.b1.export.mlir"}) {
    std::string text = readFile(bundles / name);
    ASSERT_FALSE(text.empty()) << name;
    size_t step = text.size() > 4000 ? 3 : 1;
    for (size_t n = 0; n < text.size(); n += step)
      expectSafe(std::string_view(text).substr(0, n), name);
  }
}

TEST(Errors, ByteFlipsNeverCrash) {
  fs::path bundles = fs::path(RS_SHARED_DIR) / "fixtures" / "bundles";
  std::mt19937 rng(12345);
  const std::string special = "%#@^!<>()[]{},:=-\"x0123456789.?* \n";
  for (const char *name :
       {"op_zoo/model.b1.mlir", "op_zoo/generic/model.b1.mlir", "digits_cnn/model.b1.mlir"}) {
    std::string base = readFile(bundles / name);
    ASSERT_FALSE(base.empty()) << name;
    for (int round = 0; round < 700; ++round) {
      std::string text = base;
      int flips = 1 + static_cast<int>(rng() % 3);
      for (int i = 0; i < flips; ++i) {
        size_t pos = rng() % text.size();
        text[pos] = (rng() % 2) ? special[rng() % special.size()] : static_cast<char>(rng() % 256);
      }
      expectSafe(text, name);
    }
  }
}

TEST(Files, BytecodeIsReadWhateverTheExtensionAndABrokenOneIsRefusedByName) {
  fs::path dir = fs::temp_directory_path() / ("rs_ir_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path bc = dir / "model.mlir";
  {
    std::ofstream out(bc, std::ios::binary);
    out << "ML\xefR\x06StableHLO_v1.9.0";
  }
  Result<Module> m = parseModuleFile(bc.string());
  ASSERT_FALSE(m.isOk());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(m.status().message(),
            bc.string() + ": invalid portable artifact: byte 4 (header section): bytecode format "
                          "version 5313 is newer than this reader knows (0 to 6)");
  fs::path real = fs::path(RS_SHARED_DIR) / "fixtures/bundles/iris_mlp/portable/model.b1.mlirbc";
  EXPECT_TRUE(parseModuleFile(real.string()).isOk());
  Result<Module> missing = parseModuleFile((dir / "nope.mlir").string());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            (dir / "nope.mlir").string() + ": cannot open: No such file or directory");
  fs::remove_all(dir);
}

TEST(Files, SplitInputFileGivesChunksAndTheirLines) {
  std::string text = "// RUN: x\nfunc.func @a() {\n  return\n}\n\n// -----\n\n"
                     "func.func @b() {\n  return %9\n}\n  // -----\nfunc.func @c() {\n}\n";
  auto chunks = splitInputFile(text);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0].first, 1);
  EXPECT_EQ(chunks[1].first, 7);
  EXPECT_EQ(chunks[2].first, 12);
  EXPECT_EQ(chunks[2].second, "func.func @c() {\n}\n");
  Result<Module> second = parseModule(chunks[1].second, "s.mlir", chunks[1].first);
  ASSERT_FALSE(second.isOk());
  EXPECT_EQ(second.status().message(), "s.mlir:9:10: error: use of undefined value '%9'");
  EXPECT_EQ(splitInputFile("abc").size(), 1u);
}

TEST(Performance, OneMegabyteOfConstantsParsesQuickly) {
  // Decimal list constant (~1.5 MB) and a hex blob constant (~1 MB); the time is printed,
  // not asserted.
  const int n = 100000;
  std::string text = "func.func @f() -> (tensor<100000xf32>, tensor<131072xf32>) {\n"
                     "  %0 = stablehlo.constant dense<[";
  char buf[32];
  for (int i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%s%.6e", i ? ", " : "", (i - n / 2) * 0.37);
    text += buf;
  }
  text += "]> : tensor<100000xf32>\n  %1 = stablehlo.constant dense<\"0x";
  for (int i = 0; i < 131072; ++i)
    text += "0000803F";
  text += "\"> : tensor<131072xf32>\n  return %0, %1 : tensor<100000xf32>, tensor<131072xf32>\n}\n";
  ASSERT_GT(text.size(), 2'000'000u);
  auto start = std::chrono::steady_clock::now();
  Result<Module> m = parseModule(text, "big.mlir");
  auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start);
  ASSERT_TRUE(m.isOk()) << m.status().toString();
  std::printf("parsed %.1f MB of constants in %.1f ms\n", text.size() / 1e6, ms.count());
  const Block &b = m->ops[0].regions[0].blocks[0];
  const float *v = b.ops[0].attr("value")->tensor.dataAs<float>();
  EXPECT_EQ(v[0], -18500.0f);
  EXPECT_EQ(v[n - 1], static_cast<float>((n - 1 - n / 2) * 0.37));
  EXPECT_EQ(b.ops[1].attr("value")->tensor.dataAs<float>()[131071], 1.0f);
}

} // namespace
} // namespace rs::ir
