//===- tools/bundle_command.h - `reactant-server bundle` --------------------===//
//
// `reactant-server bundle validate [--cache-dir DIR] DIR...`: loads each bundle as the server would
// (manifest, weights, every program parsed and checked against the manifest and weights,
// every program compiled on the CPU executor; in a multi-shape bundle every shape variant's
// programs) and prints one line per bundle:
// `ok digits_cnn batch_sizes=[1, 4, 8] inputs=... weights=6`, for a multi-shape bundle
// `ok text_encoder_ms batch_sizes=[1, 4] shape_variants=[{s=8}, {s=16}] programs=4 inputs=...
// weights=10`, or `error <reason>`, the reason starting with the failing file's path (`error
// <dir>: <reason>` when it names none). Each of a valid bundle's warnings (a file not loaded,
// a weight not used) is a line `warning <path>: <what>` before its `ok` line. Nothing is
// logged: these lines are the whole output. Exit status 0 when every bundle is valid (with
// or without warnings), 1 otherwise.
//
// `reactant-server bundle inspect DIR|FILE...` (tools/bundle_inspect.h) and
// `reactant-server bundle convert --to text|generic INPUT [-o OUTPUT] [--force]`
// (tools/bundle_convert.h). Every subcommand exits 2 on bad command-line use.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace rs::tools {

/// `bundle validate`: loads each bundle directory of `dirs` as described above, writing its
/// lines to `out` (a CPU backend that cannot start is reported on stderr). The programs go
/// through the executable cache as the worker's would: in each bundle's `.cache/`, or with
/// `cache_dir` (the worker's key) in `<cache_dir>/<bundle name>/`. Returns the exit status
/// (0: every bundle valid, 1 otherwise).
int validateBundles(const std::vector<std::string> &dirs, std::ostream &out,
                    const std::string &cache_dir = "");

/// Registers the `bundle` subcommand on `app`.
void addBundleCommand(CLI::App &app);

} // namespace rs::tools
