//===- config/node_config.h - Node file and per-worker resolution ----------===//
//
// The node file (reference-system.md §2.1) is the only worker configuration format:
//
//   model_repo: model_repo          # required; relative paths are against the file's folder
//   base_port: 8001                 # worker i: endpoints.port = base_port + i
//   metrics_base_port: 8002         # worker i: endpoints.metrics_port = metrics_base_port + i
//   gpus: auto                      # supervisor: auto | count >= 0 | [ordinal or UUID, ...]
//   role: all                       # supervisor: all | workers | gateway
//   shared_host_weights: false      # copied into each worker's runtime unless it sets it
//   global: {runtime: {...}, scheduler: {...}, endpoints: {...}, grpc: {...}, ...}
//   workers:                        # optional; without it workers are "worker0".."workerN-1"
//     - {name: gpu0, gpu: 0, host: 10.0.0.5, port: 9001, runtime: {numerics: f32}}
//   models: {bert: [gpu0]}          # scheduler.models.bert.residency: device on gpu0
//   gateway: {...}                  # read by the gateway only; ignored here
//
// Resolution of worker i (resolveWorker): `global` deep-merged with the worker's override
// blocks; endpoints.port from the worker's `port:` or base_port + i; metrics_port from
// metrics_base_port + i; runtime.device_ordinal from `gpu:`; node shared_host_weights; the
// models map; then INFERENCE_SERVER_* environment overrides (§2.3: one variable per key,
// INFERENCE_SERVER_ + the dotted key upper-cased with '.' -> '_', e.g.
// INFERENCE_SERVER_RUNTIME_NUMERICS; bools are true for 1|true|yes|on, case-insensitive,
// anything else false; every key, its type, range and variable is a row of
// config/keys.h; INFERENCE_SERVER_MODEL_DIRS and _MODELS_INCLUDE are ':'-separated
// lists; INFERENCE_SERVER_RUNTIME_XLA_FLAGS is "name=value" items separated by spaces or
// commas, leading "--" optional); then typing, range validation and the regulated profile
// (runtime.profile: regulated sets runtime.batch_sizes: largest, scheduler.coalescing:
// false and runtime.xla_flags.xla_gpu_exclude_nondeterministic_ops: true, each only when
// not set explicitly in the file or the environment; it never sets runtime.numerics).
//
// Ports across workers: the gRPC and metrics ports the file gives its workers (port:,
// base_port + i, metrics_base_port + i, endpoints blocks) must not collide. The variables
// that set a worker's own ports (INFERENCE_SERVER_ENDPOINTS_PORT, _METRICS_PORT) are left
// out of that check: as in the reference, where each worker process resolves and overrides
// only its own worker, such a variable applies to the one worker a process serves (the
// single-worker container sets it), so a multi-worker node file with it set still loads.
//
// Errors are InvalidArgument and name the file, the key's line and column and the dotted
// key path, or the variable (support/yaml.h):
//   node.yaml:4:5: unknown key 'global.runtime.numercs'
//   node.yaml:5:17: workers[1].endpoints.port: 70000 is out of range [1, 65535]
//   environment override INFERENCE_SERVER_ENDPOINTS_PORT: expected an integer, got 'abc'
// Unlike the reference implementation, an unknown key anywhere (and an unknown
// INFERENCE_SERVER_* variable) is an error, so a typo is never silently ignored. Removed
// keys (`batch_policy`, `runtime.residency_mode` and their variables) fail with the
// reference's migration messages (§2.4). The `gateway:` block is not checked here.
//
// Thread safety: plain values and free functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "config/worker_config.h"
#include "support/status.h"
#include "support/yaml.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rs::config {

/// Environment variables by name. Production passes processEnvironment(); tests their own.
using Environment = std::map<std::string, std::string>;

/// A copy of the process environment.
Environment processEnvironment();

enum class Role : uint8_t { kAll, kWorkers, kGateway };
std::string_view roleName(Role role);

/// The node file's `gpus:` (supervisor only).
struct GpuSelection {
  enum class Kind : uint8_t { kAuto, kCount, kList };
  Kind kind = Kind::kAuto;
  int64_t count = 0;                // kCount
  std::vector<std::string> devices; // kList: ordinals or UUIDs, verbatim
};

/// One entry of the node file's `workers:` list.
struct NodeWorker {
  std::string name;
  std::optional<int64_t> gpu;  // `gpu:` (>= 0)
  std::string host;            // `host:` ("" when absent)
  std::optional<int64_t> port; // `port:`
  yaml::Value overrides;       // every other key: an override block (a map)
};

/// A parsed and validated node file.
struct NodeConfig {
  std::string path;       // the node file as given (named in messages)
  std::string model_repo; // resolved against the file's folder when relative
  std::optional<int64_t> base_port;
  std::optional<int64_t> metrics_base_port;
  GpuSelection gpus;
  std::optional<Role> role; // unset: the supervisor decides (default all)
  std::optional<bool> shared_host_weights;
  yaml::Value global;                                     // the `global:` map
  std::vector<NodeWorker> workers;                        // empty: synthesized names
  std::map<std::string, std::vector<std::string>> models; // model -> worker names
  Environment env; // the environment the workers resolve against
  /// The node file as read: values derived from its keys (a port from base_port) carry
  /// those keys' lines into messages.
  yaml::Value tree;
};

/// Reads, parses and validates the node file at `path`: top-level keys, worker entries
/// (unique names, integer gpu/port), gRPC/metrics port collisions between workers, models
/// targets, unknown/removed keys in `global` and every override block; then resolves every
/// listed worker (or worker 0 when there is no list) against `env` so that any error
/// surfaces here. NotFound if the file cannot be read.
Result<NodeConfig> loadNodeFile(const std::string &path, const Environment &env);

/// As loadNodeFile, from text; `path` names the file and anchors a relative model_repo.
Result<NodeConfig> parseNodeFile(std::string_view text, const std::string &path,
                                 const Environment &env);

/// `env` without the variables that set a worker's own ports (INFERENCE_SERVER_ENDPOINTS_PORT
/// and INFERENCE_SERVER_ENDPOINTS_METRICS_PORT): resolving against it gives the ports the
/// node file assigns (see the file comment).
Environment withoutWorkerPortVariables(Environment env);

/// The number of workers the file lists (0: names are synthesized, "worker<i>").
size_t listedWorkerCount(const NodeConfig &node);

/// The index of the worker called `name`: its position in `workers:`, or i for "worker<i>"
/// when the list is absent. NotFound naming the known workers otherwise.
Result<int64_t> findWorker(const NodeConfig &node, std::string_view name);

/// Resolves worker `worker_index` (see the file comment). OutOfRange if the file lists
/// workers and the index is not one of them (or it is negative).
Result<WorkerConfig> resolveWorker(const NodeConfig &node, int64_t worker_index);

} // namespace rs::config
