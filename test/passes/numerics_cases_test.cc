//===- test/passes/numerics_cases_test.cc - Data-driven numerics pass tests -===//
//
// Runs every test/passes/*.mlir file (STYLE.md rule 11; FileCheck is not installed, so
// this driver implements the subset the files use). A file is split on `// -----`; each
// chunk is parsed (locations keep the file's line numbers), run through the pass named
// by the nearest `// RUN:` line above or inside it, and printed in generic form:
//   // RUN: numerics mode=<f32|auto|tf32> target_tf32=<true|false>
//   // CHECK: <text>       found in the printed output after the previous CHECK's match
//   // CHECK-NOT: <text>   found nowhere in the printed output
//   // OUTCOME: <text>     NumericsReport::outcome() equals <text>
//   // expected-error @+1 {{<text>}}  the pass fails; its message names the next line
//                                     ("<file>:<line>:") and contains <text>
// The printed output must parse again to the same module. A chunk with no directive is
// an error in the test file, so nothing passes by accident.
//
//===----------------------------------------------------------------------===//
#include "passes/numerics.h"

#include "ir/parser.h"
#include "ir/printer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace rs::passes {
namespace {

namespace fs = std::filesystem;

struct RunLine {
  NumericsOptions options;
  bool set = false;
};

struct Directives {
  std::vector<std::string> checks;
  std::vector<std::string> check_nots;
  std::optional<std::string> outcome;
  std::optional<std::string> error; // expected message text
  int error_line = 0;               // 0: any line
};

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

/// Parses "numerics mode=f32 target_tf32=false"; false on a malformed line.
bool parseRun(std::string_view text, RunLine *run) {
  std::istringstream in{std::string(text)};
  std::string word;
  if (!(in >> word) || word != "numerics")
    return false;
  while (in >> word) {
    if (word == "mode=f32")
      run->options.mode = NumericsMode::kF32;
    else if (word == "mode=auto")
      run->options.mode = NumericsMode::kAuto;
    else if (word == "mode=tf32")
      run->options.mode = NumericsMode::kTf32;
    else if (word == "target_tf32=true")
      run->options.target_has_tf32 = true;
    else if (word == "target_tf32=false")
      run->options.target_has_tf32 = false;
    else
      return false;
  }
  run->set = true;
  return true;
}

/// Reads the directives of one chunk starting at file line `first_line`; updates `run`.
::testing::AssertionResult readDirectives(std::string_view chunk, int first_line, RunLine *run,
                                          Directives *d) {
  std::istringstream in{std::string(chunk)};
  std::string line;
  for (int n = first_line; std::getline(in, line); ++n) {
    std::string_view s = trimmed(line);
    if (!s.starts_with("//"))
      continue;
    s = trimmed(s.substr(2));
    auto after = [&](std::string_view prefix) { return trimmed(s.substr(prefix.size())); };
    if (s.starts_with("RUN:")) {
      if (!parseRun(after("RUN:"), run))
        return ::testing::AssertionFailure() << "line " << n << ": bad RUN line";
    } else if (s.starts_with("CHECK-NOT:")) {
      d->check_nots.emplace_back(after("CHECK-NOT:"));
    } else if (s.starts_with("CHECK:")) {
      d->checks.emplace_back(after("CHECK:"));
    } else if (s.starts_with("OUTCOME:")) {
      d->outcome = std::string(after("OUTCOME:"));
    } else if (s.starts_with("expected-error")) {
      std::string_view rest = after("expected-error");
      if (rest.starts_with("@+")) {
        int offset = 0;
        size_t i = 2;
        while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9')
          offset = offset * 10 + (rest[i++] - '0');
        d->error_line = n + offset;
        rest = trimmed(rest.substr(i));
      }
      if (!rest.starts_with("{{") || !rest.ends_with("}}"))
        return ::testing::AssertionFailure() << "line " << n << ": expected {{message}}";
      d->error = std::string(rest.substr(2, rest.size() - 4));
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<fs::path> caseFiles() {
  std::vector<fs::path> out;
  for (const auto &e : fs::directory_iterator(fs::path(RS_SOURCE_DIR) / "test" / "passes"))
    if (e.path().extension() == ".mlir")
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(NumericsCases, EveryCaseFile) {
  const std::vector<fs::path> files = caseFiles();
  ASSERT_GE(files.size(), 2u);
  int chunks = 0;
  for (const fs::path &path : files) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string text = ss.str();
    const std::string file = path.filename().string();
    RunLine run;
    for (const auto &[first_line, chunk] : ir::splitInputFile(text)) {
      SCOPED_TRACE(file + ":" + std::to_string(first_line));
      Directives d;
      ASSERT_TRUE(readDirectives(chunk, first_line, &run, &d));
      ASSERT_TRUE(run.set) << "no RUN line before this case";
      ASSERT_TRUE(!d.checks.empty() || !d.check_nots.empty() || d.outcome || d.error)
          << "a case without CHECK, OUTCOME or expected-error";
      ++chunks;
      Result<ir::Module> m = ir::parseModule(chunk, file, first_line);
      ASSERT_TRUE(m.isOk()) << m.status().toString();
      Result<NumericsReport> r = pinNumerics(*m, run.options);
      if (d.error) {
        ASSERT_FALSE(r.isOk()) << "expected an error, the pass succeeded";
        const std::string &msg = r.status().message();
        EXPECT_NE(msg.find(*d.error), std::string::npos) << msg;
        if (d.error_line > 0) {
          EXPECT_NE(msg.find(file + ":" + std::to_string(d.error_line) + ":"), std::string::npos)
              << msg;
        }
        continue;
      }
      ASSERT_TRUE(r.isOk()) << r.status().toString();
      if (d.outcome) {
        EXPECT_EQ(r->outcome(), *d.outcome);
      }
      const std::string printed = ir::printGeneric(*m);
      size_t pos = 0;
      for (const std::string &c : d.checks) {
        size_t at = printed.find(c, pos);
        EXPECT_NE(at, std::string::npos)
            << "CHECK not found after offset " << pos << ": " << c << "\n"
            << printed;
        if (at != std::string::npos)
          pos = at + c.size();
      }
      for (const std::string &c : d.check_nots)
        EXPECT_EQ(printed.find(c), std::string::npos) << "CHECK-NOT found: " << c << "\n"
                                                      << printed;
      Result<ir::Module> again = ir::parseModule(printed, "printed");
      ASSERT_TRUE(again.isOk()) << again.status().toString();
      EXPECT_TRUE(*again == *m);
    }
  }
  EXPECT_GE(chunks, 15);
}

} // namespace
} // namespace rs::passes
