//===- node/node_plan.cc - What a node runs: workers, devices, ports --------===//
#include "node/node_plan.h"

#include "pjrt/vendor_profile.h"
#include "support/net.h"

#include <algorithm>
#include <charconv>
#include <fmt/ranges.h>
#include <map>
#include <set>

namespace rs::node {
namespace {

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

/// Role: `--role`, else REACTANT_ROLE, else the node file's `role:`, else all.
Result<config::Role> resolveRole(const config::NodeConfig &node, const PlanInputs &in) {
  if (in.role_flag)
    return *in.role_flag;
  if (auto it = in.env.find("REACTANT_ROLE"); it != in.env.end() && !it->second.empty()) {
    Result<config::Role> r = parseRole(it->second);
    if (!r.isOk())
      return r.status().withPrefix("REACTANT_ROLE");
    return *r;
  }
  return node.role.value_or(config::Role::kAll);
}

/// REACTANT_CPU_WORKERS: a count in [1, 1024].
Result<size_t> cpuWorkerCount(const std::string &v) {
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || ptr != v.data() + v.size() || n < 1 || n > 1024)
    return invalidArgument() << "REACTANT_CPU_WORKERS: expected a count in [1, 1024], got '" << v
                             << "'";
  return static_cast<size_t>(n);
}

/// Every worker resolved: one per `workers:` entry, else one per GPU (backend cuda) or
/// REACTANT_CPU_WORKERS (default 1).
Result<std::vector<config::WorkerConfig>> resolveWorkers(const config::NodeConfig &node,
                                                         const PlanInputs &in) {
  std::vector<config::WorkerConfig> resolved;
  size_t count = node.workers.size();
  if (node.workers.empty()) {
    RS_ASSIGN_OR_RETURN(config::WorkerConfig first, config::resolveWorker(node, 0));
    count = 1;
    if (first.runtime.backend != config::Backend::kCpu && !in.gpus.empty()) {
      count = in.gpus.size();
    } else if (auto it = in.env.find("REACTANT_CPU_WORKERS"); it != in.env.end()) {
      RS_ASSIGN_OR_RETURN(count, cpuWorkerCount(it->second));
    }
    resolved.push_back(std::move(first));
  }
  for (size_t i = resolved.size(); i < count; ++i) {
    RS_ASSIGN_OR_RETURN(config::WorkerConfig w,
                        config::resolveWorker(node, static_cast<int64_t>(i)));
    resolved.push_back(std::move(w));
  }
  if (resolved.size() > 1) {
    // Several workers keep the ports the file gives them: a port variable of the
    // environment is one worker's (config/node_config.h), and planWorker overrides it.
    config::NodeConfig file_ports = node;
    file_ports.env = config::withoutWorkerPortVariables(node.env);
    for (size_t i = 0; i < resolved.size(); ++i) {
      RS_ASSIGN_OR_RETURN(resolved[i], config::resolveWorker(file_ports, static_cast<int64_t>(i)));
    }
  }
  return resolved;
}

/// The GPU of each worker ("" for a cpu one): its `gpu:` index, else the next by position.
/// Sets plan.gpu_node and the advisories for cuda without a GPU and for idle GPUs.
Result<std::vector<std::string>> assignGpus(const config::NodeConfig &node, const PlanInputs &in,
                                            const std::vector<config::WorkerConfig> &resolved,
                                            NodePlan &plan) {
  std::vector<std::string> device(resolved.size());
  std::set<std::string> used;
  size_t next_position = 0;
  bool cuda_without_gpu = false;
  for (size_t i = 0; i < resolved.size(); ++i) {
    const config::WorkerConfig &w = resolved[i];
    if (w.runtime.backend == config::Backend::kCpu)
      continue;
    if (in.gpus.empty()) {
      cuda_without_gpu = true;
      continue;
    }
    size_t at = w.gpu ? static_cast<size_t>(*w.gpu) : next_position++;
    if (at >= in.gpus.size())
      return invalidArgument() << node.path << ": worker '" << w.worker_name << "' needs GPU " << at
                               << " but the node has " << in.gpus.size() << " ("
                               << fmt::to_string(fmt::join(in.gpus, ",")) << ")";
    if (!used.insert(in.gpus[at]).second)
      return invalidArgument() << node.path << ": worker '" << w.worker_name << "' and another "
                               << "worker both use GPU '" << in.gpus[at] << "'";
    device[i] = in.gpus[at];
  }
  plan.gpu_node = !used.empty();
  if (cuda_without_gpu)
    plan.advisories.push_back("runtime.backend is cuda but no GPU was found; the workers run "
                              "on the cpu (runtime.allow_cpu_fallback)");
  if (plan.gpu_node && in.gpus.size() > used.size())
    plan.advisories.push_back(std::to_string(in.gpus.size() - used.size()) +
                              " visible GPU(s) have no worker");
  return device;
}

/// The gateway's configuration (also the public ports of a sole worker): its file and the
/// environment, with the workers' endpoints and grpc limits as typed values.
Result<config::GatewayConfig> planGateway(const PlanInputs &in,
                                          const std::vector<config::WorkerConfig> &resolved) {
  config::NodeGatewayValues values;
  bool all_metrics = true;
  std::vector<std::string> metrics;
  for (const config::WorkerConfig &w : resolved) {
    const std::string host = reachableHost(w);
    values.endpoints.push_back(formatHostPort(host, w.endpoints.port));
    values.worker_names.push_back(w.worker_name);
    if (w.endpoints.metrics_port > 0)
      metrics.push_back(formatHostPort(host, w.endpoints.metrics_port));
    else
      all_metrics = false;
  }
  if (all_metrics)
    values.metrics_endpoints = std::move(metrics);
  values.max_recv_msg_bytes = resolved.front().grpc.max_recv_msg_bytes;
  values.max_send_msg_bytes = resolved.front().grpc.max_send_msg_bytes;
  values.cors_allowed_origins = resolved.front().endpoints.cors_allowed_origins;
  const std::string file = config::gatewayFilePath(in.env);
  return file.empty() ? config::parseGatewayConfig("", "", in.env, &values)
                      : config::loadGatewayConfig(file, in.env, &values);
}

/// The CPU share of each cpu worker (in worker order), from the CPUs this process may use.
std::vector<std::vector<int>> cpuSharesOf(const PlanInputs &in,
                                          const std::vector<std::string> &device) {
  size_t cpu_workers = 0;
  for (const std::string &d : device)
    if (d.empty())
      ++cpu_workers;
  return cpuShares(in.cpus, cpu_workers);
}

/// One worker child: its device or CPUs, environment and ports. `sole`: the only worker of
/// role all, on the gateway's public ports; `many`: two or more workers (REST off).
WorkerPlan planWorker(const config::WorkerConfig &w, const std::string &device,
                      std::vector<int> cpus, const PlanInputs &in,
                      const config::GatewayConfig &gateway, bool sole, bool many) {
  WorkerPlan wp;
  wp.name = w.worker_name;
  wp.index = w.worker_index;
  wp.device = device;
  setEnv(wp.env, "REACTANT_WORKER_NAME", w.worker_name);
  // Its device through its vendor's visible-devices variable; every other vendor's devices
  // hidden, so a CPU worker sees no GPU.
  const pjrt::VendorProfile *vendor =
      pjrt::findVendorProfile(config::backendName(w.runtime.backend));
  for (const pjrt::VendorProfile *p : pjrt::vendorProfiles())
    setEnv(wp.env, std::string(p->visibleDevicesVariable()), p == vendor ? wp.device : "");
  const auto threads_env = in.env.find("REACTANT_WORKER_THREADS");
  if (!wp.device.empty()) {
    setEnv(wp.env, "INFERENCE_SERVER_RUNTIME_DEVICE_ORDINAL", "0");
  } else {
    wp.cpus = std::move(cpus);
    if (threads_env == in.env.end() && w.runtime.cpu_threads == 0 && !wp.cpus.empty())
      setEnv(wp.env, "INFERENCE_SERVER_RUNTIME_CPU_THREADS", std::to_string(wp.cpus.size()));
  }
  if (threads_env != in.env.end())
    setEnv(wp.env, "INFERENCE_SERVER_RUNTIME_CPU_THREADS", threads_env->second);
  int64_t grpc_port = w.endpoints.port, metrics_port = w.endpoints.metrics_port;
  if (sole) {
    grpc_port = gateway.listen_grpc.port;
    setEnv(wp.env, "INFERENCE_SERVER_ENDPOINTS_PORT", std::to_string(grpc_port));
    if (gateway.listen_metrics.enabled()) {
      metrics_port = gateway.listen_metrics.port;
      setEnv(wp.env, "INFERENCE_SERVER_ENDPOINTS_METRICS_PORT", std::to_string(metrics_port));
    }
    setEnv(wp.env, "INFERENCE_SERVER_ENDPOINTS_HTTP_PORT",
           std::to_string(gateway.listen_http.enabled() ? gateway.listen_http.port : 0));
  } else if (many) {
    setEnv(wp.env, "INFERENCE_SERVER_ENDPOINTS_HTTP_PORT", "0");
    // An inherited port variable would give every worker the same port: each gets its own.
    for (const auto &[var, port] :
         {std::pair{"INFERENCE_SERVER_ENDPOINTS_PORT", grpc_port},
          std::pair{"INFERENCE_SERVER_ENDPOINTS_METRICS_PORT", metrics_port}})
      if (in.env.count(var))
        setEnv(wp.env, var, std::to_string(port));
  }
  std::sort(wp.env.begin(), wp.env.end());
  const std::string host = reachableHost(w);
  wp.grpc_endpoint = formatHostPort(host, grpc_port);
  wp.metrics_endpoint = metrics_port > 0 ? formatHostPort(host, metrics_port) : "";
  return wp;
}

/// Advisories: worker ports on the embedded gateway's listen ports.
void portAdvisories(const std::vector<config::WorkerConfig> &resolved, NodePlan &plan) {
  if (!plan.gateway || plan.role != config::Role::kAll)
    return;
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
  RS_ASSIGN_OR_RETURN(plan.role, resolveRole(node, in));
  RS_ASSIGN_OR_RETURN(std::vector<config::WorkerConfig> resolved, resolveWorkers(node, in));
  RS_ASSIGN_OR_RETURN(std::vector<std::string> device, assignGpus(node, in, resolved, plan));
  RS_ASSIGN_OR_RETURN(config::GatewayConfig gateway, planGateway(in, resolved));
  const bool sole = resolved.size() == 1 && plan.role == config::Role::kAll;
  if (plan.role == config::Role::kGateway || (plan.role == config::Role::kAll && !sole))
    plan.gateway = gateway;
  if (plan.role != config::Role::kGateway) {
    std::vector<std::vector<int>> shares = cpuSharesOf(in, device);
    size_t cpu_index = 0;
    for (size_t i = 0; i < resolved.size(); ++i) {
      std::vector<int> cpus = device[i].empty() ? shares[cpu_index++] : std::vector<int>{};
      plan.workers.push_back(planWorker(resolved[i], device[i], std::move(cpus), in, gateway, sole,
                                        resolved.size() > 1));
    }
  }
  portAdvisories(resolved, plan);
  return plan;
}

} // namespace rs::node
