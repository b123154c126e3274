//===- config/gateway_config.cc - gateway.yml and its environment ----------===//
#include "config/gateway_config.h"
#include "support/file.h"

#include "config/gateway_config_impl.h"
#include "support/text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

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
  config::ConfigValue root;
  if (!trim(text).empty()) {
    RS_ASSIGN_OR_RETURN(root, config::parseYaml(text, file));
  }
  RS_RETURN_IF_ERROR(gateway_detail::checkKeys(root, file));
  if (!root.isMap()) {
    root = config::ConfigValue{};
    root.kind = config::ConfigValue::Kind::kMap;
  }
  GatewayConfig c;
  c.path = path;
  const bool file_lists_endpoints = root.find("endpoints") != nullptr;
  RS_RETURN_IF_ERROR(gateway_detail::applyEnvironment(env, root, c));
  if (node)
    gateway_detail::applyNodeValues(*node, file_lists_endpoints, env, root);
  RS_RETURN_IF_ERROR(gateway_detail::readProcessSettings(env, c));
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
  std::vector<std::pair<std::string, std::string>> out;
  auto add = [&](std::string key, std::string value) { out.emplace_back(key, value); };
  auto num = [](double v) {
    std::ostringstream os;
    os << v;
    return os.str();
  };
  auto list = [](const std::vector<std::string> &v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
      s += (i ? ", " : "") + v[i];
    return s + "]";
  };
  auto replicas = [](int64_t r) {
    return r == kAllReplicas ? std::string("all") : std::to_string(r);
  };
  const SchedulingConfig &s = c.scheduling;
  add("endpoints", list(c.endpoints));
  add("metrics_endpoints", list(c.metrics_endpoints));
  add("worker_names", list(c.worker_names));
  add("listen.grpc", c.listen_grpc.text());
  add("listen.http", c.listen_http.text());
  add("listen.metrics", c.listen_metrics.text());
  add("grpc.max_recv_msg_bytes", std::to_string(c.max_recv_msg_bytes));
  add("grpc.max_send_msg_bytes", std::to_string(c.max_send_msg_bytes));
  add("grpc.max_concurrent_requests_per_worker",
      std::to_string(c.max_concurrent_requests_per_worker));
  add("worker_client.request_timeout_seconds", num(c.request_timeout_seconds));
  add("worker_client.max_concurrent_streams", std::to_string(c.max_concurrent_streams));
  add("logging.level", c.logging_level);
  add("logging.format", c.logging_format);
  add("scheduling.mode", std::string(schedulingModeName(s.mode)));
  add("scheduling.work_basis", std::string(workBasisName(s.work_basis)));
  add("scheduling.rebalance_compute_seconds", num(s.rebalance_compute_seconds));
  add("scheduling.first_rebalance_compute_seconds", num(s.first_rebalance_compute_seconds));
  add("scheduling.ema_halflife_compute_seconds", num(s.ema_halflife_compute_seconds));
  add("scheduling.hysteresis", num(s.hysteresis));
  add("scheduling.max_worker_share", num(s.max_worker_share));
  add("scheduling.default_replicas", replicas(s.default_replicas));
  add("scheduling.routing_fill_factor", num(s.routing_fill_factor));
  add("scheduling.routing_policy", std::string(routingPolicyName(s.routing_policy)));
  add("scheduling.routing_fill_mode", std::string(fillModeName(s.routing_fill_mode)));
  add("scheduling.forbid_memory_oversubscription",
      s.forbid_memory_oversubscription ? "true" : "false");
  add("scheduling.compaction_mode", std::string(compactionModeName(s.compaction_mode)));
  add("scheduling.compaction_interval", std::to_string(s.compaction_interval));
  for (const auto &[name, m] : s.models) {
    const std::string base = "scheduling.models." + name;
    add(base + ".replicas", m.replicas == 0 ? "default" : replicas(m.replicas));
    add(base + ".fill_mode", m.fill_mode ? std::string(fillModeName(*m.fill_mode)) : "inherit");
    add(base + ".fill_factor", m.fill_factor ? num(*m.fill_factor) : "inherit");
  }
  add("startup_wait_seconds", num(c.startup_wait_seconds));
  add("health_interval_seconds", num(c.health_interval_seconds));
  add("wedge_exit_rounds", std::to_string(c.wedge_exit_rounds));
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace rs::config