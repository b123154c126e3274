//===- tools/config_command.h - `reactant-server config docs` -------------===//
//
//   reactant-server config docs    prints docs/configuration.md, generated from the key
//                                  tables (config/key_docs.h); exit status 0
//
// Regenerate the committed page with
//   reactant-server config docs > docs/configuration.md
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>

namespace rs::tools {

/// Adds the `config` subcommand and its `docs` subcommand to `app`.
void addConfigCommand(CLI::App &app);

} // namespace rs::tools
