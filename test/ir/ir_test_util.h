//===- test/ir/ir_test_util.h - Shared ir/ test helpers ---------------------===//
#pragma once

#include "ir/parser.h"

#include <gtest/gtest.h>

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

} // namespace rs::ir::testing
