//===- test/ir/cases_test.cc - data-driven parser cases (test/ir/*.mlir) ---===//
//
// Runs every test/ir/*.mlir file (STYLE.md rule 11; an in-process subset of FileCheck).
// A file is split on `// -----`; each chunk is parsed with the file's line numbers and
// printed in generic form. Directives, in `//` comments of the chunk:
//   // CHECK: <text>        found in the printed output after the previous match
//   // CHECK-NEXT: <text>   found on the line right after the previous match
//   // CHECK-NOT: <text>    found nowhere in the printed output
//   // expected-error @+N {{<text>}}  parsing fails; the error is on the line N below
//                          the comment (`@+0` or no offset: the same line) and the
//                          message contains <text>
// A chunk that parses must also print and parse back to an equal module. A chunk with
// no directive is a mistake in the test file and fails, so nothing passes by accident.
//
//===----------------------------------------------------------------------===//
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

struct Check {
  enum Kind { kCheck, kNext, kNot } kind;
  std::string text;
};

struct Expected {
  int line = 0;
  std::string text;
};

std::string trim(std::string_view s) {
  size_t a = s.find_first_not_of(" \t");
  size_t b = s.find_last_not_of(" \t\r");
  return a == std::string_view::npos ? std::string() : std::string(s.substr(a, b - a + 1));
}

void collect(std::string_view chunk, int first_line, std::vector<Check> *checks,
             std::vector<Expected> *errors) {
  std::istringstream in{std::string(chunk)};
  std::string line;
  for (int n = first_line; std::getline(in, line); ++n) {
    size_t c = line.find("//");
    if (c == std::string::npos)
      continue;
    std::string d = trim(std::string_view(line).substr(c + 2));
    auto take = [&](std::string_view prefix, Check::Kind kind) {
      if (d.rfind(prefix, 0) != 0)
        return false;
      checks->push_back({kind, trim(std::string_view(d).substr(prefix.size()))});
      return true;
    };
    if (take("CHECK-NEXT:", Check::kNext) || take("CHECK-NOT:", Check::kNot) ||
        take("CHECK:", Check::kCheck))
      continue;
    if (d.rfind("expected-error", 0) == 0) {
      Expected e;
      e.line = n;
      size_t at = d.find("@+");
      if (at != std::string::npos)
        e.line += std::atoi(d.c_str() + at + 2);
      size_t open = d.find("{{"), close = d.rfind("}}");
      if (open != std::string::npos && close != std::string::npos && close > open)
        e.text = d.substr(open + 2, close - open - 2);
      errors->push_back(e);
    }
  }
}

void runChunk(const std::string &file, int first_line, std::string_view chunk) {
  SCOPED_TRACE(file + ":" + std::to_string(first_line));
  std::vector<Check> checks;
  std::vector<Expected> errors;
  collect(chunk, first_line, &checks, &errors);
  ASSERT_TRUE(!checks.empty() || !errors.empty()) << "chunk has no directive";
  Result<Module> m = parseModule(chunk, file, first_line);
  if (!errors.empty()) {
    ASSERT_EQ(errors.size(), 1u) << "one expected-error per chunk";
    ASSERT_FALSE(m.isOk()) << "expected an error: " << errors[0].text;
    const std::string &msg = m.status().message();
    std::string where = file + ":" + std::to_string(errors[0].line) + ":";
    EXPECT_EQ(msg.rfind(where, 0), 0u) << msg << "\n  expected at " << where;
    EXPECT_NE(msg.find(errors[0].text), std::string::npos) << msg;
    return;
  }
  ASSERT_TRUE(m.isOk()) << m.status().toString();
  std::string printed = printGeneric(*m);
  size_t pos = 0;
  for (const Check &c : checks) {
    if (c.kind == Check::kNot) {
      EXPECT_EQ(printed.find(c.text), std::string::npos) << "CHECK-NOT: " << c.text;
      continue;
    }
    size_t from = pos;
    if (c.kind == Check::kNext) {
      size_t nl = printed.find('\n', pos);
      from = nl == std::string::npos ? printed.size() : nl + 1;
    }
    size_t hit = printed.find(c.text, from);
    bool ok = hit != std::string::npos;
    if (ok && c.kind == Check::kNext) {
      size_t line_end = printed.find('\n', from);
      ok = line_end == std::string::npos || hit < line_end;
    }
    EXPECT_TRUE(ok) << (c.kind == Check::kNext ? "CHECK-NEXT: " : "CHECK: ") << c.text << "\nin:\n"
                    << printed;
    if (!ok)
      return;
    pos = hit + c.text.size();
  }
  Result<Module> again = parseModule(printed, "printed");
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  EXPECT_TRUE(*again == *m) << printed;
}

TEST(Cases, EveryMlirFileInTestIr) {
  fs::path dir = fs::path(RS_SOURCE_DIR) / "test" / "ir";
  std::vector<fs::path> files;
  for (const auto &e : fs::directory_iterator(dir))
    if (e.path().extension() == ".mlir")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 2u);
  for (const fs::path &f : files) {
    std::ifstream in(f, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    std::string content = text.str();
    for (const auto &[line, chunk] : splitInputFile(content))
      runChunk(f.filename().string(), line, chunk);
  }
}

} // namespace
} // namespace rs::ir
