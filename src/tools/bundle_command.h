//===- tools/bundle_command.h - `reactant-server bundle` --------------------===//
//
// `reactant-server bundle validate DIR...`: loads each bundle as the server would
// (manifest, weights, every program parsed and checked against the manifest and weights,
// every program compiled on the CPU executor) and prints one line per bundle:
// `ok digits_cnn batch_sizes=[1, 4, 8] inputs=... weights=6` or `error <name>: <reason>`.
// Exit status 0 when every bundle is valid, 1 otherwise.
//
// `reactant-server bundle inspect DIR|FILE...` (tools/bundle_inspect.h) and
// `reactant-server bundle convert --to text|generic INPUT [-o OUTPUT] [--force]`
// (tools/bundle_convert.h). Every subcommand exits 2 on bad command-line use.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>

namespace rs::tools {

/// Registers the `bundle` subcommand on `app`.
void addBundleCommand(CLI::App &app);

} // namespace rs::tools
