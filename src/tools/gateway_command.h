//===- tools/gateway_command.h - `reactant-server gateway` -------------------===//
//
// Runs the KServe V2 gateway (gateway/gateway.h) until SIGINT or SIGTERM:
//
//   reactant-server gateway [--config gateway.yml] [--log-format text|json]
//                           [--log-level LEVEL]
//
// The file is --config, else REACTANT_GATEWAY_FILE, else /etc/reactantserver/gateway.yml
// when it exists, else none (every key from its default or a REACTANT_GATEWAY_* variable;
// REACTANT_GATEWAY_WORKERS then names the workers). Logging follows logging.level and
// logging.format unless the flags are given. After binding its ports the gateway waits
// for a ready worker up to REACTANT_GATEWAY_STARTUP_WAIT_SECONDS (0: one probe round).
// Exit status: 0 after a clean shutdown; 1 on a configuration error, a port that cannot
// be bound, no ready worker within the startup wait, or a fatal gateway condition;
// 2 for bad command-line use (CLI11).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>

namespace rs::tools {

/// Registers the `gateway` subcommand on `app`.
void addGatewayCommand(CLI::App &app);

} // namespace rs::tools
