//===- tools/run_diagnostics.h - `run --verify-diagnostics` ----------------===//
//
// The `expected-error` directive of MLIR's -verify-diagnostics, for the data-driven IR and
// pass tests (STYLE.md rule 11): a comment in a `// -----` chunk of a test file
//
//   // expected-error @+1 {{<text>}}   the error is on the line 1 below the comment
//   // expected-error @-2 {{<text>}}   ... 2 above it
//   // expected-error {{<text>}}       ... on the comment's own line
//   // expected-error @unknown {{<text>}}  an error without a source line
//
// says that reading or transforming the chunk fails, with a message that contains <text>
// and (except @unknown) starts with "<file>:<line>:", the parser's and verifier's location
// prefix (ir/parser.h). One directive per chunk: the first error ends the chunk.
//
// Errors: InvalidArgument naming the directive's file and line when a directive is
// malformed or repeated, and when an actual error differs from the expected one.
// Thread safety: pure functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <optional>
#include <string>
#include <string_view>

namespace rs::tools {

/// One `expected-error` directive.
struct ExpectedError {
  int directive_line = 0; // the line of the comment, 1-based in the file
  int line = 0;           // the line the error must name; 0 for @unknown
  std::string text;       // what the message must contain
};

/// The directive of `chunk`, whose first line is line `first_line` of `file`; nullopt when
/// it has none.
Result<std::optional<ExpectedError>> findExpectedError(std::string_view chunk, int first_line,
                                                       std::string_view file);

/// OK when `actual` is an error that matches `expected` (see the file comment); otherwise
/// an error that says what was expected and what came.
Status matchExpectedError(const ExpectedError &expected, const Status &actual,
                          std::string_view file);

} // namespace rs::tools
