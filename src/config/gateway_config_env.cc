//===- config/gateway_config_env.cc - gateway.yml keys and the environment ===//
#include "config/gateway_config_impl.h"
#include "support/text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace rs::config::gateway_detail {
namespace {

using config::ConfigValue;

/// Leaf keys of gateway.yml (scheduling.models.<name>.* is checked separately).
constexpr std::string_view kLeafKeys[] = {
    "endpoints",
    "grpc.max_concurrent_requests_per_worker",
    "grpc.max_recv_msg_bytes",
    "grpc.max_send_msg_bytes",
    "listen.grpc",
    "listen.http",
    "listen.metrics",
    "logging.format",
    "logging.level",
    "metrics_endpoints",
    "scheduling.compaction_interval",
    "scheduling.compaction_mode",
    "scheduling.default_replicas",
    "scheduling.ema_halflife_compute_seconds",
    "scheduling.first_rebalance_compute_seconds",
    "scheduling.forbid_memory_oversubscription",
    "scheduling.hysteresis",
    "scheduling.max_worker_share",
    "scheduling.mode",
    "scheduling.rebalance_compute_seconds",
    "scheduling.routing_fill_factor",
    "scheduling.routing_fill_mode",
    "scheduling.routing_policy",
    "scheduling.work_basis",
    "tls.cert_file",
    "tls.client_ca_file",
    "tls.key_file",
    "worker_client.max_concurrent_streams",
    "worker_client.request_timeout_seconds",
    "worker_names",
};
constexpr std::string_view kSections[] = {"grpc",       "listen", "logging",
                                          "scheduling", "tls",    "worker_client"};
constexpr std::string_view kModelKeys[] = {"fill_factor", "fill_mode", "replicas"};
/// List keys and the variables that replace them (comma-separated).
constexpr std::pair<std::string_view, std::string_view> kListVars[] = {
    {"WORKERS", "endpoints"},
    {"WORKER_METRICS", "metrics_endpoints"},
    {"WORKER_NAMES", "worker_names"},
};
constexpr std::string_view kProcessVars[] = {"FILE", "HEALTH_INTERVAL_SECONDS",
                                             "STARTUP_WAIT_SECONDS", "WEDGE_EXIT_ROUNDS"};

bool isLeaf(std::string_view path) {
  return std::find(std::begin(kLeafKeys), std::end(kLeafKeys), path) != std::end(kLeafKeys);
}

std::string envVarFor(std::string_view path) {
  std::string var(kEnvPrefix);
  for (char c : path)
    var += c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return var;
}

ConfigValue envScalar(const std::string &var, const std::string &value) {
  ConfigValue v = ConfigValue::scalarValue(value, "environment override " + var);
  v.from_env = true;
  return v;
}

} // namespace

/// Error prefix: "<file>: <key>: " or "environment override VAR: ".
StatusBuilder keyError(const std::string &file, const ConfigValue &v) {
  StatusBuilder b = invalidArgument();
  if (v.from_env)
    b << v.origin << ": ";
  else
    b << (file.empty() ? "gateway config" : file) << ": " << v.origin << ": ";
  return b;
}

Status checkKeys(const ConfigValue &root, const std::string &file) {
  if (root.isNull())
    return Status::ok();
  if (!root.isMap())
    return invalidArgument() << file << ": expected a map at the top level, got "
                             << root.kindName();
  for (const auto &[key, value] : root.map) {
    const bool section =
        std::find(std::begin(kSections), std::end(kSections), key) != std::end(kSections);
    if (!section) {
      if (!isLeaf(key))
        return invalidArgument() << file << ": unknown key '" << key << "'";
      continue;
    }
    if (value.isNull())
      continue;
    if (!value.isMap())
      return keyError(file, value) << "expected a map, got " << value.kindName();
    for (const auto &[child, child_value] : value.map) {
      const std::string path = key + "." + child;
      if (path == "scheduling.models") {
        if (child_value.isNull())
          continue;
        if (!child_value.isMap())
          return keyError(file, child_value)
                 << "expected a map of model name to settings, got " << child_value.kindName();
        for (const auto &[model, settings] : child_value.map) {
          if (settings.isNull())
            continue;
          if (!settings.isMap())
            return keyError(file, settings) << "expected a map {replicas, fill_mode, "
                                               "fill_factor}, got "
                                            << settings.kindName();
          for (const auto &[mkey, mvalue] : settings.map)
            if (std::find(std::begin(kModelKeys), std::end(kModelKeys), mkey) ==
                std::end(kModelKeys))
              return invalidArgument()
                     << file << ": unknown key 'scheduling.models." << model << "." << mkey << "'";
        }
        continue;
      }
      if (!isLeaf(path))
        return invalidArgument() << file << ": unknown key '" << path << "'";
    }
  }
  return Status::ok();
}

/// Applies REACTANT_GATEWAY_* variables to `root` (keys) and `out` (process settings).
Status applyEnvironment(const Environment &env, ConfigValue &root, GatewayConfig &out) {
  for (const auto &[var, value] : env) {
    if (!var.starts_with(kEnvPrefix))
      continue;
    const std::string_view name = std::string_view(var).substr(kEnvPrefix.size());
    if (std::find(std::begin(kProcessVars), std::end(kProcessVars), name) !=
        std::end(kProcessVars)) {
      if (name != "FILE")
        out.env_overrides.emplace_back(var, value);
      continue;
    }
    bool done = false;
    for (const auto &[list_var, path] : kListVars) {
      if (name != list_var)
        continue;
      ConfigValue list;
      list.kind = ConfigValue::Kind::kList;
      list.origin = "environment override " + var;
      list.from_env = true;
      std::string_view rest = value;
      while (!rest.empty()) {
        size_t comma = rest.find(',');
        std::string_view item = trim(rest.substr(0, comma));
        if (!item.empty())
          list.list.push_back(envScalar(var, std::string(item)));
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      }
      config::setPath(root, path, std::move(list));
      out.env_overrides.emplace_back(var, value);
      done = true;
    }
    if (done)
      continue;
    std::string_view match;
    for (std::string_view path : kLeafKeys)
      if (envVarFor(path) == var && path != "endpoints" && path != "metrics_endpoints" &&
          path != "worker_names")
        match = path;
    if (match.empty())
      return invalidArgument() << "unknown environment variable " << var
                               << " (REACTANT_GATEWAY_ + a gateway.yml key upper-cased with "
                                  "'.' -> '_', or WORKERS, WORKER_METRICS, WORKER_NAMES, FILE, "
                                  "STARTUP_WAIT_SECONDS, HEALTH_INTERVAL_SECONDS, "
                                  "WEDGE_EXIT_ROUNDS)";
    config::setPath(root, match, envScalar(var, value));
    out.env_overrides.emplace_back(var, value);
  }
  std::sort(out.env_overrides.begin(), out.env_overrides.end());
  return Status::ok();
}

void applyNodeValues(const NodeGatewayValues &node, bool file_lists_endpoints,
                     const Environment &env, ConfigValue &root) {
  const std::string origin = "the node's workers";
  auto list = [&](const std::vector<std::string> &items) {
    ConfigValue v;
    v.kind = ConfigValue::Kind::kList;
    v.origin = origin;
    for (const std::string &item : items)
      v.list.push_back(ConfigValue::scalarValue(item, origin));
    return v;
  };
  const std::string prefix(kEnvPrefix);
  if (!file_lists_endpoints && !env.count(prefix + "WORKERS")) {
    config::setPath(root, "endpoints", list(node.endpoints));
    config::setPath(root, "worker_names", list(node.worker_names));
    if (node.metrics_endpoints)
      config::setPath(root, "metrics_endpoints", list(*node.metrics_endpoints));
  }
  if (!env.count(prefix + "GRPC_MAX_RECV_MSG_BYTES"))
    config::setPath(root, "grpc.max_recv_msg_bytes",
                    ConfigValue::scalarValue(std::to_string(node.max_recv_msg_bytes), origin));
  if (!env.count(prefix + "GRPC_MAX_SEND_MSG_BYTES"))
    config::setPath(root, "grpc.max_send_msg_bytes",
                    ConfigValue::scalarValue(std::to_string(node.max_send_msg_bytes), origin));
}

Status readProcessSettings(const Environment &env, GatewayConfig &out) {
  auto number = [&](const char *name, double *dst, bool allow_forever) -> Status {
    auto it = env.find(std::string(kEnvPrefix) + name);
    if (it == env.end())
      return Status::ok();
    const std::string s = lower(trim(it->second));
    if (allow_forever && (s == "inf" || s == "forever" || s == "-1")) {
      *dst = std::numeric_limits<double>::infinity();
      return Status::ok();
    }
    double x = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(x) || x < 0)
      return invalidArgument() << "environment override " << it->first << ": expected a number >= 0"
                               << (allow_forever ? " or inf" : "") << ", got '" << it->second
                               << "'";
    *dst = x;
    return Status::ok();
  };
  RS_RETURN_IF_ERROR(number("STARTUP_WAIT_SECONDS", &out.startup_wait_seconds, true));
  RS_RETURN_IF_ERROR(number("HEALTH_INTERVAL_SECONDS", &out.health_interval_seconds, false));
  if (out.health_interval_seconds <= 0)
    return invalidArgument() << "environment override REACTANT_GATEWAY_HEALTH_INTERVAL_SECONDS: "
                                "must be > 0";
  double rounds = static_cast<double>(out.wedge_exit_rounds);
  RS_RETURN_IF_ERROR(number("WEDGE_EXIT_ROUNDS", &rounds, false));
  if (rounds != std::floor(rounds))
    return invalidArgument() << "environment override REACTANT_GATEWAY_WEDGE_EXIT_ROUNDS: "
                                "expected an integer, got "
                             << rounds;
  out.wedge_exit_rounds = static_cast<int64_t>(rounds);
  return Status::ok();
}

} // namespace rs::config::gateway_detail
