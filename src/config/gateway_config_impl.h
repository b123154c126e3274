//===- config/gateway_config_impl.h - gateway.yml internals (private) -----===//
//
// Shared by gateway_config.cc (entry points), gateway_config_env.cc (key checks and
// REACTANT_GATEWAY_* variables) and gateway_config_build.cc (typed values). Not API.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "config/gateway_config.h"
#include "config/tree.h"

#include <string>
#include <string_view>

namespace rs::config::gateway_detail {

inline constexpr std::string_view kEnvPrefix = "REACTANT_GATEWAY_";

/// Error prefix: "<file>: <key>: " or "environment override VAR: ".
StatusBuilder keyError(const std::string &file, const config::ConfigValue &v);
/// Unknown keys anywhere in the file are errors naming the dotted key.
Status checkKeys(const config::ConfigValue &root, const std::string &file);
/// Applies REACTANT_GATEWAY_* variables to `root` (keys) and `out` (process settings).
Status applyEnvironment(const Environment &env, config::ConfigValue &root, GatewayConfig &out);
/// The node's values into `root` where neither the file (`file_lists_endpoints`) nor `env`
/// sets them (NodeGatewayValues).
void applyNodeValues(const NodeGatewayValues &node, bool file_lists_endpoints,
                     const Environment &env, config::ConfigValue &root);
/// STARTUP_WAIT_SECONDS, HEALTH_INTERVAL_SECONDS and WEDGE_EXIT_ROUNDS.
Status readProcessSettings(const Environment &env, GatewayConfig &out);
/// Typed values of the resolved tree into `c`, validated.
Status buildConfig(const config::ConfigValue &root, const std::string &file, GatewayConfig &c);

} // namespace rs::config::gateway_detail
