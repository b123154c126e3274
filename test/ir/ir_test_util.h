//===- test/ir/ir_test_util.h - Shared ir/ test helpers ---------------------===//
#pragma once

#include "ir/parser.h"
#include "ir/printer.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <string_view>

namespace rs::ir::testing {

/// Parses `%0 = stablehlo.constant <literal>` and returns its value attribute (an empty
/// Attribute, with a test failure, when it does not parse).
inline Attribute constant(std::string_view literal) {
  std::string text = "func.func @f() {\n  %0 = stablehlo.constant " + std::string(literal) +
                     "\n  func.return\n}\n";
  Result<Module> m = parseModule(text, "c.mlir");
  EXPECT_TRUE(m.isOk()) << literal << ": " << m.status().toString();
  if (!m.isOk())
    return Attribute();
  return *m->ops[0].regions[0].blocks[0].ops[0].attr("value");
}

/// The first line where two printed modules differ, with both lines (for failure
/// messages).
inline std::string firstDifference(const std::string &a, const std::string &b) {
  std::istringstream x(a), y(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    bool ga = static_cast<bool>(std::getline(x, la));
    bool gb = static_cast<bool>(std::getline(y, lb));
    if (!ga && !gb)
      return "printed forms are identical";
    if (la != lb || ga != gb)
      return "line " + std::to_string(line) + ":\n  " + la + "\nvs\n  " + lb;
  }
}

/// firstDifference of the generic printings of two modules.
inline std::string firstDifference(const Module &a, const Module &b) {
  return firstDifference(printGeneric(a), printGeneric(b));
}

} // namespace rs::ir::testing
