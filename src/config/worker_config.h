//===- config/worker_config.h - One worker's resolved configuration --------===//
//
// The typed, validated settings of one worker (`serve`), resolved from a node file's
// `global` block, the worker's override block and INFERENCE_SERVER_* environment overrides
// (config/node_config.h). Keys, defaults and ranges are the reference implementation's
// (reference-system.md §2.2) plus the reproducibility page's keys (runtime.profile,
// runtime.batch_sizes, runtime.xla_flags, runtime.executable_cache, scheduler.coalescing)
// and two of ours: endpoints.http_port and runtime.cpu_threads, and runtime.pjrt_plugin.
// Each field's comment gives its dotted key, default and valid range; units are in names.
// The key table (config/keys.h, worker_keys.cc) holds the same facts as rows that drive
// parsing, validation, environment overrides, effectiveSettings() and the docs; a test
// checks that these initializers agree with the rows' defaults.
//
// Thread safety: plain values.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rs::config {

enum class Backend : uint8_t { kCpu, kCuda };
enum class SharedMemoryMode : uint8_t {
  kOff,
  kSystem
}; // endpoints.shared_memory: off | system // "cpu" | "cuda" ("gpu" is an alias)
enum class ModelControlMode : uint8_t { kStatic, kDynamic, kExplicit };
enum class Numerics : uint8_t { kF32, kAuto, kTf32 };
enum class Profile : uint8_t { kNone, kRegulated };
enum class BatchSizes : uint8_t { kAll, kLargest };
enum class Discipline : uint8_t { kFair, kFifo, kEdf };
enum class Residency : uint8_t { kUnpinned, kPinnedSystem, kPinnedDevice };

/// Lower-case config spellings: "cpu", "dynamic", "f32", "regulated", "largest", "fair",
/// "pinned_system".
std::string_view backendName(Backend v);
std::string_view modelControlModeName(ModelControlMode v);
std::string_view numericsName(Numerics v);
std::string_view profileName(Profile v);
std::string_view batchSizesName(BatchSizes v);
std::string_view disciplineName(Discipline v);
std::string_view residencyName(Residency v);

/// `runtime:` block.
struct RuntimeConfig {
  Backend backend = Backend::kCpu;           // runtime.backend: cpu | cuda | gpu
  int64_t device_ordinal = 0;                // runtime.device_ordinal >= 0 (node: the worker's gpu)
  double mem_fraction = 0.9;                 // runtime.mem_fraction in (0, 1]
  bool preallocate = true;                   // runtime.preallocate
  bool allow_cpu_fallback = true;            // runtime.allow_cpu_fallback
  double weight_cache_fraction = 1.0;        // runtime.weight_cache_fraction in [0, 1]; 0 = off
  double weight_cache_wiggle_fraction = 0.1; // runtime.weight_cache_wiggle_fraction in [0, 1)
  bool autotune = true;                      // runtime.autotune (false: xla_gpu_autotune_level=0)
  std::optional<bool> autotune_cache;        // runtime.autotune_cache; unset = inherit
  std::string autotune_cache_dir;            // runtime.autotune_cache_dir; "" = inherit
  Numerics numerics = Numerics::kAuto; // runtime.numerics: f32 | auto | tf32 (tf32 needs cuda)
  bool shared_host_weights = false;    // runtime.shared_host_weights
  std::string shared_host_weights_mode = "666"; // octal permission string <= 777
  Profile profile = Profile::kNone;             // runtime.profile: none | regulated
  BatchSizes batch_sizes = BatchSizes::kAll;    // runtime.batch_sizes: all | largest
  /// runtime.xla_flags: XLA debug options, name (without "--") -> value text ("true", "0").
  std::map<std::string, std::string> xla_flags;
  bool executable_cache = true; // runtime.executable_cache
  /// runtime.executable_cache_key_file: a file whose bytes are the HMAC-SHA256 key that
  /// authenticates executable cache entries (runtime/executable_cache.h); "" = none.
  std::string executable_cache_key_file;
  std::string pjrt_plugin; // runtime.pjrt_plugin: plugin .so path; "" = default
  int64_t cpu_threads = 0; // runtime.cpu_threads in [0, 4096]; 0 = all cores
  /// runtime.event_spin_us in [0, 1000000]: how long a GPU worker's thread polls a PJRT event
  /// before it sleeps (pjrt::ClientOptions::event_spin); 0 = sleep at once.
  int64_t event_spin_us = 20000;
  /// runtime.completion_polling: see a GPU execution finish through the vendor's
  /// completion poller (pjrt::ClientOptions::poll_completion).
  bool completion_polling = true;
};

/// `scheduler.models.<name>:` block.
struct ModelSchedulerConfig {
  double weight = 1.0;                   // > 0, relative share under `fair`
  std::optional<Residency> residency;    // unset = resolved at startup
  bool pin_to_gpu = false;               // alias: residency pinned_device when residency is unset
  std::optional<int64_t> max_batch_size; // >= 1; unset = uncapped
};

/// `scheduler:` block.
struct SchedulerConfig {
  Discipline discipline = Discipline::kFair; // scheduler.discipline: fair | fifo | edf
  double ema_halflife_seconds = 30.0;        // > 0
  double recency_penalty_cap = 0.25;         // (0, 1]
  double coalescing_discount = 0.1;          // [0, 1)
  double cost_ema_alpha = 0.2;               // (0, 1]
  int64_t max_queue_depth = 1024;            // > 0, per model
  int64_t max_queue_delay_microseconds = 0;  // >= 0; 0 = dispatch at once (the reference)
  int64_t max_batches_in_flight = 0;         // 0 = by backend (cpu 1, cuda 2); else 1..16
  int64_t compaction_interval = 0;           // >= 0; 0 = off
  double dispatch_timeout_seconds = 30.0;    // > 0; parsed, not enforced (as the reference)
  bool coalescing = true;                    // scheduler.coalescing
  std::map<std::string, ModelSchedulerConfig> models; // scheduler.models.<name>
};

/// `hooks:` block: model.py pre/post-processing hooks (docs/hooks.md).
struct HooksConfig {
  std::string python; // hooks.python; "" = .venv/bin/python beside the build, else python3
  int64_t processes_per_model = 1;      // hooks.processes_per_model in [1, 64]
  int64_t timeout_ms = 10000;           // hooks.timeout_ms in [1, 3600000]
  int64_t meta_concurrency = 2;         // hooks.meta_concurrency in [1, 1024]: meta runs at once
  int64_t max_memory_mb = 2048;         // hooks.max_memory_mb in [0, 16777216]; 0 = no limit
  std::vector<std::string> python_path; // hooks.python_path: absolute directories
  std::vector<std::string> allowed_packages; // hooks.allowed_packages; empty = any
};

/// `endpoints:` block.
struct EndpointsConfig {
  std::string host = "127.0.0.1";       // endpoints.host
  int64_t port = 8080;                  // endpoints.port (gRPC) in [1, 65535]
  int64_t metrics_port = 0;             // endpoints.metrics_port in [0, 65535]; 0 = off
  int64_t max_concurrent_requests = 64; // >= 0; 0 = uncapped
  int64_t http_port = 8000;             // endpoints.http_port (KServe REST) in [0, 65535]; 0 = off
  /// endpoints.shared_memory: off | system. System: Triton's system shared-memory
  /// extension, for loopback peers only (protocol/shared_memory.h).
  SharedMemoryMode shared_memory = SharedMemoryMode::kOff;
  /// endpoints.shared_memory_prefix: the keys a region may name start with it ('/' first).
  std::string shared_memory_prefix = "/rs_";
  /// endpoints.shared_memory_allowed_uids as written (decimal uids).
  std::vector<std::string> shared_memory_allowed_uids;
  /// The same as numbers, checked by the worker's rules; empty = the server's own uid.
  std::vector<uint32_t> shared_memory_uids;
  /// endpoints.max_request_bytes: the largest HTTP request body of any route, in bytes, on
  /// the wire and once decompressed, in [1, 2^31-1] (docs/protocols.md, "HTTP transport").
  int64_t max_request_bytes = int64_t{64} << 20;
  /// endpoints.cors_allowed_origins: the Origin values (`scheme://host[:port]`, or `*` for
  /// any) whose cross-origin HTTP requests are allowed (frontend/http_cors.h); empty = off.
  std::vector<std::string> cors_allowed_origins;
};

/// `grpc:` block.
struct GrpcConfig {
  int64_t max_recv_msg_bytes = 536870912; // in [1, 2^31-1]
  int64_t max_send_msg_bytes = 536870912; // in [1, 2^31-1]
  int64_t polling_threads = 4;            // grpc.polling_threads in [1, 256]
  /// grpc.busy_poll_us in [0, 1000000]; unset: 20000 with runtime.backend cuda, 0 with cpu
  /// (where a polling core is one the executor lacks); resolved when the config is built.
  int64_t busy_poll_us = -1;
};

/// `tls:` block (the reference's gateway key names, reference-system.md section 8.1; here
/// enforced): TLS on the gRPC and HTTP ports, off while cert_file is "". The metrics port
/// stays plaintext.
struct TlsConfig {
  std::string cert_file;      // tls.cert_file: PEM certificate chain of the server
  std::string key_file;       // tls.key_file: PEM private key (required with cert_file)
  std::string client_ca_file; // tls.client_ca_file: PEM CAs; set = client certificates required
};

/// Everything one worker needs, resolved and validated.
struct WorkerConfig {
  std::string worker_name; // the node file's worker name (or "worker<i>" when synthesized)
  int64_t worker_index = 0;
  std::string node_host;      // the worker entry's `host:` ("" when absent)
  std::optional<int64_t> gpu; // the worker entry's `gpu:`
  std::string node_file;      // path of the node file

  std::vector<std::string> model_dirs; // [model_repo], or INFERENCE_SERVER_MODEL_DIRS
  /// cache_dir ("" default): when set, executable cache entries live in
  /// `<cache_dir>/<bundle name>/` instead of each bundle's `.cache/`
  /// (runtime/executable_cache.h executableCacheDir).
  std::string cache_dir;
  ModelControlMode model_control_mode = ModelControlMode::kDynamic;
  double model_poll_seconds = 15.0;        // >= 0; > 0 in dynamic mode
  std::vector<std::string> models_include; // allowlist; empty = all

  RuntimeConfig runtime;
  SchedulerConfig scheduler;
  HooksConfig hooks;
  EndpointsConfig endpoints;
  GrpcConfig grpc;
  TlsConfig tls;

  /// (VAR, value) of every INFERENCE_SERVER_* override applied, sorted by VAR
  /// (the reference's "Configuration overridden by environment").
  std::vector<std::pair<std::string, std::string>> env_overrides;
  /// Dotted keys whose value came from the environment ("runtime.numerics", "model_dirs").
  std::set<std::string> env_keys;
  /// Dotted keys the regulated profile set because nothing set them explicitly, e.g.
  /// "runtime.batch_sizes", "scheduler.coalescing",
  /// "runtime.xla_flags.xla_gpu_exclude_nondeterministic_ops".
  std::vector<std::string> profile_keys;
  /// REACTANT_IMAGE_IDENTITY_FILE and REACTANT_IMAGE_DIGEST as the environment the worker
  /// resolved against holds them (absent ones left out): the worker reads its image's
  /// identity from them at start (config/image_identity.h).
  std::map<std::string, std::string> image_env;
};

/// Every resolved setting as (dotted key, value text), sorted by key, for the
/// `Effective configuration` startup line: lists as "[a, b]", maps as "{k: v}", unset
/// optionals as "unset". Per-model scheduler settings appear as
/// "scheduler.models.<name>.weight" etc.
std::vector<std::pair<std::string, std::string>> effectiveSettings(const WorkerConfig &config);

} // namespace rs::config
