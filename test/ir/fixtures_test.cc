//===- test/ir/fixtures_test.cc - parse every fixture bundle module --------===//
//
// Every .mlir of shared/fixtures/bundles (pretty, generic, portable export text) must
// parse; each pretty/generic pair must give equal Modules; printing the generic form
// and parsing it again must give the same Module.
//
//===----------------------------------------------------------------------===//
#include "ir_test_util.h"

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

const fs::path kBundles = fs::path(RS_SHARED_DIR) / "fixtures" / "bundles";

std::vector<fs::path> sortedMlir(const fs::path &dir, std::string_view suffix) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir))
    return out;
  for (const auto &e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<fs::path> bundleDirs() {
  std::vector<fs::path> out;
  for (const auto &e : fs::directory_iterator(kBundles))
    if (e.is_directory())
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<fs::path> allFixtureFiles() {
  std::vector<fs::path> out;
  for (const fs::path &b : bundleDirs()) {
    for (auto &p : sortedMlir(b, ".mlir"))
      out.push_back(p);
    for (auto &p : sortedMlir(b / "generic", ".mlir"))
      out.push_back(p);
    for (auto &p : sortedMlir(b / "portable", ".export.mlir"))
      out.push_back(p);
  }
  return out;
}

using testing::firstDifference;

TEST(Fixtures, EveryFileParses) {
  std::vector<fs::path> files = allFixtureFiles();
  ASSERT_GE(files.size(), 57u);
  for (const fs::path &f : files) {
    Result<Module> m = parseModuleFile(f.string());
    EXPECT_TRUE(m.isOk()) << m.status().toString();
    if (m.isOk()) {
      EXPECT_NE(m->lookupFunction("main"), nullptr) << f;
    }
  }
}

TEST(Fixtures, PrettyAndGenericFormsAreEqual) {
  int pairs = 0;
  for (const fs::path &b : bundleDirs()) {
    for (const fs::path &pretty : sortedMlir(b, ".mlir")) {
      fs::path generic = b / "generic" / pretty.filename();
      ASSERT_TRUE(fs::exists(generic)) << generic;
      Result<Module> p = parseModuleFile(pretty.string());
      Result<Module> g = parseModuleFile(generic.string());
      ASSERT_TRUE(p.isOk()) << p.status().toString();
      ASSERT_TRUE(g.isOk()) << g.status().toString();
      EXPECT_TRUE(*p == *g) << pretty << " vs " << generic << "\n" << firstDifference(*p, *g);
      ++pairs;
    }
  }
  EXPECT_EQ(pairs, 19);
}

TEST(Fixtures, GenericPrintRoundTrips) {
  for (const fs::path &f : allFixtureFiles()) {
    Result<Module> m = parseModuleFile(f.string());
    ASSERT_TRUE(m.isOk()) << m.status().toString();
    std::string printed = printGeneric(*m);
    Result<Module> again = parseModule(printed, "printed");
    ASSERT_TRUE(again.isOk()) << f << ": " << again.status().toString();
    EXPECT_TRUE(*again == *m) << f << "\n" << firstDifference(*m, *again);
    EXPECT_EQ(printGeneric(*again), printed) << f; // deterministic, a fixed point
  }
}

} // namespace
} // namespace rs::ir
