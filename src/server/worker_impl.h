//===- server/worker_impl.h - Private: a worker's settings and log lines --===//
//
// What Worker::start() (worker.cc) takes from worker_settings.cc: the startup log lines
// of the configuration, and the options of the backend, the repository, the TF32 gate,
// the scheduler and the service, each made from the worker's resolved configuration.
// Not part of the public API.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "config/image_identity.h"
#include "config/worker_config.h"
#include "runtime/model_repository.h"
#include "runtime/numerics_gate.h"
#include "runtime/pjrt_backend.h"
#include "scheduler/scheduler.h"
#include "server/worker_service.h"
#include "support/build_info.h"
#include "support/status.h"

#include <cstdint>
#include <memory>
#include <string>

namespace rs::server::detail {

/// The `Effective configuration` line: the build's identity (as `--version`), the image's
/// (config::imageSettings: `image=none` outside a release image), every resolved key=value
/// sorted, then which keys came from the environment and which the regulated profile set.
void logEffectiveConfiguration(const config::WorkerConfig &config, const ServerBuild &build,
                               const config::ImageIdentity &image);

/// The `REGULATED PROFILE` banner (seed/reproducibility.md "Startup evidence"): info
/// under numerics f32 or tf32, a warning under auto (precision then follows the hardware).
void logRegulatedProfile(const config::WorkerConfig &config);

/// runtime.numerics as the pass names it.
passes::NumericsMode numericsMode(config::Numerics numerics);

/// The executable cache's HMAC key: the bytes of runtime.executable_cache_key_file ("" when
/// unset). InvalidArgument naming the key when the file cannot be read or is empty.
Result<std::string> readExecutableCacheKey(const config::RuntimeConfig &rt);

/// How the repository loads programs, from the worker's settings and the cache's HMAC key.
runtime::ModelRepositoryOptions repositoryOptions(const config::WorkerConfig &config,
                                                  const ServerBuild &build,
                                                  const std::string &cache_key);

/// Admission, worker_info and build_info labels, the request log, the live repository and the
/// weight cache, from the worker's settings. `weight_pool_bytes`: see Worker::start().
ServingOptions servingOptions(const config::WorkerConfig &config, const ServerBuild &build,
                              int64_t weight_pool_bytes);

/// The scheduler's options from the worker's scheduler and runtime settings.
scheduler::SchedulerOptions schedulerOptions(const config::WorkerConfig &config);

/// Creates the PJRT backend of the GPU vendor `runtime.backend` names (plugin, device,
/// allocator and XLA flags from `rt`). Under numerics f32 the vendor profile's
/// f32Environment() (CUDA: NVIDIA_TF32_OVERRIDE=0) is exported first, since the vendor
/// libraries read it when the client is created.
Result<std::unique_ptr<runtime::PjrtBackend>> createGpuBackend(const config::RuntimeConfig &rt);

/// Where the TF32 gate compiles the probe: as the repository compiles programs.
runtime::Tf32GateOptions tf32GateOptions(const config::WorkerConfig &config,
                                         const ServerBuild &build, const std::string &cache_key);

} // namespace rs::server::detail
