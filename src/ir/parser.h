//===- ir/parser.h - StableHLO text parser --------------------------------===//
//
// Parses StableHLO modules written as MLIR text, in the pretty form that JAX/Reactant
// print, in MLIR's generic op form, or any mix of both, into the IR of ir.h. Dialects:
// builtin (module), func, stablehlo, chlo, plus the test dialects check.* and
// interpreter.*; sdy.* ops and unknown attributes (#sdy.sharding<...>, mhlo.*, loc(...))
// are kept verbatim as opaque attributes. Every pretty form is normalised to the generic
// shape documented in ir.h, so `parse(pretty) == parse(generic)` for the same module.
//
// Values are numbered in definition order (an op's results after its regions); the
// parser checks use before definition (with MLIR's region scoping: a func.func body
// sees no outer values), redefinition, and that result counts match the result types.
// Each op gets the Location (file, line, col) of the start of its statement.
//
// Errors: InvalidArgument "<file>:<line>:<col>: error: expected <what>, got '<token>'"
// (or another message after "error: "). Never crashes or asserts on bad input; nesting
// depth and constant sizes are bounded. Thread safety: free functions, no shared state.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/ir.h"
#include "support/status.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rs::ir {

/// Parses one module from `text`; `file` names it in diagnostics and locations.
/// `first_line` is the line number of the first line of `text` (for `// -----` chunks).
Result<Module> parseModule(std::string_view text, std::string_view file, int first_line = 1);

/// Reads and parses `path`: StableHLO text, or a StableHLO portable artifact when the file
/// starts with the MLIR bytecode magic `ML\xefR`, whatever its extension (decoded by
/// ir/bytecode.h into the same Module). An unreadable file gives NotFound, one that is not a
/// regular file or is empty (0 bytes) InvalidArgument.
Result<Module> parseModuleFile(const std::string &path);

/// Splits a test file on lines that are exactly `// -----` (MLIR's -split-input-file),
/// returning each chunk with the 1-based line number of its first line. A file without
/// separators is one chunk starting at line 1.
std::vector<std::pair<int, std::string_view>> splitInputFile(std::string_view text);

} // namespace rs::ir
