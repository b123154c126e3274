//===- config/gateway_config.cc - gateway.yml and its environment ----------===//
#include "config/gateway_config.h"
#include "support/file.h"

#include "config/gateway_config_impl.h"
#include "config/key_reader.h"
#include "config/keys.h"
#include "support/text.h"

#include <algorithm>
#include <filesystem>

namespace rs::config {

std::string_view schedulingModeName(SchedulingMode v) {
  switch (v) {
  case SchedulingMode::kRoundRobin: return "round_robin";
  case SchedulingMode::kLeastOutstanding: return "least_outstanding";
  case SchedulingMode::kLptPacking: return "lpt_packing";
  }
  return "round_robin";
}

std::string_view workBasisName(WorkBasis v) {
  switch (v) {
  case WorkBasis::kCompute: return "compute";
  case WorkBasis::kItems: return "items";
  case WorkBasis::kRequests: return "requests";
  }
  return "compute";
}

std::string_view fillModeName(FillMode v) {
  switch (v) {
  case FillMode::kRun: return "run";
  case FillMode::kSpread: return "spread";
  case FillMode::kInflight: return "inflight";
  }
  return "run";
}

std::string_view routingPolicyName(RoutingPolicy v) {
  return v == RoutingPolicy::kFillLeast ? "fill_least" : "fill_rr";
}

std::string_view compactionModeName(CompactionMode v) {
  switch (v) {
  case CompactionMode::kOff: return "off";
  case CompactionMode::kEager: return "eager";
  case CompactionMode::kScheduled: return "scheduled";
  }
  return "eager";
}

Result<FillMode> parseFillMode(std::string_view s) {
  for (FillMode m : {FillMode::kRun, FillMode::kSpread, FillMode::kInflight})
    if (fillModeName(m) == s)
      return m;
  return invalidArgument() << "fill mode '" << s << "' is not one of run, spread, inflight";
}

Result<RoutingPolicy> parseRoutingPolicy(std::string_view s) {
  for (RoutingPolicy p : {RoutingPolicy::kFillLeast, RoutingPolicy::kFillRr})
    if (routingPolicyName(p) == s)
      return p;
  return invalidArgument() << "routing policy '" << s << "' is not one of fill_least, fill_rr";
}

Result<CompactionMode> parseCompactionMode(std::string_view s) {
  for (CompactionMode m :
       {CompactionMode::kOff, CompactionMode::kEager, CompactionMode::kScheduled})
    if (compactionModeName(m) == s)
      return m;
  return invalidArgument() << "compaction mode '" << s << "' is not one of off, eager, scheduled";
}

std::string ListenAddress::text() const {
  if (!enabled())
    return "";
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
         std::to_string(port);
}

Result<GatewayConfig> parseGatewayConfig(std::string_view text, const std::string &path,
                                         const Environment &env, const NodeGatewayValues *node) {
  const std::string file = path.empty() ? "gateway config" : path;
  yaml::Value root;
  if (!trim(text).empty()) {
    RS_ASSIGN_OR_RETURN(root, yaml::parse(text, file));
  }
  RS_RETURN_IF_ERROR(gateway_detail::checkKeys(root, file));
  if (!root.isMap()) {
    root = yaml::Value{};
    root.kind = yaml::Value::Kind::kMap;
  }
  GatewayConfig c;
  c.path = path;
  const bool file_lists_endpoints = root.find("endpoints") != nullptr;
  RS_RETURN_IF_ERROR(gateway_detail::applyEnvironment(env, root, c));
  if (node)
    gateway_detail::applyNodeValues(*node, file_lists_endpoints, env, root);
  RS_RETURN_IF_ERROR(gateway_detail::buildConfig(root, path, c));
  return c;
}

Result<GatewayConfig> loadGatewayConfig(const std::string &path, const Environment &env,
                                        const NodeGatewayValues *node) {
  RS_ASSIGN_OR_RETURN(std::string text, readWholeFile(path));
  return parseGatewayConfig(text, path, env, node);
}

std::string gatewayFilePath(const Environment &env) {
  if (auto it = env.find("REACTANT_GATEWAY_FILE"); it != env.end() && !it->second.empty())
    return it->second;
  std::error_code ec;
  if (std::filesystem::exists("/etc/reactantserver/gateway.yml", ec))
    return "/etc/reactantserver/gateway.yml";
  return "";
}

std::vector<std::pair<std::string, std::string>> effectiveGatewaySettings(const GatewayConfig &c) {
  Settings out;
  appendSettings(gatewayKeys(), c, "", out);
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace rs::config