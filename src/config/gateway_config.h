//===- config/gateway_config.h - gateway.yml and its environment -----------===//
//
// The gateway's configuration (reference-system.md section 8.1, same keys and defaults):
//
//   listen: {grpc: "0.0.0.0:8001", metrics: "0.0.0.0:8002", http: "0.0.0.0:8000"}
//   http: {cors_allowed_origins: [https://app.example.com, ...]}   # ours; default: CORS off
//   endpoints: ["10.0.0.5:8080", ...]        # required; worker gRPC host:port
//   metrics_endpoints: ["10.0.0.5:9100", ...] # index-aligned; optional
//   worker_names: [gpu0, ...]                 # index-aligned; the `worker` labels
//   grpc: {max_recv_msg_bytes: 536870912, max_send_msg_bytes: 536870912,
//          max_concurrent_requests_per_worker: 64}
//   worker_client: {request_timeout_seconds: 60, max_concurrent_streams: 32}
//   logging: {level: info, format: json}
//   tls: {cert_file, key_file, client_ca_file}  # parsed, not enforced (a warning)
//   scheduling: {mode: round_robin, work_basis: compute, default_replicas: 1, ...,
//                models: {<name>: {replicas, fill_mode, fill_factor}}}
//
// `listen.http` is ours (the reference gateway has no REST port): the KServe V2 REST
// front-end, "" to turn it off; `http.cors_allowed_origins` is its CORS list, as a worker's
// endpoints.cors_allowed_origins (the node copies its workers' list when neither the file
// nor REACTANT_GATEWAY_HTTP_CORS_ALLOWED_ORIGINS sets it). A listen port of 0 binds a free port
// (tests).
//
// Environment: REACTANT_GATEWAY_<DOTTED_PATH_UPPER> sets a key ('.' -> '_', e.g.
// REACTANT_GATEWAY_SCHEDULING_ROUTING_FILL_MODE=spread); REACTANT_GATEWAY_WORKERS,
// _WORKER_METRICS and _WORKER_NAMES (comma-separated) replace endpoints,
// metrics_endpoints and worker_names; REACTANT_GATEWAY_STARTUP_WAIT_SECONDS (0: fail fast;
// inf, forever or -1: wait forever), _HEALTH_INTERVAL_SECONDS (10) and _WEDGE_EXIT_ROUNDS
// (3; 0 disables) are process settings; REACTANT_GATEWAY_FILE names the file (read by the
// commands, not here). Per-model `scheduling.models` has no variable.
//
// Every key, its type, default, range and variable is a row of config/keys.h
// (gateway_keys.cc), read by the same reader and grammar as the node file's keys
// (config/key_reader.h). Errors are InvalidArgument naming the file and key, or the
// variable, with the expected and actual value. Unlike the reference, an unknown key or
// REACTANT_GATEWAY_* variable is an error (a typo is never ignored). `scheduling.routing_policy:
// least_outstanding` fails with the reference's hint to use `scheduling.mode: least_outstanding`.
//
// Thread safety: plain values and free functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rs::config {

using Environment = std::map<std::string, std::string>;

enum class SchedulingMode : uint8_t { kRoundRobin, kLeastOutstanding, kLptPacking };
enum class WorkBasis : uint8_t { kCompute, kItems, kRequests };
enum class FillMode : uint8_t { kRun, kSpread, kInflight };
enum class RoutingPolicy : uint8_t { kFillLeast, kFillRr };
enum class CompactionMode : uint8_t { kOff, kEager, kScheduled };

std::string_view schedulingModeName(SchedulingMode v);
std::string_view workBasisName(WorkBasis v);
std::string_view fillModeName(FillMode v);
std::string_view routingPolicyName(RoutingPolicy v);
std::string_view compactionModeName(CompactionMode v);
/// Parses a lower-case spelling; InvalidArgument naming the allowed values otherwise.
Result<FillMode> parseFillMode(std::string_view s);
Result<RoutingPolicy> parseRoutingPolicy(std::string_view s);
Result<CompactionMode> parseCompactionMode(std::string_view s);

/// Replica counts: > 0 a count of distinct workers; kAllReplicas = every ready worker.
inline constexpr int64_t kAllReplicas = -1;

/// `scheduling.models.<name>`.
struct ModelPlacementConfig {
  int64_t replicas = 0;              // 0: default_replicas; > 0 or kAllReplicas
  std::optional<FillMode> fill_mode; // unset: inherit routing_fill_mode
  std::optional<double> fill_factor; // unset: routing_fill_factor; > 0
};

/// `scheduling:` (the runtime-mutable part is SchedulingPolicy in the control service).
struct SchedulingConfig {
  SchedulingMode mode = SchedulingMode::kRoundRobin;
  WorkBasis work_basis = WorkBasis::kCompute;
  double rebalance_compute_seconds = 300;      // > 0
  double first_rebalance_compute_seconds = 60; // >= 0; 0: use rebalance
  double ema_halflife_compute_seconds = 0;     // >= 0; 0: the rebalance interval
  double hysteresis = 0.0;                     // [0, 1)
  double max_worker_share = 0.8;               // (0, 1]; advisory, read by nothing
  int64_t default_replicas = 1;                // >= 1 or kAllReplicas ("all")
  double routing_fill_factor = 1.0;            // > 0
  RoutingPolicy routing_policy = RoutingPolicy::kFillLeast;
  FillMode routing_fill_mode = FillMode::kRun;
  bool forbid_memory_oversubscription = true;
  CompactionMode compaction_mode = CompactionMode::kEager;
  int64_t compaction_interval = 1; // >= 0; 0: off
  std::map<std::string, ModelPlacementConfig> models;
};

/// A "host:port" listen address; port 0 binds a free port.
struct ListenAddress {
  std::string host;
  int port = 0;
  bool enabled() const { return !host.empty(); }
  std::string text() const;
};

struct GatewayConfig {
  std::string path; // the file read ("" when none), named in messages

  ListenAddress listen_grpc{"0.0.0.0", 8001};
  ListenAddress listen_metrics{"0.0.0.0", 8002};
  ListenAddress listen_http{"0.0.0.0", 8000};
  /// http.cors_allowed_origins: the Origin values (`scheme://host[:port]`, or `*` for any)
  /// whose cross-origin HTTP requests are allowed (frontend/http_cors.h); empty = off.
  std::vector<std::string> cors_allowed_origins;

  /// Worker gRPC endpoints "host:port", de-duplicated, in order.
  std::vector<std::string> endpoints;
  /// Index-aligned with endpoints ("" where a worker has none).
  std::vector<std::string> metrics_endpoints;
  /// Index-aligned with endpoints: the `worker` labels (default: the endpoint).
  std::vector<std::string> worker_names;

  int64_t max_recv_msg_bytes = 536870912;          // grpc.max_recv_msg_bytes > 0
  int64_t max_send_msg_bytes = 536870912;          // grpc.max_send_msg_bytes > 0
  int64_t max_concurrent_requests_per_worker = 64; // >= 0; x workers = inbound cap; 0 = none

  double request_timeout_seconds = 60; // worker_client.request_timeout_seconds > 0
  int64_t max_concurrent_streams = 32; // worker_client.max_concurrent_streams > 0

  std::string logging_level = "info";  // trace | debug | info | warn | error
  std::string logging_format = "json"; // json | text

  std::string tls_cert_file, tls_key_file, tls_client_ca_file; // parsed, not enforced

  SchedulingConfig scheduling;

  /// Process settings from the environment.
  double startup_wait_seconds = 0; // +infinity: forever
  double health_interval_seconds = 10;
  int64_t wedge_exit_rounds = 3;
  /// REACTANT_GATEWAY_METRICS_PORT: the port the reference's container health check asks
  /// /readyz on; validated, not used by the gateway (it listens on listen_metrics).
  std::optional<int64_t> health_check_metrics_port;

  /// (VAR, value) of every REACTANT_GATEWAY_* variable applied, sorted by VAR.
  std::vector<std::pair<std::string, std::string>> env_overrides;
  /// Warnings to log at startup (tls set, a small inbound cap).
  std::vector<std::string> warnings;
};

/// What the node supervisor knows of its workers when it runs the gateway (node/node_plan.h).
struct NodeGatewayValues {
  /// The workers' gRPC endpoints and `worker` labels, index-aligned: the gateway's
  /// endpoints and worker_names unless the file lists `endpoints` or REACTANT_GATEWAY_WORKERS
  /// is set.
  std::vector<std::string> endpoints;
  std::vector<std::string> worker_names;
  /// The workers' metrics endpoints when every worker has one: metrics_endpoints then, under
  /// the same condition.
  std::optional<std::vector<std::string>> metrics_endpoints;
  /// The workers' grpc message limits: the gateway's unless the matching
  /// REACTANT_GATEWAY_GRPC_MAX_*_MSG_BYTES variable is set.
  int64_t max_recv_msg_bytes = 0;
  int64_t max_send_msg_bytes = 0;
  /// The workers' endpoints.cors_allowed_origins: http.cors_allowed_origins unless the file
  /// or REACTANT_GATEWAY_HTTP_CORS_ALLOWED_ORIGINS sets it.
  std::vector<std::string> cors_allowed_origins;
};

/// Parses gateway.yml text (`path` names it in messages), applies `env`, then `node` when
/// given (see NodeGatewayValues), and validates. An empty `text` is a file with no keys
/// (endpoints must then come from the environment or `node`).
Result<GatewayConfig> parseGatewayConfig(std::string_view text, const std::string &path,
                                         const Environment &env,
                                         const NodeGatewayValues *node = nullptr);

/// Reads and parses the file at `path` (NotFound if unreadable).
Result<GatewayConfig> loadGatewayConfig(const std::string &path, const Environment &env,
                                        const NodeGatewayValues *node = nullptr);

/// The gateway file to read: REACTANT_GATEWAY_FILE, else /etc/reactantserver/gateway.yml
/// when it exists, else "" (no file).
std::string gatewayFilePath(const Environment &env);

/// Every resolved setting as (dotted key, value text), sorted, for the startup line.
std::vector<std::pair<std::string, std::string>> effectiveGatewaySettings(const GatewayConfig &c);

} // namespace rs::config
