//===- server/evidence.h - A worker's deployment-identity document --------===//
//
// The worker's document (format "reactant-server evidence 1", protocol/evidence.h describes
// it): the facts gathered at bring-up (WorkerFacts) and the repository's models now.
//
// Thread safety: evidenceDocument() reads the repository under its lock; WorkerFacts is a
// plain value (immutable once the worker serves).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "config/image_identity.h"
#include "config/worker_config.h"
#include "protocol/evidence.h"
#include "runtime/backend.h"
#include "runtime/model_repository.h"
#include "support/build_info.h"
#include "support/status.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rs::runtime {
class PjrtBackend;
} // namespace rs::runtime

namespace rs::server {

/// Settings of `Effective configuration` that describe this process's place (ports,
/// paths, its device ordinal, queue limits) rather than what it computes: they go under
/// instance.config and are never compared (the hooks.* keys say where the interpreter is and
/// how many run; what the hooks compute is compared as each model's `hooks` identity). Each
/// entry is a key or a prefix ending in '.'.
inline constexpr std::string_view kInstanceConfigKeys[] = {"cache_dir",
                                                           "endpoints.",
                                                           "grpc.",
                                                           "hooks.",
                                                           "model_control_mode",
                                                           "model_dirs",
                                                           "model_poll_seconds",
                                                           "runtime.device_ordinal",
                                                           "scheduler.max_queue_depth",
                                                           "tls."};

/// Backend facts beyond DeviceInfo (all "" on the cpu backend).
struct BackendFacts {
  std::string driver_version;      // NVIDIA kernel driver, "550.54.15"
  std::string cuda_version;        // the plugin's platform version, "cuda 13000"
  std::string pjrt_plugin_path;    // the loaded plugin library
  std::string pjrt_plugin_version; // PJRT C API version of the plugin, "0.90"
  std::string pjrt_plugin_sha256;  // SHA-256 of the plugin file
};

/// Everything the document says about the worker besides its models, gathered once at
/// bring-up (server/worker.cc).
struct WorkerFacts {
  config::WorkerConfig config;
  ServerBuild build;
  /// The release image the worker runs in (config/image_identity.h); unknown outside one.
  config::ImageIdentity image;
  runtime::DeviceInfo device;
  BackendFacts backend;
  /// The `TF32 probe` line's fields in order: numerics, tf32_active, pinned_exact.
  std::vector<std::pair<std::string, std::string>> tf32_probe;
  std::string started_at; // UTC, "2025-01-31T12:00:00Z"
};

/// The document described above for `facts` and the repository's models now.
nlohmann::json evidenceDocument(const WorkerFacts &facts,
                                const runtime::ModelRepository &repository);

/// The facts of a PJRT backend: plugin path, version and file hash, the plugin's platform
/// version and the driver version its vendor profile probes (pjrt::probeDriverVersion; CUDA:
/// /proc/driver/nvidia/version). A fact that cannot be read is "unknown (<reason>)", never
/// an error.
BackendFacts pjrtBackendFacts(const runtime::PjrtBackend &backend);

} // namespace rs::server
