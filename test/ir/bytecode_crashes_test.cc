//===- test/ir/bytecode_crashes_test.cc - Inputs the fuzzer failed on ------===//
//
// Every file of test/ir/data/bytecode_crashes (see its README.md) decodes to a clean
// error that names the file, or to a module whose generic print parses back to it.
//
//===----------------------------------------------------------------------===//
#include "ir/bytecode.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "support/file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace rs::ir {
namespace {

namespace fs = std::filesystem;

/// The inputs, sorted.
std::vector<fs::path> inputs() {
  std::vector<fs::path> out;
  for (const auto &e :
       fs::directory_iterator(fs::path(RS_SOURCE_DIR) / "test/ir/data/bytecode_crashes"))
    if (e.path().extension() == ".mlirbc")
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
  const std::vector<fs::path> files = inputs();
  EXPECT_EQ(files.size(), 4u);
  for (const fs::path &p : files)
    expectCleanErrorOrRoundTrip(p);
}

/// The inputs that exposed reader faults are refused, naming what is wrong.
TEST(BytecodeCrashes, TheReaderRefusesWhatTheTextParserCannotRead) {
  const fs::path dir = fs::path(RS_SOURCE_DIR) / "test/ir/data/bytecode_crashes";
  for (const auto &[file, what] : std::vector<std::pair<std::string, std::string>>{
           {"dense_of_scalar_type.mlirbc",
            "(AttrType section): dense elements of type i1: expected a statically shaped "
            "tensor type"},
           {"nested_module.mlirbc",
            "(IR section): 'builtin.module': a module inside a region is not supported"}}) {
    const std::string path = (dir / file).string();
    Result<std::string> bytes = readWholeFile(path);
    ASSERT_TRUE(bytes.isOk());
    Result<Module> m = readPortableArtifact(*bytes, path);
    ASSERT_FALSE(m.isOk()) << file;
    EXPECT_NE(m.status().message().find(what), std::string::npos) << m.status().toString();
  }
}

} // namespace
} // namespace rs::ir
