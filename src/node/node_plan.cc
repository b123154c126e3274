//===- node/node_plan.cc - What a node runs: workers, devices, ports --------===//
#include "node/node_plan.h"

#include "config/tree.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

namespace rs::node {
namespace {

std::string joined(const std::vector<std::string> &v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i)
    out += (i ? "," : "") + v[i];
  return out;
}

/// The address the gateway reaches a worker at: its `host:`, else its bind address
/// (127.0.0.1 for a wildcard bind).
std::string reachableHost(const config::WorkerConfig &w) {
  if (!w.node_host.empty())
    return w.node_host;
  const std::string &h = w.endpoints.host;
  if (h.empty() || h == "0.0.0.0" || h == "::" || h == "[::]")
    return "127.0.0.1";
  return h;
}

std::string hostPort(const std::string &host, int64_t port) {
  const bool v6 = host.find(':') != std::string::npos && host.front() != '[';
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

/// Splits `cpus` into `n` contiguous shares whose sizes differ by at most one; with more
/// workers than CPUs, one CPU each, reused in turn.
std::vector<std::vector<int>> cpuShares(const std::vector<int> &cpus, size_t n) {
  std::vector<std::vector<int>> out(n);
  if (cpus.empty())
    return out;
  if (n > cpus.size()) {
    for (size_t i = 0; i < n; ++i)
      out[i] = {cpus[i % cpus.size()]};
    return out;
  }
  const size_t base = cpus.size() / n, extra = cpus.size() % n;
  size_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t take = base + (i < extra ? 1 : 0);
    out[i].assign(cpus.begin() + static_cast<std::ptrdiff_t>(at),
                  cpus.begin() + static_cast<std::ptrdiff_t>(at + take));
    at += take;
  }
  return out;
}

void setEnv(std::vector<std::pair<std::string, std::string>> &env, const std::string &key,
            const std::string &value) {
  for (auto &[k, v] : env)
    if (k == key) {
      v = value;
      return;
    }
  env.emplace_back(key, value);
}

} // namespace

Result<config::Role> parseRole(std::string_view s) {
  if (s == "all")
    return config::Role::kAll;
  if (s == "workers")
    return config::Role::kWorkers;
  if (s == "gateway")
    return config::Role::kGateway;
  return invalidArgument() << "role '" << s << "' is not one of all, workers, gateway";
}

Result<NodePlan> planNode(const config::NodeConfig &node, const PlanInputs &in) {
  NodePlan plan;
  if (in.role_flag) {
    plan.role = *in.role_flag;
  } else if (auto it = in.env.find("REACTANT_ROLE"); it != in.env.end() && !it->second.empty()) {
    Result<config::Role> r = parseRole(it->second);
    if (!r.isOk())
      return r.status().withPrefix("REACTANT_ROLE");
    plan.role = *r;
  } else if (node.role) {
    plan.role = *node.role;
  }

  // Workers and their devices.
  std::vector<config::WorkerConfig> resolved;
  if (!node.workers.empty()) {
    for (size_t i = 0; i < node.workers.size(); ++i) {
      RS_ASSIGN_OR_RETURN(config::WorkerConfig w,
                          config::resolveWorker(node, static_cast<int64_t>(i)));
      resolved.push_back(std::move(w));
    }
  } else {
    RS_ASSIGN_OR_RETURN(config::WorkerConfig first, config::resolveWorker(node, 0));
    size_t count = 1;
    if (first.runtime.backend == config::Backend::kCuda && !in.gpus.empty()) {
      count = in.gpus.size();
    } else if (auto it = in.env.find("REACTANT_CPU_WORKERS"); it != in.env.end()) {
      int64_t n = 0;
      const std::string &v = it->second;
      auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (v.empty() || ec != std::errc() || ptr != v.data() + v.size() || n < 1 || n > 1024)
        return invalidArgument() << "REACTANT_CPU_WORKERS: expected a count in [1, 1024], got '"
                                 << v << "'";
      count = static_cast<size_t>(n);
    }
    resolved.push_back(std::move(first));
    for (size_t i = 1; i < count; ++i) {
      RS_ASSIGN_OR_RETURN(config::WorkerConfig w,
                          config::resolveWorker(node, static_cast<int64_t>(i)));
      resolved.push_back(std::move(w));
    }
  }

  std::vector<std::string> device(resolved.size());
  std::set<std::string> used;
  size_t next_position = 0, gpu_workers = 0;
  for (size_t i = 0; i < resolved.size(); ++i) {
    const config::WorkerConfig &w = resolved[i];
    if (w.runtime.backend != config::Backend::kCuda || in.gpus.empty())
      continue;
    size_t at = w.gpu ? static_cast<size_t>(*w.gpu) : next_position++;
    if (at >= in.gpus.size())
      return invalidArgument() << node.path << ": worker '" << w.worker_name << "' needs GPU " << at
                               << " but the node has " << in.gpus.size() << " (" << joined(in.gpus)
                               << ")";
    if (!used.insert(in.gpus[at]).second)
      return invalidArgument() << node.path << ": worker '" << w.worker_name << "' and another "
                               << "worker both use GPU '" << in.gpus[at] << "'";
    device[i] = in.gpus[at];
    ++gpu_workers;
  }
  plan.gpu_node = gpu_workers > 0;
  bool cuda_without_gpu = false;
  for (const config::WorkerConfig &w : resolved)
    cuda_without_gpu =
        cuda_without_gpu || (w.runtime.backend == config::Backend::kCuda && in.gpus.empty());
  if (cuda_without_gpu)
    plan.advisories.push_back("runtime.backend is cuda but no GPU was found; the workers run "
                              "on the cpu (runtime.allow_cpu_fallback)");
  if (plan.gpu_node && in.gpus.size() > used.size())
    plan.advisories.push_back(std::to_string(in.gpus.size() - used.size()) +
                              " visible GPU(s) have no worker");

  // The gateway's configuration (also the public ports of a sole worker).
  config::Environment genv = in.env;
  const std::string gateway_file = config::gatewayFilePath(genv);
  bool file_lists_endpoints = false;
  if (!gateway_file.empty()) {
    RS_ASSIGN_OR_RETURN(config::ConfigValue root, config::loadYamlFile(gateway_file));
    file_lists_endpoints = root.find("endpoints") != nullptr;
  }
  std::vector<std::string> endpoints, metrics, names;
  bool all_metrics = true;
  for (const config::WorkerConfig &w : resolved) {
    const std::string host = reachableHost(w);
    endpoints.push_back(hostPort(host, w.endpoints.port));
    names.push_back(w.worker_name);
    if (w.endpoints.metrics_port > 0)
      metrics.push_back(hostPort(host, w.endpoints.metrics_port));
    else
      all_metrics = false;
  }
  if (!file_lists_endpoints && !genv.count("REACTANT_GATEWAY_WORKERS")) {
    genv["REACTANT_GATEWAY_WORKERS"] = joined(endpoints);
    genv["REACTANT_GATEWAY_WORKER_NAMES"] = joined(names);
    if (all_metrics)
      genv["REACTANT_GATEWAY_WORKER_METRICS"] = joined(metrics);
  }
  genv.emplace("REACTANT_GATEWAY_GRPC_MAX_RECV_MSG_BYTES",
               std::to_string(resolved.front().grpc.max_recv_msg_bytes));
  genv.emplace("REACTANT_GATEWAY_GRPC_MAX_SEND_MSG_BYTES",
               std::to_string(resolved.front().grpc.max_send_msg_bytes));
  Result<config::GatewayConfig> gcfg = gateway_file.empty()
                                           ? config::parseGatewayConfig("", "", genv)
                                           : config::loadGatewayConfig(gateway_file, genv);
  if (!gcfg.isOk())
    return gcfg.status();

  const bool sole = resolved.size() == 1 && plan.role == config::Role::kAll;
  if (plan.role == config::Role::kGateway || (plan.role == config::Role::kAll && !sole))
    plan.gateway = *gcfg;

  // Worker children.
  if (plan.role != config::Role::kGateway) {
    std::vector<int> cpu_pool;
    size_t cpu_workers = 0;
    for (size_t i = 0; i < resolved.size(); ++i)
      if (device[i].empty())
        ++cpu_workers;
    std::vector<std::vector<int>> shares = cpuShares(in.cpus, cpu_workers);
    size_t cpu_index = 0;
    const auto threads_env = in.env.find("REACTANT_WORKER_THREADS");
    for (size_t i = 0; i < resolved.size(); ++i) {
      const config::WorkerConfig &w = resolved[i];
      WorkerPlan wp;
      wp.name = w.worker_name;
      wp.index = w.worker_index;
      wp.device = device[i];
      setEnv(wp.env, "REACTANT_WORKER_NAME", w.worker_name);
      setEnv(wp.env, "CUDA_VISIBLE_DEVICES", wp.device);
      if (!wp.device.empty()) {
        setEnv(wp.env, "INFERENCE_SERVER_RUNTIME_DEVICE_ORDINAL", "0");
      } else {
        wp.cpus = shares[cpu_index++];
        if (threads_env == in.env.end() && w.runtime.cpu_threads == 0 && !wp.cpus.empty())
          setEnv(wp.env, "INFERENCE_SERVER_RUNTIME_CPU_THREADS", std::to_string(wp.cpus.size()));
      }
      if (threads_env != in.env.end())
        setEnv(wp.env, "INFERENCE_SERVER_RUNTIME_CPU_THREADS", threads_env->second);
      int64_t grpc_port = w.endpoints.port, metrics_port = w.endpoints.metrics_port;
      if (sole) {
        grpc_port = gcfg->listen_grpc.port;
        setEnv(wp.env, "INFERENCE_SERVER_ENDPOINTS_PORT", std::to_string(grpc_port));
        if (gcfg->listen_metrics.enabled()) {
          metrics_port = gcfg->listen_metrics.port;
          setEnv(wp.env, "INFERENCE_SERVER_ENDPOINTS_METRICS_PORT", std::to_string(metrics_port));
        }
        setEnv(wp.env, "INFERENCE_SERVER_ENDPOINTS_HTTP_PORT",
               std::to_string(gcfg->listen_http.enabled() ? gcfg->listen_http.port : 0));
      } else if (resolved.size() > 1) {
        setEnv(wp.env, "INFERENCE_SERVER_ENDPOINTS_HTTP_PORT", "0");
      }
      std::sort(wp.env.begin(), wp.env.end());
      const std::string host = reachableHost(w);
      wp.grpc_endpoint = hostPort(host, grpc_port);
      wp.metrics_endpoint = metrics_port > 0 ? hostPort(host, metrics_port) : "";
      plan.workers.push_back(std::move(wp));
    }
  }

  // Advisories: worker ports on the gateway's listen ports.
  if (plan.gateway && plan.role == config::Role::kAll) {
    std::map<int, std::string> listen;
    listen[plan.gateway->listen_grpc.port] = "listen.grpc";
    if (plan.gateway->listen_metrics.enabled())
      listen[plan.gateway->listen_metrics.port] = "listen.metrics";
    if (plan.gateway->listen_http.enabled())
      listen[plan.gateway->listen_http.port] = "listen.http";
    for (const config::WorkerConfig &w : resolved)
      for (int64_t port : {w.endpoints.port, w.endpoints.metrics_port})
        if (auto it = listen.find(static_cast<int>(port)); port > 0 && it != listen.end())
          plan.advisories.push_back("worker '" + w.worker_name + "' port " + std::to_string(port) +
                                    " collides with the gateway's " + it->second);
  }
  return plan;
}

} // namespace rs::node
