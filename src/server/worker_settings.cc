//===- server/worker_settings.cc - A worker's options from its config -----===//
//
// The `Effective configuration` and `REGULATED PROFILE` lines, and the translation of the
// resolved configuration into the options of each part a worker starts: the GPU backend
// (with its `GPU backend ready` line), the model repository and its executable cache key,
// the TF32 gate, the scheduler and the service.
//
//===----------------------------------------------------------------------===//
#include "server/worker_impl.h"

#include "hooks/hook_factory.h"
#include "pjrt/compile_options.h"
#include "pjrt/vendor_profile.h"
#include "server/gpu_flags.h"
#include "support/file.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <sstream>

namespace rs::server::detail {

void logEffectiveConfiguration(const config::WorkerConfig &config, const ServerBuild &build,
                               const config::ImageIdentity &image) {
  std::ostringstream os;
  os << "build.version=" << build.version << " build.commit=" << build.commit
     << " build.compiler=" << build.compiler << " build.build_type=" << build.build_type
     << " build.eigen=" << build.eigen;
  for (const auto &[key, value] : config::imageSettings(image))
    os << ' ' << key << '=' << value;
  for (const auto &[key, value] : config::effectiveSettings(config))
    os << ' ' << key << '=' << value;
  os << fmt::format(" from_environment=[{}] from_profile=[{}]", fmt::join(config.env_keys, ", "),
                    fmt::join(config.profile_keys, ", "));
  spdlog::info("Effective configuration worker={} {}", config.worker_name, os.str());
  if (!config.env_overrides.empty()) {
    std::ostringstream env;
    for (const auto &[var, value] : config.env_overrides)
      env << (env.tellp() > 0 ? " " : "") << var << '=' << value;
    spdlog::info("Configuration overridden by environment {}", env.str());
  }
}

void logRegulatedProfile(const config::WorkerConfig &config) {
  const config::RuntimeConfig &rt = config.runtime;
  if (rt.profile != config::Profile::kRegulated)
    return;
  std::string flags;
  for (const auto &[key, value] : config::effectiveSettings(config))
    if (key == "runtime.xla_flags")
      flags = value;
  const std::string settings =
      fmt::format("batch_sizes={} coalescing={} xla_flags={} autotune={} executable_cache={}",
                  config::batchSizesName(rt.batch_sizes), config.scheduler.coalescing, flags,
                  rt.autotune, rt.executable_cache);
  if (rt.numerics == config::Numerics::kAuto) {
    spdlog::warn("REGULATED PROFILE numerics=auto: precision follows the hardware (TF32 where "
                 "the GPU has it), so results differ between GPU generations; pin "
                 "runtime.numerics to the validated mode (f32 or tf32) {}",
                 settings);
  } else {
    spdlog::info("REGULATED PROFILE numerics={} {}", config::numericsName(rt.numerics), settings);
  }
}

passes::NumericsMode numericsMode(config::Numerics numerics) {
  switch (numerics) {
  case config::Numerics::kF32: return passes::NumericsMode::kF32;
  case config::Numerics::kAuto: return passes::NumericsMode::kAuto;
  case config::Numerics::kTf32: return passes::NumericsMode::kTf32;
  }
  return passes::NumericsMode::kAuto;
}

Result<std::string> readExecutableCacheKey(const config::RuntimeConfig &rt) {
  if (rt.executable_cache_key_file.empty())
    return std::string();
  Result<std::string> key = readWholeFile(rt.executable_cache_key_file);
  if (!key.isOk())
    return invalidArgument() << "runtime.executable_cache_key_file: " << key.status().message();
  if (key->empty())
    return invalidArgument() << "runtime.executable_cache_key_file: "
                             << rt.executable_cache_key_file
                             << " is empty (expected the key's bytes)";
  return key;
}

runtime::ModelRepositoryOptions repositoryOptions(const config::WorkerConfig &config,
                                                  const ServerBuild &build,
                                                  const std::string &cache_key) {
  const config::RuntimeConfig &rt = config.runtime;
  runtime::ModelRepositoryOptions o;
  o.numerics = numericsMode(rt.numerics);
  o.largest_batch_only = rt.batch_sizes == config::BatchSizes::kLargest;
  o.executable_cache = rt.executable_cache;
  o.cache_dir = config.cache_dir;
  o.executable_cache_key = cache_key;
  // What else decides the compiled program: the XLA flags and the autotune level.
  o.compile_settings = "xla_flags=[" + pjrt::formatXlaFlags(rt.xla_flags) +
                       "] autotune=" + (rt.autotune ? "true" : "false");
  o.server_build = build.toString();
  o.extensions =
      hooks::hookFactory(config.hooks, config.runtime.profile == config::Profile::kRegulated);
  return o;
}

ServingOptions servingOptions(const config::WorkerConfig &config, const ServerBuild &build,
                              int64_t weight_pool_bytes) {
  ServingOptions o;
  o.max_concurrent_requests = config.endpoints.max_concurrent_requests;
  o.meta_concurrency = config.hooks.meta_concurrency;
  o.meta_warmup = config.runtime.profile == config::Profile::kRegulated;
  o.info.device_ordinal = std::to_string(config.runtime.device_ordinal);
  o.device_ordinal = config.runtime.device_ordinal;
  o.info.control_mode = std::string(config::modelControlModeName(config.model_control_mode));
  o.info.discipline = std::string(config::disciplineName(config.scheduler.discipline));
  o.info.residency_mode = config.model_control_mode == config::ModelControlMode::kExplicit
                              ? "externally_managed"
                              : "self_managed";
  o.info.weight_cache = weight_pool_bytes > 0;
  o.info.build = build;
  o.weight_pool_bytes = weight_pool_bytes;
  for (const auto &[name, m] : config.scheduler.models)
    if (m.residency)
      o.residency[name] =
          *m.residency == config::Residency::kPinnedDevice   ? runtime::Residency::kPinnedDevice
          : *m.residency == config::Residency::kPinnedSystem ? runtime::Residency::kPinnedSystem
                                                             : runtime::Residency::kUnpinned;
  o.model_dirs = config.model_dirs;
  o.models_include = config.models_include;
  o.control_mode = o.info.control_mode;
  o.system_shared_memory = config.endpoints.shared_memory == config::SharedMemoryMode::kSystem;
  o.shared_memory.key_prefix = config.endpoints.shared_memory_prefix;
  o.shared_memory.allowed_uids = config.endpoints.shared_memory_uids;
  return o;
}

scheduler::SchedulerOptions schedulerOptions(const config::WorkerConfig &config) {
  scheduler::SchedulerOptions o;
  o.coalescing = config.scheduler.coalescing;
  o.batch_sizes = config.runtime.batch_sizes == config::BatchSizes::kLargest
                      ? scheduler::BatchSizePolicy::kLargest
                      : scheduler::BatchSizePolicy::kAll;
  o.max_queue_depth = config.scheduler.max_queue_depth;
  const config::SchedulerConfig &sc = config.scheduler;
  o.discipline = sc.discipline == config::Discipline::kFifo  ? scheduler::Discipline::kFifo
                 : sc.discipline == config::Discipline::kEdf ? scheduler::Discipline::kEdf
                                                             : scheduler::Discipline::kFair;
  o.ema_halflife_seconds = sc.ema_halflife_seconds;
  o.recency_penalty_cap = sc.recency_penalty_cap;
  o.coalescing_discount = sc.coalescing_discount;
  o.cost_ema_alpha = sc.cost_ema_alpha;
  o.max_queue_delay_us = std::chrono::microseconds(sc.max_queue_delay_microseconds);
  // 0 = by backend: the CPU executor spreads one batch over every core, so a second batch
  // would only compete for them; a GPU runs one batch while the host uploads, launches and
  // answers the next (docs/scheduler.md "Batches in flight").
  o.max_batches_in_flight = sc.max_batches_in_flight > 0
                                ? static_cast<int>(sc.max_batches_in_flight)
                                : (config.runtime.backend == config::Backend::kCuda ? 2 : 1);
  // The gRPC and HTTP handlers call submit() holding no lock: an idle device runs the
  // request on the handler's thread, one thread hop less (docs/scheduler.md).
  o.inline_dispatch = true;
  // A coalesced batch's answers go out on 4 threads: each is a reply encoded and sent by
  // gRPC, and the next batch waits for the clients' next requests (docs/scheduler.md).
  o.answer_threads = 3;
  for (const auto &[name, m] : sc.models)
    o.model_policies[name] = {.weight = m.weight, .max_batch_size = m.max_batch_size.value_or(0)};
  return o;
}

Result<std::unique_ptr<runtime::PjrtBackend>> createGpuBackend(const config::RuntimeConfig &rt) {
  const std::string vendor_name(config::backendName(rt.backend));
  const pjrt::VendorProfile *vendor = pjrt::findVendorProfile(vendor_name);
  if (vendor == nullptr)
    return invalidArgument() << "runtime.backend: no GPU vendor profile '" << vendor_name << "'";
  RS_RETURN_IF_ERROR(runtime::exportF32Environment(*vendor, numericsMode(rt.numerics)));
  runtime::PjrtBackendOptions o;
  o.vendor = vendor_name;
  o.plugin_path = rt.pjrt_plugin;
  o.client.device_ordinal = static_cast<int>(rt.device_ordinal);
  o.client.memory_fraction = rt.mem_fraction;
  o.client.preallocate = rt.preallocate;
  o.client.event_spin = std::chrono::microseconds(rt.event_spin_us);
  o.client.poll_completion = rt.completion_polling;
  RS_ASSIGN_OR_RETURN(o.xla_flags, gpuXlaFlags(rt));
  const auto start = std::chrono::steady_clock::now();
  RS_ASSIGN_OR_RETURN(std::unique_ptr<runtime::PjrtBackend> backend, runtime::createPjrtBackend(o));
  const runtime::DeviceInfo info = backend->deviceInfo();
  spdlog::info("GPU backend ready platform={} device={} ordinal={} compute_capability={} "
               "mem_fraction={} preallocate={} completion=\"{}\" xla_flags=[{}] plugin=[{}] "
               "seconds={:.3f}",
               info.platform, info.device_kind, info.device_ordinal, info.compute_capability,
               rt.mem_fraction, rt.preallocate, info.completion, backend->xlaFlags(),
               info.backend_version,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return backend;
}

runtime::Tf32GateOptions tf32GateOptions(const config::WorkerConfig &config,
                                         const ServerBuild &build, const std::string &cache_key) {
  const runtime::ModelRepositoryOptions repo = repositoryOptions(config, build, cache_key);
  runtime::Tf32GateOptions o;
  o.mode = repo.numerics;
  o.probe_cache_dir =
      config.model_dirs.empty()
          ? ""
          : runtime::repositoryCacheDir(config.model_dirs.front(), config.cache_dir);
  o.executable_cache = config.runtime.executable_cache;
  o.compile_settings = repo.compile_settings;
  o.server_build = repo.server_build;
  o.executable_cache_key = cache_key;
  return o;
}

} // namespace rs::server::detail
