//===- config/worker_keys.cc - The rows of a worker's keys ---------------===//
//
// One row per key of `global:` / a worker's override block (reference-system.md §2.2, the
// reproducibility page's keys, and this server's own), in the order they are read and
// documented. A new key is one row here plus its use.
//
//===----------------------------------------------------------------------===//
#include "config/keys.h"

#include "config/key_reader.h"

// Each row names only the fields it sets (designated initializers, the rest keep their
// defaults); GCC 12's -Wextra would still ask for every field.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace rs::config {
namespace {

using W = WorkerConfig;
using M = ModelSchedulerConfig;
using T = ValueType;

constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();
constexpr int64_t kMaxGrpcBytes = 2147483647; // gRPC sizes are C ints
constexpr double kInf = std::numeric_limits<double>::infinity();

constexpr Choice kControlModes[] = {{"static", int(ModelControlMode::kStatic)},
                                    {"dynamic", int(ModelControlMode::kDynamic)},
                                    {"explicit", int(ModelControlMode::kExplicit)}};
constexpr Choice kBackends[] = {
    {"cpu", int(Backend::kCpu)}, {"cuda", int(Backend::kCuda)}, {"gpu", int(Backend::kCuda), true}};
constexpr Choice kNumerics[] = {
    {"f32", int(Numerics::kF32)}, {"auto", int(Numerics::kAuto)}, {"tf32", int(Numerics::kTf32)}};
constexpr Choice kProfiles[] = {{"none", int(Profile::kNone)},
                                {"regulated", int(Profile::kRegulated)}};
constexpr Choice kSharedMemoryModes[] = {{"off", int(SharedMemoryMode::kOff)},
                                         {"system", int(SharedMemoryMode::kSystem)}};
constexpr Choice kBatchSizes[] = {{"all", int(BatchSizes::kAll)},
                                  {"largest", int(BatchSizes::kLargest)}};
constexpr Choice kDisciplines[] = {{"fair", int(Discipline::kFair)},
                                   {"fifo", int(Discipline::kFifo)},
                                   {"edf", int(Discipline::kEdf)}};
constexpr Choice kResidencies[] = {{"unpinned", int(Residency::kUnpinned)},
                                   {"system", int(Residency::kPinnedSystem), true},
                                   {"pinned_system", int(Residency::kPinnedSystem)},
                                   {"device", int(Residency::kPinnedDevice), true},
                                   {"pinned_device", int(Residency::kPinnedDevice)}};

constexpr std::string_view kBatchPolicyRemoved =
    "'batch_policy' was removed: cap coalescing per model with "
    "scheduler.models.<name>.max_batch_size (the batch axis comes from the manifest; "
    "allow_padding never had an effect)";
constexpr std::string_view kResidencyModeRemoved =
    "'runtime.residency_mode' was removed: use the top-level model_control_mode ('explicit' "
    "replaces 'externally_managed'; static and dynamic are self-managed)";

/// scheduler.models.<name>: no variables (reference-system.md §2.3).
const KeyTable<M> &modelKeys() {
  static const KeyTable<M> table{
      .rows = {
          {{.path = "weight",
            .type = T::kNumber,
            .fallback = "1.0",
            .numbers = {0, kInf, true, true},
            .doc = "used under `fair`: the model's relative share of the device's compute "
                   "(`SetModelPolicy` changes it live)"},
           [](M &m) { return field(m.weight); }},
          {{.path = "residency",
            .type = T::kChoice,
            .default_doc = "unset (`system` with a weight cache)",
            .choices = kResidencies,
            .doc = "used on the CPU backend: the model's floor in the weight cache "
                   "(docs/model_repository.md)"},
           [](M &m) { return field(m.residency); }},
          {{.path = "pin_to_gpu",
            .type = T::kBoolean,
            .fallback = "false",
            .alias = true,
            .doc = "alias: `true` means `residency: device` when `residency` is unset"},
           [](M &m) { return field(m.pin_to_gpu); }},
          {{.path = "max_batch_size",
            .type = T::kInteger,
            .default_doc = "unset (uncapped)",
            .ints = {1, kMaxInt},
            .doc = "used: no coalesced batch of the model holds more rows (docs/scheduler.md)"},
           [](M &m) { return field(m.max_batch_size); }},
      }};
  return table;
}

std::map<std::string, M> &schedulerModels(W &c) { return c.scheduler.models; }

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
  t.rows = {
      // --- top level
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
        .values_doc = "any path",
        .doc = "accepted: logged only, as the reference"},
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

      // --- runtime
      {{.path = "runtime.backend",
        .type = T::kChoice,
        .fallback = "cpu",
        .choices = kBackends,
        .doc = "used: the CPU executor or the PJRT GPU backend (docs/gpu.md)"},
       [](W &c) { return field(c.runtime.backend); }},
      {{.path = "runtime.device_ordinal",
        .type = T::kInteger,
        .fallback = "0",
        .default_doc = "`0` (a worker's `gpu:`)",
        .ints = {0, 1 << 20},
        .doc = "GPU: the device the PJRT client uses"},
       [](W &c) { return field(c.runtime.device_ordinal); }},
      {{.path = "runtime.mem_fraction",
        .type = T::kNumber,
        .fallback = "0.9",
        .numbers = {0, 1, true, false},
        .doc = "GPU: the share of device memory the PJRT client's allocator may take"},
       [](W &c) { return field(c.runtime.mem_fraction); }},
      {{.path = "runtime.preallocate",
        .type = T::kBoolean,
        .fallback = "true",
        .doc = "GPU: allocate `mem_fraction` of device memory at startup"},
       [](W &c) { return field(c.runtime.preallocate); }},
      {{.path = "runtime.event_spin_us",
        .type = T::kInteger,
        .fallback = "20000",
        .ints = {0, 1000000},
        .values_doc = "0..1000000 (microseconds)",
        .doc = "GPU (ours): how long the thread waiting for a GPU execution, upload or "
               "read-back polls the PJRT event before it sleeps; 0 = sleep at once (docs/gpu.md)"},
       [](W &c) { return field(c.runtime.event_spin_us); }},
      {{.path = "runtime.completion_polling",
        .type = T::kBoolean,
        .fallback = "true",
        .doc = "GPU (ours): the waiting thread sees an execution finish by polling a device "
               "event of its own (CUDA: libcuda.so.1 and the plugin's stream extension) "
               "instead of the PJRT event; false, or where the driver lacks it: the PJRT "
               "event (docs/gpu.md)"},
       [](W &c) { return field(c.runtime.completion_polling); }},
      {{.path = "runtime.allow_cpu_fallback",
        .type = T::kBoolean,
        .fallback = "true",
        .doc = "used: `cuda` unavailable -> the CPU backend with a warning, else startup fails"},
       [](W &c) { return field(c.runtime.allow_cpu_fallback); }},
      {{.path = "runtime.weight_cache_fraction",
        .type = T::kNumber,
        .fallback = "1.0",
        .numbers = {0, 1, false, false},
        .values_doc = "[0, 1]; 0 = off",
        .doc = "used on the CPU backend: weight pool = min(fraction, 1 - wiggle) x host memory; "
               "0 turns the on-demand weight cache off (docs/model_repository.md)"},
       [](W &c) { return field(c.runtime.weight_cache_fraction); }},
      {{.path = "runtime.weight_cache_wiggle_fraction",
        .type = T::kNumber,
        .fallback = "0.1",
        .numbers = {0, 1, false, true},
        .doc = "used on the CPU backend: caps the weight pool at (1 - wiggle) of host memory"},
       [](W &c) { return field(c.runtime.weight_cache_wiggle_fraction); }},
      {{.path = "runtime.autotune",
        .type = T::kBoolean,
        .fallback = "true",
        .doc = "GPU; cache key: `false` = `xla_gpu_autotune_level=0`"},
       [](W &c) { return field(c.runtime.autotune); }},
      {{.path = "runtime.autotune_cache",
        .type = T::kBoolean,
        .default_doc = "unset (inherit)",
        .doc = "GPU: `false` turns XLA's autotune cache off even with `autotune_cache_dir`"},
       [](W &c) { return field(c.runtime.autotune_cache); }},
      {{.path = "runtime.autotune_cache_dir",
        .type = T::kText,
        .default_doc = "`\"\"` (inherit)",
        .values_doc = "directory",
        .doc = "GPU: XLA's per-fusion autotune cache directory (created when missing)"},
       [](W &c) { return field(c.runtime.autotune_cache_dir); }},
      {{.path = "runtime.numerics",
        .type = T::kChoice,
        .fallback = "auto",
        .choices = kNumerics,
        .doc = "used: the numerics pass on every program (docs/reproducibility.md); `tf32` with "
               "`backend: cpu` is a configuration error"},
       [](W &c) { return field(c.runtime.numerics); }},
      {{.path = "runtime.shared_host_weights",
        .type = T::kBoolean,
        .fallback = "false",
        .doc = "accepted: validated and logged, no effect in this server"},
       [](W &c) { return field(c.runtime.shared_host_weights); }},
      {{.path = "runtime.shared_host_weights_mode",
        .type = T::kText,
        .fallback = "666",
        .values_doc = "octal permission string <= 777",
        .doc = "accepted: validated and logged, no effect in this server"},
       [](W &c) { return field(c.runtime.shared_host_weights_mode); }},
      {{.path = "runtime.profile",
        .type = T::kChoice,
        .fallback = "none",
        .choices = kProfiles,
        .doc = "used: see \"Resolution order\"; logs the `REGULATED PROFILE` banner"},
       [](W &c) { return field(c.runtime.profile); }},
      {{.path = "runtime.batch_sizes",
        .type = T::kChoice,
        .fallback = "all",
        .default_doc = "`all` (`largest` under the profile)",
        .choices = kBatchSizes,
        .doc = "used: `all` runs the smallest compiled size that holds the rows; `largest` "
               "loads only the largest program and runs every dispatch on it, zero-padded"},
       [](W &c) { return field(c.runtime.batch_sizes); }},
      {{.path = "runtime.executable_cache",
        .type = T::kBoolean,
        .fallback = "true",
        .doc = "used: compiled programs kept in each bundle's `.cache/`"},
       [](W &c) { return field(c.runtime.executable_cache); }},
      {{.path = "runtime.pjrt_plugin",
        .type = T::kText,
        .default_doc = "`\"\"` (discover)",
        .values_doc = "path of a PJRT plugin `.so`",
        .doc = "GPU (ours): the plugin to load (docs/gpu.md)"},
       [](W &c) { return field(c.runtime.pjrt_plugin); }},
      {{.path = "runtime.executable_cache_key_file",
        .type = T::kText,
        .default_doc = "`\"\"` (entries carry a content hash only)",
        .values_doc = "path of a file whose bytes are the key",
        .doc = "used (ours): executable cache entries are authenticated by an HMAC-SHA256 "
               "under this key; a forged entry is a logged miss (docs/operations.md)"},
       [](W &c) { return field(c.runtime.executable_cache_key_file); }},
      {{.path = "runtime.cpu_threads",
        .type = T::kInteger,
        .fallback = "0",
        .default_doc = "`0` (all cores)",
        .ints = {0, 4096},
        .doc = "used (ours): CPU executor threads (results are bit-identical for any count)"},
       [](W &c) { return field(c.runtime.cpu_threads); }},
      {{.path = "runtime.xla_flags",
        .type = T::kXlaFlags,
        .default_doc = "`{}` (`{xla_gpu_exclude_nondeterministic_ops: true}` under the profile)",
        .values_doc = "map of XLA DebugOptions field name -> value, names checked against the "
                      "options of the validated plugin (`name=value` items in the variable)",
        .doc = "GPU; cache key"},
       [](W &c) { return field(c.runtime.xla_flags); }},

      // --- scheduler
      {{.path = "scheduler.discipline",
        .type = T::kChoice,
        .fallback = "fair",
        .choices = kDisciplines,
        .doc = "used: which model dispatches next: `fair` (weighted share of recent compute, "
               "cost-aware), `fifo` (oldest front request), `edf` (soonest deadline, with "
               "laxity shedding) (docs/scheduler.md)"},
       [](W &c) { return field(c.scheduler.discipline); }},
      {{.path = "scheduler.ema_halflife_seconds",
        .type = T::kNumber,
        .fallback = "30",
        .numbers = {0, kInf, true, true},
        .doc = "used under `fair`: half-life of each model's recent-compute EMA"},
       [](W &c) { return field(c.scheduler.ema_halflife_seconds); }},
      {{.path = "scheduler.recency_penalty_cap",
        .type = T::kNumber,
        .fallback = "0.25",
        .numbers = {0, 1, true, false},
        .doc = "used under `fair`: clamp of share - recent share in the priority"},
       [](W &c) { return field(c.scheduler.recency_penalty_cap); }},
      {{.path = "scheduler.coalescing_discount",
        .type = T::kNumber,
        .fallback = "0.1",
        .numbers = {0, 1, false, true},
        .doc = "used under `fair`: the priority divides by cost x (1 - discount)"},
       [](W &c) { return field(c.scheduler.coalescing_discount); }},
      {{.path = "scheduler.cost_ema_alpha",
        .type = T::kNumber,
        .fallback = "0.2",
        .numbers = {0, 1, true, false},
        .doc = "used: weight of a new measurement in a model's cost estimate per batch size "
               "(`fair` priority, `edf` laxity)"},
       [](W &c) { return field(c.scheduler.cost_ema_alpha); }},
      {{.path = "scheduler.max_queue_depth",
        .type = T::kInteger,
        .fallback = "1024",
        .ints = {1, kMaxInt},
        .values_doc = ">= 1, per model",
        .doc = "used: a full queue answers RESOURCE_EXHAUSTED"},
       [](W &c) { return field(c.scheduler.max_queue_depth); }},
      {{.path = "scheduler.max_queue_delay_microseconds",
        .type = T::kInteger,
        .fallback = "0",
        .default_doc = "`0` (dispatch at once, the reference)",
        .ints = {0, 60000000},
        .values_doc = "0..60000000 (60 s)",
        .doc = "used (ours, Triton's dynamic-batcher delay): with coalescing, how long a "
               "partial batch may wait for more rows, never past a deadline (docs/scheduler.md)"},
       [](W &c) { return field(c.scheduler.max_queue_delay_microseconds); }},
      {{.path = "scheduler.max_batches_in_flight",
        .type = T::kInteger,
        .fallback = "0",
        .default_doc = "`0` (by backend: 1 on cpu, 2 on cuda)",
        .ints = {0, 16},
        .values_doc = "0..16",
        .doc = "used (ours): batches that may run at once, overlapping one batch's transfers "
               "and answers with another's execution; outputs do not depend on it "
               "(docs/scheduler.md \"Batches in flight\")"},
       [](W &c) { return field(c.scheduler.max_batches_in_flight); }},
      {{.path = "scheduler.compaction_interval",
        .type = T::kInteger,
        .fallback = "0",
        .default_doc = "`0` (off)",
        .ints = {0, kMaxInt},
        .doc = "accepted: validated and logged, no effect in this server (no memory compaction "
               "on the worker)"},
       [](W &c) { return field(c.scheduler.compaction_interval); }},
      {{.path = "scheduler.dispatch_timeout_seconds",
        .type = T::kNumber,
        .fallback = "30",
        .numbers = {0, kInf, true, true},
        .doc = "accepted: parsed, not enforced (as the reference)"},
       [](W &c) { return field(c.scheduler.dispatch_timeout_seconds); }},
      {{.path = "scheduler.coalescing",
        .type = T::kBoolean,
        .fallback = "true",
        .default_doc = "`true` (`false` under the profile)",
        .doc = "used: `false` serves exactly one request (or one piece of a split request) per "
               "dispatch"},
       [](W &c) { return field(c.scheduler.coalescing); }},
      {{.path = "scheduler.models",
        .type = T::kModelMap,
        .default_doc = "`{}`",
        .env = kNoEnv,
        .values_doc = "map of model name -> `{weight, residency, max_batch_size}`",
        .doc = "per-model settings (rows below); not overridable from the environment"},
       nullptr,
       modelMapHooks<W, M>(&schedulerModels, &modelKeys(), "scheduler.models")},

      // --- endpoints and grpc
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
  return t;
}

} // namespace

const KeyTable<WorkerConfig> &workerKeys() {
  static const KeyTable<WorkerConfig> table = makeWorkerKeys();
  return table;
}

} // namespace rs::config
