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

#include <filesystem>

namespace rs::ir {
namespace {

namespace fs = std::filesystem;

TEST(BytecodeCrashes, EveryInputDecodesToAnErrorOrToAModuleThatPrintsAndParsesBack) {
  int files = 0;
  for (const auto &e :
       fs::directory_iterator(fs::path(RS_SOURCE_DIR) / "test/ir/data/bytecode_crashes")) {
    if (e.path().extension() != ".mlirbc")
      continue;
    ++files;
    const std::string path = e.path().string();
    Result<std::string> bytes = readWholeFile(path);
    ASSERT_TRUE(bytes.isOk()) << bytes.status().toString();
    Result<Module> m = readPortableArtifact(*bytes, path);
    if (!m.isOk()) {
      EXPECT_TRUE(m.status().message().starts_with(path + ": ")) << m.status().toString();
      continue;
    }
    const std::string printed = printGeneric(*m);
    Result<Module> again = parseModule(printed, "printed.mlir");
    ASSERT_TRUE(again.isOk()) << path << ": " << again.status().toString();
    EXPECT_TRUE(*again == *m) << path;
    EXPECT_EQ(printGeneric(*again), printed) << path;
  }
  EXPECT_GE(files, 1);
}

} // namespace
} // namespace rs::ir
