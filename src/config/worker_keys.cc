//===- config/worker_keys.cc - The rows of a worker's keys ----------------===//
//
// One row per key of `global:` / a worker's override block (reference-system.md §2.2, the
// reproducibility page's keys, and this server's own), in the order they are read and
// documented: the top level, endpoints, grpc and tls rows here, the runtime.* rows in
// worker_runtime_keys.cc and the scheduler.* rows in worker_scheduler_keys.cc. A new key is
// one row in its section's file plus its use.
//
//===----------------------------------------------------------------------===//
#include "config/keys.h"

#include "config/key_reader.h"
#include "config/worker_keys_impl.h"

#include <iterator>

// Each row names only the fields it sets (designated initializers, the rest keep their
// defaults); GCC 12's -Wextra would still ask for every field.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace rs::config {
namespace {

using W = WorkerConfig;
using T = ValueType;
using detail::kInf;
using detail::kMaxInt;

constexpr int64_t kMaxGrpcBytes = 2147483647; // gRPC sizes are C ints

constexpr Choice kControlModes[] = {{"static", int(ModelControlMode::kStatic)},
                                    {"dynamic", int(ModelControlMode::kDynamic)},
                                    {"explicit", int(ModelControlMode::kExplicit)}};
constexpr Choice kSharedMemoryModes[] = {{"off", int(SharedMemoryMode::kOff)},
                                         {"system", int(SharedMemoryMode::kSystem)}};

constexpr std::string_view kBatchPolicyRemoved =
    "'batch_policy' was removed: cap coalescing per model with "
    "scheduler.models.<name>.max_batch_size (the batch axis comes from the manifest; "
    "allow_padding never had an effect)";
constexpr std::string_view kResidencyModeRemoved =
    "'runtime.residency_mode' was removed: use the top-level model_control_mode ('explicit' "
    "replaces 'externally_managed'; static and dynamic are self-managed)";

/// The top-level rows (model_dirs, cache_dir, model_control_mode, model_poll_seconds,
/// models_include).
std::vector<Key<W>> topLevelKeyRows() {
  return {
      {{.path = "model_dirs",
        .type = T::kTextList,
        .default_doc = "`[model_repo]`",
        .in_file = false,
        .values_doc = "directories (`a:b` in the variable)",
        .doc = "used: every bundle directory under these is loaded; set by the node file's "
               "`model_repo`, not a file key"},
       [](W &c) { return field(c.model_dirs); }},
      {{.path = "cache_dir",
        .type = T::kText,
        .values_doc = "a directory (made when the first entry is written)",
        .doc = "used: the executable cache's entries of bundle B go to `<cache_dir>/B/` "
               "(the TF32 probe's to `<cache_dir>/.cache/`) instead of the bundle's `.cache/`, "
               "same keys and format; for a read-only model repository such as KServe's "
               "`/mnt/models` (docs/reproducibility.md §4)"},
       [](W &c) { return field(c.cache_dir); }},
      {{.path = "model_control_mode",
        .type = T::kChoice,
        .fallback = "dynamic",
        .choices = kControlModes,
        .doc = "used: `dynamic` starts the repository watcher, `explicit` enables load/unload "
               "by request and `SetModelResidency` (docs/model_repository.md)"},
       [](W &c) { return field(c.model_control_mode); }},
      {{.path = "model_poll_seconds",
        .type = T::kNumber,
        .fallback = "15",
        .numbers = {0, kInf, false, true},
        .values_doc = ">= 0; > 0 when `dynamic`",
        .doc = "used: the watcher's poll interval (a change applies after two equal polls)"},
       [](W &c) { return field(c.model_poll_seconds); }},
      {{.path = "models_include",
        .type = T::kTextList,
        .default_doc = "`[]` (all)",
        .values_doc = "model names (`a:b:c` in the variable)",
        .doc = "used: only these bundles load"},
       [](W &c) { return field(c.models_include); }},
  };
}

/// The endpoints.*, grpc.* and tls.* rows.
std::vector<Key<W>> endpointKeyRows() {
  return {
      {{.path = "endpoints.host",
        .type = T::kText,
        .fallback = "127.0.0.1",
        .values_doc = "host or address",
        .doc = "used: the address every port binds"},
       [](W &c) { return field(c.endpoints.host); }},
      {{.path = "endpoints.port",
        .type = T::kInteger,
        .fallback = "8080",
        .default_doc = "`8080` (or `base_port + i`)",
        .ints = {1, 65535},
        .doc = "used: KServe V2 gRPC"},
       [](W &c) { return field(c.endpoints.port); }},
      {{.path = "endpoints.metrics_port",
        .type = T::kInteger,
        .fallback = "0",
        .default_doc = "`0` (off; `metrics_base_port + i`)",
        .ints = {0, 65535},
        .values_doc = "0..65535, != `port`",
        .doc = "used: `/metrics` and health"},
       [](W &c) { return field(c.endpoints.metrics_port); }},
      {{.path = "endpoints.max_concurrent_requests",
        .type = T::kInteger,
        .fallback = "64",
        .ints = {0, kMaxInt},
        .values_doc = ">= 0, 0 = uncapped",
        .doc = "used: requests in flight past it are answered RESOURCE_EXHAUSTED (HTTP 429) "
               "and counted in `worker_requests_shed_total`"},
       [](W &c) { return field(c.endpoints.max_concurrent_requests); }},
      {{.path = "endpoints.http_port",
        .type = T::kInteger,
        .fallback = "8000",
        .ints = {0, 65535},
        .values_doc = "0..65535, 0 = off; != `port`, `metrics_port`",
        .doc = "used (ours): KServe V2 REST"},
       [](W &c) { return field(c.endpoints.http_port); }},
      {{.path = "endpoints.max_request_bytes",
        .type = T::kInteger,
        .fallback = "67108864",
        .default_doc = "`67108864` (64 MiB)",
        .ints = {1, kMaxGrpcBytes},
        .values_doc = "1..2147483647 (bytes)",
        .doc = "used (ours): the largest HTTP request body of any route, on the wire and once "
               "decompressed; larger is 413 and a closed connection (docs/protocols.md)"},
       [](W &c) { return field(c.endpoints.max_request_bytes); }},
      {{.path = "endpoints.cors_allowed_origins",
        .type = T::kTextList,
        .default_doc = "`[]` (CORS off)",
        .list_separator = ',', // origins hold ':'
        .values_doc = "origins (`https://app.example.com`, scheme://host[:port]) or `*` (any); "
                      "`,` between them in the variable",
        .doc = "used (ours): browser origins allowed to call the HTTP API across origins: "
               "preflights answered, Access-Control-Allow-Origin on their replies "
               "(docs/protocols.md)"},
       [](W &c) { return field(c.endpoints.cors_allowed_origins); }},
      {{.path = "endpoints.shared_memory",
        .type = T::kChoice,
        .fallback = "off",
        .choices = kSharedMemoryModes,
        .doc = "used: `system` offers Triton's system shared-memory extension, to loopback "
               "peers only (docs/protocols.md)"},
       [](W &c) { return field(c.endpoints.shared_memory); }},
      {{.path = "endpoints.shared_memory_prefix",
        .type = T::kText,
        .fallback = "/rs_",
        .values_doc = "`/` then the start of an object name (no other `/`)",
        .doc = "used: every registered key must start with it"},
       [](W &c) { return field(c.endpoints.shared_memory_prefix); }},
      {{.path = "endpoints.shared_memory_allowed_uids",
        .type = T::kTextList,
        .default_doc = "`[]` (the server's own uid)",
        .values_doc = "uids, integers in [0, 4294967295]",
        .doc = "used: the owners a registered shared memory object may have"},
       [](W &c) { return field(c.endpoints.shared_memory_allowed_uids); }},
      {{.path = "grpc.max_recv_msg_bytes",
        .type = T::kInteger,
        .fallback = "536870912",
        .ints = {1, kMaxGrpcBytes},
        .doc = "used: the largest request (also the HTTP body limit)"},
       [](W &c) { return field(c.grpc.max_recv_msg_bytes); }},
      {{.path = "grpc.max_send_msg_bytes",
        .type = T::kInteger,
        .fallback = "536870912",
        .ints = {1, kMaxGrpcBytes},
        .doc = "used: the largest reply"},
       [](W &c) { return field(c.grpc.max_send_msg_bytes); }},
      {{.path = "grpc.polling_threads",
        .type = T::kInteger,
        .fallback = "4",
        .ints = {1, 256},
        .doc = "used (ours): the threads that poll the gRPC completion queue and run every "
               "call they take, so a request passes between no threads"},
       [](W &c) { return field(c.grpc.polling_threads); }},
      {{.path = "grpc.busy_poll_us",
        .type = T::kInteger,
        .default_doc = "`20000` with `runtime.backend: cuda`, `0` with `cpu`",
        .ints = {0, 1000000},
        .values_doc = "0..1000000 (microseconds)",
        .doc = "used (ours): how long a polling thread keeps polling after its last work; "
               "costs a busy core, saves a wake-up per call (docs/performance.md)"},
       [](W &c) { return field(c.grpc.busy_poll_us); }},

      // --- tls
      {{.path = "tls.cert_file",
        .type = T::kText,
        .default_doc = "`\"\"` (TLS off)",
        .values_doc = "PEM certificate chain; needs `key_file`",
        .doc = "used: gRPC over TLS and HTTPS (the metrics port stays plaintext; "
               "docs/operations.md)"},
       [](W &c) { return field(c.tls.cert_file); }},
      {{.path = "tls.key_file",
        .type = T::kText,
        .values_doc = "PEM private key; needs `cert_file`",
        .doc = "used: the key of `cert_file`"},
       [](W &c) { return field(c.tls.key_file); }},
      {{.path = "tls.client_ca_file",
        .type = T::kText,
        .default_doc = "`\"\"` (no client certificate asked)",
        .values_doc = "PEM CA certificates; needs `cert_file` and `key_file`",
        .doc = "used: mutual TLS, a client certificate signed by one of these CAs required"},
       [](W &c) { return field(c.tls.client_ca_file); }},
  };
}

KeyTable<W> makeWorkerKeys() {
  KeyTable<W> t{
      .env_prefix = "INFERENCE_SERVER_", .list_separator = ':', .lenient_env_booleans = true};
  t.removed = {
      {.path = "batch_policy",
       .env_suffix = "BATCH_POLICY_",
       .env_prefix_match = true,
       .message = kBatchPolicyRemoved},
      {.path = "runtime.residency_mode",
       .env_suffix = "RUNTIME_RESIDENCY_MODE",
       .message = kResidencyModeRemoved},
  };
  // The sections in the order they are read and documented.
  t.rows = topLevelKeyRows();
  for (std::vector<Key<W>> (*section)() : {&detail::runtimeKeyRows, &detail::schedulerKeyRows,
                                           &detail::hookKeyRows, &endpointKeyRows}) {
    std::vector<Key<W>> rows = section();
    t.rows.insert(t.rows.end(), std::make_move_iterator(rows.begin()),
                  std::make_move_iterator(rows.end()));
  }
  return t;
}

} // namespace

const KeyTable<WorkerConfig> &workerKeys() {
  static const KeyTable<WorkerConfig> table = makeWorkerKeys();
  return table;
}

} // namespace rs::config
