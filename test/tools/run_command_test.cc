//===- test/tools/run_command_test.cc - `reactant-server run` ---------------===//
//
// The real binary executing a module on .npy and .json inputs (exact output lines), its
// errors for a missing or mismatched input, --print-ir after the numerics pass, and
// --verify-diagnostics refusing an expected error that differs or does not happen. Also
// holds the FileCheck case files (test/ir/*.mlir, test/passes/*.mlir, run by lit) to their
// form: a RUN line, a directive in every case, a CASE-LABEL opening every later case that
// has checks, so that no case passes by checking nothing.
//
//===----------------------------------------------------------------------===//
#include "tools_test_util.h"

#include "ir/parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

namespace rs::testing {
namespace {

const std::string kAdd = R"(func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.add %a, %b : tensor<3xf32>
  return %0 : tensor<3xf32>
}
)";

/// A NumPy format 1.0 file of little-endian f32 values with shape `shape_text` ("(3,)").
std::string npyF32(const std::vector<float> &values, const std::string &shape_text) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape_text + ", }";
  while ((10 + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  std::string data(values.size() * sizeof(float), '\0');
  std::memcpy(data.data(), values.data(), data.size());
  return out + data;
}

TEST(RunCommand, ExecutesMainOnNpyAndJsonInputs) {
  TempDir tmp;
  writeFile(tmp.file("add.mlir"), kAdd);
  writeFile(tmp.file("a.npy"), npyF32({1.0f, 2.5f, -3.0f}, "(3,)"));
  writeFile(tmp.file("b.json"), R"({"datatype": "FP32", "shape": [3], "data": [4, 5, 6]})");
  writeFile(tmp.file("c.json"), "[0.5, 0.25, 0]");
  RunResult r = runServer({"run", tmp.file("add.mlir"), "--input", "0=" + tmp.file("a.npy"),
                           "--input", "1=" + tmp.file("b.json")});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, "result0 FP32 [3] = [5, 7.5, 3]\n");
  // A bare data array takes the argument's dtype and shape; the order of --input is free.
  r = runServer({"run", tmp.file("add.mlir"), "--input", "1=" + tmp.file("c.json"), "--input",
                 "0=" + tmp.file("b.json")});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "result0 FP32 [3] = [4.5, 5.25, 6]\n");
}

TEST(RunCommand, MissingOrMismatchedInputsAreRefusedNamingTheArgument) {
  TempDir tmp;
  writeFile(tmp.file("add.mlir"), kAdd);
  writeFile(tmp.file("a.npy"), npyF32({1.0f, 2.0f}, "(2,)"));
  writeFile(tmp.file("b.json"), "[1, 2, 3]");
  RunResult r = runServer({"run", tmp.file("add.mlir"), "--input", "0=" + tmp.file("b.json")});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "INVALID_ARGUMENT: argument 1 (tensor<3xf32>) has no --input 1=FILE\n");
  r = runServer({"run", tmp.file("add.mlir"), "--input", "0=" + tmp.file("a.npy"), "--input",
                 "1=" + tmp.file("b.json")});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "INVALID_ARGUMENT: " + tmp.file("a.npy") + ": f32 [2], the argument is f32 [3]\n");
  r = runServer({"run", tmp.file("add.mlir"), "--input", "2=" + tmp.file("b.json")});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "INVALID_ARGUMENT: --input 2=" + tmp.file("b.json") +
                       ": the entry function takes 2 arguments\n");
  // A usage error (an unknown pass) is status 2.
  r = runServer({"run", tmp.file("add.mlir"), "--pass", "inline"});
  EXPECT_EQ(r.status, 2);
}

TEST(RunCommand, PrintIrShowsTheNumericsOutcomeAndTheRewrittenModule) {
  TempDir tmp;
  writeFile(tmp.file("dot.mlir"),
            R"(func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
)");
  RunResult r = runServer({"run", tmp.file("dot.mlir"), "--print-ir", "--print-outcome", "--pass",
                           "numerics", "--numerics-mode", "f32"});
  EXPECT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> out = lines(r.out);
  ASSERT_GE(out.size(), 2u) << r.out;
  EXPECT_EQ(out[0], "// numerics: f32 (pinned 1 dot_general)");
  EXPECT_NE(r.out.find("precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision "
                       "HIGHEST>]"),
            std::string::npos)
      << r.out;
}

TEST(RunCommand, VerifyDiagnosticsRefusesAnErrorThatDiffersOrDoesNotHappen) {
  TempDir tmp;
  writeFile(tmp.file("cases.mlir"), R"(func.func @f(%a: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{use of undefined value '%8'}}
  %0 = stablehlo.add %a, %9 : tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @f(%a: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{use of undefined value}}
  %0 = stablehlo.add %a, %a : tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @f(%a: tensor<f32>) -> tensor<f32> {
  // expected-error @+2 {{use of undefined value '%9'}}
  %0 = stablehlo.add %a, %9 : tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @f(%a: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{use of undefined value '%9'}}
  %0 = stablehlo.add %a, %9 : tensor<f32>
  return %0 : tensor<f32>
}
)");
  const std::string f = tmp.file("cases.mlir");
  RunResult r = runServer({"run", f, "--split-input-file", "--verify-diagnostics", "--print-ir"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "// -----\n// -----\n// -----\n");
  EXPECT_EQ(r.err, "INVALID_ARGUMENT: " + f +
                       ":2: expected an error containing 'use of undefined value '%8'', got: " + f +
                       ":3:26: error: use of undefined value '%9'\n" + "INVALID_ARGUMENT: " + f +
                       ":10: expected an error containing 'use of undefined value', got none\n" +
                       "INVALID_ARGUMENT: " + f + ":18: expected an error at " + f +
                       ":20: got: " + f + ":19:26: error: use of undefined value '%9'\n");
}

/// The FileCheck case files of test/ir and test/passes.
std::vector<fs::path> caseFiles() {
  std::vector<fs::path> files;
  for (const char *dir : {"ir", "passes"})
    for (const auto &e : fs::directory_iterator(fs::path(RS_SOURCE_DIR) / "test" / dir))
      if (e.path().extension() == ".mlir")
        files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(FileCheckCases, EveryCaseHasADirectiveAndEveryLaterCheckedCaseALabel) {
  const std::vector<fs::path> files = caseFiles();
  ASSERT_GE(files.size(), 8u);
  int cases = 0;
  for (const fs::path &path : files) {
    SCOPED_TRACE(path.string());
    const std::string text = readFile(path);
    EXPECT_TRUE(text.starts_with("// RUN: reactant-server run ")) << "no RUN line first";
    bool first = true;
    for (const auto &[line, chunk] : ir::splitInputFile(text)) {
      SCOPED_TRACE("line " + std::to_string(line));
      ++cases;
      const bool checks = chunk.find("// CHECK") != std::string_view::npos ||
                          chunk.find("// CASE-NOT:") != std::string_view::npos;
      const bool error = chunk.find("// expected-error") != std::string_view::npos;
      EXPECT_TRUE(checks || error) << "a case without CHECK, CASE-NOT or expected-error";
      EXPECT_FALSE(checks && error) << "a case that expects an error prints nothing to check";
      if (checks && !first) {
        EXPECT_NE(chunk.find("// CASE-LABEL: // -----"), std::string_view::npos)
            << "its checks would be searched in the cases before it";
      }
      first = false;
    }
  }
  EXPECT_GE(cases, 67); // the cases of the files today: 47 in test/ir, 20 in test/passes
}

} // namespace
} // namespace rs::testing
