//===- tools/config_command.cc - `reactant-server config docs` ------------===//
#include "tools/config_command.h"

#include "config/key_docs.h"

#include <cstdlib>
#include <iostream>

namespace rs::tools {

void addConfigCommand(CLI::App &app) {
  CLI::App *config = app.add_subcommand("config", "The configuration keys");
  config->require_subcommand(1);
  CLI::App *docs =
      config->add_subcommand("docs", "Print docs/configuration.md, generated from the key tables");
  docs->callback([] {
    std::cout << config::configurationDocs();
    std::cout.flush();
    std::exit(std::cout ? 0 : 1);
  });
}

} // namespace rs::tools
