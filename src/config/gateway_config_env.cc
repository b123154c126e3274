//===- config/gateway_config_env.cc - gateway.yml keys and the environment ===//
//
// The unknown-key check and the REACTANT_GATEWAY_* overrides, both driven by the gateway
// key table (config/keys.h), and the node supervisor's values for its embedded gateway.
//
//===----------------------------------------------------------------------===//
#include "config/gateway_config_impl.h"

#include "config/key_reader.h"
#include "config/keys.h"

namespace rs::config::gateway_detail {

Status checkKeys(const yaml::Value &root, const std::string &file) {
  if (root.isNull())
    return Status::ok();
  if (!root.isMap())
    return invalidArgument() << file << ": expected a map at the top level, got "
                             << root.kindName();
  return config::checkKeys(gatewayKeys(), KeyReader(root, file), root);
}

Status applyEnvironment(const Environment &env, yaml::Value &root, GatewayConfig &out) {
  EnvApplied applied;
  RS_RETURN_IF_ERROR(config::applyEnvironment(gatewayKeys(), env, root, applied));
  out.env_overrides = std::move(applied.overrides);
  return Status::ok();
}

void applyNodeValues(const NodeGatewayValues &node, bool file_lists_endpoints,
                     const Environment &env, yaml::Value &root) {
  const std::string origin = "the node's workers";
  auto list = [&](const std::vector<std::string> &items) {
    yaml::Value v;
    v.kind = yaml::Value::Kind::kList;
    v.origin = origin;
    for (const std::string &item : items)
      v.list.push_back(yaml::Value::scalarValue(item, origin));
    return v;
  };
  const std::string prefix(kEnvPrefix);
  if (!file_lists_endpoints && !env.count(prefix + "WORKERS")) {
    yaml::setPath(root, "endpoints", list(node.endpoints));
    yaml::setPath(root, "worker_names", list(node.worker_names));
    if (node.metrics_endpoints)
      yaml::setPath(root, "metrics_endpoints", list(*node.metrics_endpoints));
  }
  if (!env.count(prefix + "GRPC_MAX_RECV_MSG_BYTES"))
    yaml::setPath(root, "grpc.max_recv_msg_bytes",
                  yaml::Value::scalarValue(std::to_string(node.max_recv_msg_bytes), origin));
  if (!env.count(prefix + "GRPC_MAX_SEND_MSG_BYTES"))
    yaml::setPath(root, "grpc.max_send_msg_bytes",
                  yaml::Value::scalarValue(std::to_string(node.max_send_msg_bytes), origin));
  // The file or the variable (already applied to `root`) wins over the workers' list.
  if (!node.cors_allowed_origins.empty() && !yaml::findPath(root, "http.cors_allowed_origins"))
    yaml::setPath(root, "http.cors_allowed_origins", list(node.cors_allowed_origins));
}

} // namespace rs::config::gateway_detail
