//===- config/gateway_config_impl.h - gateway.yml internals (private) -----===//
//
// Shared by gateway_config.cc (entry points), gateway_config_env.cc (key checks and
// REACTANT_GATEWAY_* variables) and gateway_config_build.cc (typed values). Not API.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "config/gateway_config.h"
#include "support/yaml.h"

#include <string>
#include <string_view>

namespace rs::config::gateway_detail {

inline constexpr std::string_view kEnvPrefix = "REACTANT_GATEWAY_";

/// Unknown keys anywhere in the file are errors naming the dotted key.
Status checkKeys(const yaml::Value &root, const std::string &file);
/// Applies REACTANT_GATEWAY_* variables to `root` (keys and process settings), recording
/// them in `out.env_overrides`.
Status applyEnvironment(const Environment &env, yaml::Value &root, GatewayConfig &out);
/// The node's values into `root` where neither the file (`file_lists_endpoints`) nor `env`
/// sets them (NodeGatewayValues).
void applyNodeValues(const NodeGatewayValues &node, bool file_lists_endpoints,
                     const Environment &env, yaml::Value &root);
/// Typed values of the resolved tree into `c`, validated; `file` names it in messages.
Status buildConfig(const yaml::Value &root, const std::string &file, GatewayConfig &c);

} // namespace rs::config::gateway_detail
