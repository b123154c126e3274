//===- node/node_plan.h - What a node runs: workers, devices, ports ---------===//
//
// Turns a node file (config/node_config.h), the detected GPUs (gpu_detect.h), the CPUs
// this process may use and the environment into the supervisor's plan
// (reference-system.md section 9):
//
// Role: `--role`, else REACTANT_ROLE, else the node file's `role:`, else all. `all` runs
// the workers plus the embedded gateway when there are two or more; `workers` only the
// workers; `gateway` only the gateway (pointed at the node's workers).
//
// Workers: with a `workers:` list, one per entry; a worker whose resolved runtime.backend
// is cuda takes a GPU from the detected list (its `gpu:` index, else the next one by
// position), a cpu one none. Without a list: one worker per detected GPU when the backend
// is cuda, else REACTANT_CPU_WORKERS CPU workers (default 1), named worker0, worker1...
// No GPU with backend cuda makes CPU workers (and an advisory).
//
// Each worker child gets: REACTANT_WORKER_NAME; its GPU vendor's visible-devices variable
// (pjrt/vendor_profile.h; CUDA_VISIBLE_DEVICES) = its one device, with
// INFERENCE_SERVER_RUNTIME_DEVICE_ORDINAL=0, and every other registered vendor's = "" (a
// CPU worker gets "" in all of them); a CPU worker
// is pinned to its share of the allowed CPUs (contiguous, sizes differing by at most one;
// one CPU each, reused in turn, when there are more workers than CPUs) and, unless its
// runtime.cpu_threads is set, INFERENCE_SERVER_RUNTIME_CPU_THREADS = its share
// (REACTANT_WORKER_THREADS, when set, is used verbatim for every worker).
//
// Ports: a sole worker in role all binds the public ports itself
// (INFERENCE_SERVER_ENDPOINTS_PORT / _METRICS_PORT / _HTTP_PORT = the gateway's
// listen.grpc / listen.metrics / listen.http ports). Two or more: worker i keeps
// base_port + i (or its `port:`) and metrics_base_port + i (set as its
// INFERENCE_SERVER_ENDPOINTS_PORT / _METRICS_PORT when the supervisor's environment has
// those variables, which belong to one worker: config/node_config.h), its REST port is
// turned off (INFERENCE_SERVER_ENDPOINTS_HTTP_PORT=0; the gateway serves REST), and the gateway
// listens on the public ports with endpoints 127.0.0.1:<port> (or the worker's `host:`),
// unless the gateway file lists endpoints itself.
//
// The gateway's configuration: REACTANT_GATEWAY_FILE, else /etc/reactantserver/gateway.yml
// when present, else defaults, with REACTANT_GATEWAY_* variables applied as usual, and the
// workers' values (config::NodeGatewayValues): their endpoints, names and metrics
// endpoints unless the file or REACTANT_GATEWAY_WORKERS lists endpoints, their `grpc:`
// message limits unless REACTANT_GATEWAY_GRPC_MAX_*_MSG_BYTES is set.
//
// Errors: InvalidArgument for a worker's `gpu:` beyond the detected devices, two workers
// on one device, more GPU workers than devices, a bad REACTANT_ROLE or
// REACTANT_CPU_WORKERS; the node file's and gateway file's own errors.
// Thread safety: pure functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "config/gateway_config.h"
#include "config/node_config.h"
#include "support/status.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rs::node {

struct WorkerPlan {
  std::string name;
  int64_t index = 0;
  std::string device;    // its vendor's visible-devices value ("" for a CPU worker)
  std::vector<int> cpus; // sched_setaffinity set (empty: inherit)
  /// Environment set for the child (on top of the node's), sorted by name.
  std::vector<std::pair<std::string, std::string>> env;
  std::string grpc_endpoint;    // host:port the gateway reaches it at
  std::string metrics_endpoint; // "" when its metrics port is off
};

struct NodePlan {
  config::Role role = config::Role::kAll;
  bool gpu_node = false;
  std::vector<WorkerPlan> workers;
  /// The embedded gateway, when the role runs one.
  std::optional<config::GatewayConfig> gateway;
  std::vector<std::string> advisories; // logged as warnings
};

struct PlanInputs {
  config::Environment env;
  std::vector<std::string> gpus; // detectGpus()
  std::vector<int> cpus;         // CPUs this process may run on
  std::optional<config::Role> role_flag;
};

/// Parses "all" | "workers" | "gateway".
Result<config::Role> parseRole(std::string_view s);

/// The plan (rules above).
Result<NodePlan> planNode(const config::NodeConfig &node, const PlanInputs &inputs);

} // namespace rs::node
