//===- tools/exit_status.h - Exit statuses of the checking subcommands ----===//
//
// The subcommands that check a deployment (`cache verify`, `validate check`) and their
// companions (`cache export|import`, `validate record`) exit with one scheme, so that a
// script can tell a check that failed from a check that could not be done: 0 success (a
// check passed); 1 a check ran and failed; 3 an error (bad configuration, record or
// archive, a server that cannot be reached). 2 is CLI11's bad command-line use.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace rs::tools {

/// Success; a check passed (cache verify: every program came from the executable cache;
/// validate check: MATCH).
inline constexpr int kExitOk = 0;
/// A check ran and failed (cache verify: a program was compiled or the worker is not
/// ready; validate check: MISMATCH).
inline constexpr int kExitCheckFailed = 1;
/// Bad command-line use: CLI11's own status for it, and a subcommand's refusal of an
/// argument that parses but cannot be checked as given (verify-image: no image digest).
inline constexpr int kExitUsage = 2;
/// The command could not do its work.
inline constexpr int kExitError = 3;

} // namespace rs::tools
