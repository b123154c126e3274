//===- test/ir/conformance_parse_test.cc - parse the conformance suites ----===//
//
// Every `// -----` chunk of shared/conformance/interpret and every file of
// shared/conformance/testdata must parse, print in generic form and parse back to an
// equal Module. Prints the counts (files and chunks parsed, out of total).
//
//===----------------------------------------------------------------------===//
#include "common/files.h"
#include "ir/parser.h"
#include "ir/printer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace rs::ir {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> mlirFiles(const fs::path &dir) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir))
    return out;
  for (const auto &e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".mlir")
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

using rs::testing::readFile;

struct Counts {
  int files = 0, files_ok = 0, chunks = 0, chunks_ok = 0;
  std::vector<std::string> failures;
};

Counts parseSuite(const fs::path &dir) {
  Counts c;
  for (const fs::path &f : mlirFiles(dir)) {
    std::string text = readFile(f);
    bool file_ok = true;
    for (const auto &[line, chunk] : splitInputFile(text)) {
      ++c.chunks;
      Result<Module> m = parseModule(chunk, f.filename().string(), line);
      std::string error;
      if (!m.isOk()) {
        error = m.status().message();
      } else {
        Result<Module> again = parseModule(printGeneric(*m), "printed");
        if (!again.isOk())
          error = f.filename().string() + ":" + std::to_string(line) +
                  ": reparse: " + again.status().message();
        else if (!(*again == *m))
          error = f.filename().string() + ":" + std::to_string(line) + ": round trip differs";
      }
      if (error.empty()) {
        ++c.chunks_ok;
      } else {
        file_ok = false;
        c.failures.push_back(error);
      }
    }
    ++c.files;
    c.files_ok += file_ok;
  }
  return c;
}

void report(const char *name, const Counts &c) {
  std::printf("%s: %d/%d files, %d/%d chunks parse and round-trip\n", name, c.files_ok, c.files,
              c.chunks_ok, c.chunks);
  for (const std::string &f : c.failures)
    std::printf("  %s\n", f.c_str());
}

TEST(Conformance, InterpretSuiteParses) {
  Counts c = parseSuite(fs::path(RS_SHARED_DIR) / "conformance" / "interpret");
  report("interpret", c);
  EXPECT_GE(c.files, 100);
  EXPECT_EQ(c.chunks_ok, c.chunks);
}

TEST(Conformance, TestdataSuiteParses) {
  Counts c = parseSuite(fs::path(RS_SHARED_DIR) / "conformance" / "testdata");
  report("testdata", c);
  EXPECT_GE(c.files, 1000);
  EXPECT_EQ(c.chunks_ok, c.chunks);
}

} // namespace
} // namespace rs::ir
