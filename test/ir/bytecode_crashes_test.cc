//===- test/ir/bytecode_crashes_test.cc - Inputs the fuzzer failed on ------===//
//
// Every file of test/ir/data/bytecode_crashes (see its README.md) decodes to a clean
// error that names the file, or to a module whose generic print parses back to it.
// Inputs on which the reader itself (ir/bytecode*) is at fault stay in kOpenReaderBugs
// until the reader handles them: DISABLED_OpenReaderBugs reads those and fails (run it
// with --gtest_also_run_disabled_tests); the other test reads the rest.
//
//===----------------------------------------------------------------------===//
#include "ir/bytecode.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "support/file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace rs::ir {
namespace {

namespace fs = std::filesystem;

/// Reader faults (README.md says what each input holds).
const std::set<std::string> kOpenReaderBugs = {"dense_of_scalar_type.mlirbc",
                                               "nested_module.mlirbc"};

/// The inputs, sorted; `open`: those of kOpenReaderBugs, or all the others.
std::vector<fs::path> inputs(bool open) {
  std::vector<fs::path> out;
  for (const auto &e :
       fs::directory_iterator(fs::path(RS_SOURCE_DIR) / "test/ir/data/bytecode_crashes"))
    if (e.path().extension() == ".mlirbc" &&
        kOpenReaderBugs.count(e.path().filename().string()) == (open ? 1u : 0u))
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

void expectCleanErrorOrRoundTrip(const fs::path &p) {
  const std::string path = p.string();
  Result<std::string> bytes = readWholeFile(path);
  ASSERT_TRUE(bytes.isOk()) << bytes.status().toString();
  Result<Module> m = readPortableArtifact(*bytes, path);
  if (!m.isOk()) {
    EXPECT_TRUE(m.status().message().starts_with(path + ": ")) << m.status().toString();
    return;
  }
  const std::string printed = printGeneric(*m);
  Result<Module> again = parseModule(printed, "printed.mlir");
  ASSERT_TRUE(again.isOk()) << path << ": " << again.status().toString();
  EXPECT_TRUE(*again == *m) << path;
  EXPECT_EQ(printGeneric(*again), printed) << path;
}

TEST(BytecodeCrashes, EveryInputDecodesToAnErrorOrToAModuleThatPrintsAndParsesBack) {
  const std::vector<fs::path> files = inputs(false);
  EXPECT_GE(files.size(), 1u);
  for (const fs::path &p : files)
    expectCleanErrorOrRoundTrip(p);
}

TEST(BytecodeCrashes, DISABLED_OpenReaderBugs) {
  const std::vector<fs::path> files = inputs(true);
  EXPECT_EQ(files.size(), kOpenReaderBugs.size());
  for (const fs::path &p : files)
    expectCleanErrorOrRoundTrip(p);
}

} // namespace
} // namespace rs::ir
