//===- server/worker.cc - Bring-up and shutdown of one worker ---------------===//
#include "server/worker.h"

#include "frontend/metrics_health_server.h"
#include "pjrt/compile_options.h"
#include "pjrt/vendor_profile.h"
#include "runtime/cpu_backend.h"
#include "runtime/numerics_gate.h"
#include "runtime/pjrt_backend.h"
#include "runtime/weight_cache.h"
#include "server/evidence.h"
#include "server/gpu_flags.h"
#include "server/memory_trimmer.h"
#include "support/file.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>
#include <optional>
#include <sstream>

namespace rs::server {
namespace {

/// The `Effective configuration` line: the build's identity (as `--version`), every
/// resolved key=value sorted, then which keys came from the environment and which the
/// regulated profile set.
void logEffectiveConfiguration(const config::WorkerConfig &config, const ServerBuild &build) {
  std::ostringstream os;
  os << "build.version=" << build.version << " build.commit=" << build.commit
     << " build.compiler=" << build.compiler << " build.build_type=" << build.build_type
     << " build.eigen=" << build.eigen;
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

/// The `REGULATED PROFILE` banner (seed/reproducibility.md "Startup evidence"): info
/// under numerics f32 or tf32, a warning under auto (precision then follows the hardware).
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

/// runtime.numerics as the pass names it.
passes::NumericsMode numericsMode(config::Numerics numerics) {
  switch (numerics) {
  case config::Numerics::kF32: return passes::NumericsMode::kF32;
  case config::Numerics::kAuto: return passes::NumericsMode::kAuto;
  case config::Numerics::kTf32: return passes::NumericsMode::kTf32;
  }
  return passes::NumericsMode::kAuto;
}

/// The executable cache's HMAC key: the bytes of runtime.executable_cache_key_file ("" when
/// unset). InvalidArgument naming the key when the file cannot be read or is empty.
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

/// How the repository loads programs, from the worker's settings and the cache's HMAC key.
runtime::ModelRepositoryOptions repositoryOptions(const config::WorkerConfig &config,
                                                  const ServerBuild &build,
                                                  const std::string &cache_key) {
  const config::RuntimeConfig &rt = config.runtime;
  runtime::ModelRepositoryOptions o;
  o.numerics = numericsMode(rt.numerics);
  o.largest_batch_only = rt.batch_sizes == config::BatchSizes::kLargest;
  o.executable_cache = rt.executable_cache;
  o.executable_cache_key = cache_key;
  // What else decides the compiled program: the XLA flags and the autotune level.
  o.compile_settings = "xla_flags=[" + pjrt::formatXlaFlags(rt.xla_flags) +
                       "] autotune=" + (rt.autotune ? "true" : "false");
  o.server_build = build.toString();
  return o;
}

/// Admission, worker_info and build_info labels, the request log, the live repository and the
/// weight cache, from the worker's settings. `weight_pool_bytes`: see Worker::start().
ServingOptions servingOptions(const config::WorkerConfig &config, const ServerBuild &build,
                              int64_t weight_pool_bytes) {
  ServingOptions o;
  o.max_concurrent_requests = config.endpoints.max_concurrent_requests;
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

/// Creates the PJRT backend of the GPU vendor `runtime.backend` names (plugin, device,
/// allocator and XLA flags from `rt`). Under numerics f32 the vendor profile's
/// f32Environment() (CUDA: NVIDIA_TF32_OVERRIDE=0) is exported first, since the vendor
/// libraries read it when the client is created.
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

/// Where the TF32 gate compiles the probe: as the repository compiles programs.
runtime::Tf32GateOptions tf32GateOptions(const config::WorkerConfig &config,
                                         const ServerBuild &build, const std::string &cache_key) {
  const runtime::ModelRepositoryOptions repo = repositoryOptions(config, build, cache_key);
  runtime::Tf32GateOptions o;
  o.mode = repo.numerics;
  o.cache_dir = config.model_dirs.empty() ? "" : config.model_dirs.front();
  o.executable_cache = config.runtime.executable_cache;
  o.compile_settings = repo.compile_settings;
  o.server_build = repo.server_build;
  o.executable_cache_key = cache_key;
  return o;
}

} // namespace

Worker::Worker(WorkerOptions options)
    : config_(std::move(options.config)), build_(std::move(options.build)),
      ephemeral_ports_(options.ephemeral_ports),
      before_models_load_(std::move(options.before_models_load)),
      before_dispatch_(std::move(options.before_dispatch)) {}

Worker::~Worker() { shutdown(); }

namespace {

/// glibc gives each thread that allocates a malloc arena of its own (up to 8 per core), and
/// memory freed into an arena serves only that arena's later allocations: when a CPU
/// worker's batches run on several threads (the gRPC polling threads dispatch inline), every
/// one of them keeps a batch's worth of freed activations. Two arenas keep the peak near one
/// batch's (bench/serve_rss.sh measures it; docs/performance.md). A MALLOC_ARENA_MAX in the
/// environment wins.
void limitMallocArenas() {
#if defined(__GLIBC__)
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr)
    ::mallopt(M_ARENA_MAX, 2);
#endif
}

} // namespace

Status Worker::start() {
  logEffectiveConfiguration(config_, build_);
  const config::RuntimeConfig &rt = config_.runtime;
  RS_ASSIGN_OR_RETURN(cache_key_, readExecutableCacheKey(rt));
  std::vector<std::pair<std::string, std::string>> probe_facts;
  BackendFacts backend_facts; // plugin, CUDA and driver versions (evidence; "" on the cpu)
  // The TF32 probe runs on its own thread while the models load: it needs only the
  // device (the numerics pass reads the device description, not the probe), and its
  // first execution's one-time GPU setup overlaps the loads. A failed probe still fails
  // the start, after the loads; the log lines are the same, possibly interleaved.
  std::future<Result<runtime::Tf32Facts>> probe;
  if (rt.backend != config::Backend::kCpu) { // a GPU vendor's PJRT plugin
    const std::string_view vendor = config::backendName(rt.backend);
    Result<std::unique_ptr<runtime::PjrtBackend>> gpu = createGpuBackend(rt);
    if (gpu.isOk()) {
      backend_facts = pjrtBackendFacts(**gpu);
      runtime::PjrtBackend *device = gpu->get(); // owned by backend_ for the Worker's life
      probe = std::async(std::launch::async,
                         [device, options = tf32GateOptions(config_, build_, cache_key_)] {
                           return runtime::runTf32Gate(*device, options);
                         });
      backend_ = std::move(*gpu);
    } else if (!rt.allow_cpu_fallback) {
      return gpu.status().withPrefix(
          fmt::format("runtime.backend: {} (runtime.allow_cpu_fallback: false)", vendor));
    } else {
      spdlog::warn("runtime.backend={} failed to start ({}); falling back to the cpu backend "
                   "(runtime.allow_cpu_fallback=true)",
                   vendor, gpu.status().message());
    }
  }
  if (!backend_) {
    if (rt.numerics == config::Numerics::kTf32)
      return failedPrecondition() << "runtime.numerics: tf32 needs a GPU with TF32; the cpu "
                                     "backend computes f32 exactly (use f32 or auto)";
    limitMallocArenas();
    runtime::CpuBackendOptions cpu_options;
    cpu_options.num_threads = static_cast<int>(rt.cpu_threads);
    RS_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Backend> backend,
                        runtime::createCpuBackend(cpu_options));
    backend_ = std::move(backend);
    probe_facts = runtime::cpuTf32Facts(numericsMode(rt.numerics));
  }
  trimmer_ = std::make_unique<MemoryTrimmer>();
  facts_ = std::make_unique<WorkerFacts>();
  facts_->config = config_;
  facts_->build = build_;
  facts_->device = backend_->deviceInfo();
  facts_->backend = std::move(backend_facts);
  facts_->tf32_probe = std::move(probe_facts);
  facts_->started_at = protocol::utcNow();

  logRegulatedProfile(config_);
  repository_ = std::make_unique<runtime::ModelRepository>(
      backend_, repositoryOptions(config_, build_, cache_key_));
  // The weight cache's pool: on the CPU backend a share of the host's memory (the arena);
  // the PJRT backend uploads weights to the device at load and keeps them (no cache).
  const bool cpu = backend_->deviceInfo().platform == "cpu";
  const int64_t arena = weight_arena_bytes_ > 0 ? weight_arena_bytes_ : runtime::hostMemoryBytes();
  const int64_t pool = cpu ? runtime::weightPoolBytes(arena, rt.weight_cache_fraction,
                                                      rt.weight_cache_wiggle_fraction)
                           : 0;
  if (pool > 0)
    spdlog::info("weight budget resolved arena_bytes={} weight_pool_bytes={} fraction={} "
                 "wiggle={}",
                 arena, pool, rt.weight_cache_fraction, rt.weight_cache_wiggle_fraction);
  scheduler::SchedulerOptions scheduling = schedulerOptions(config_);
  if (before_dispatch_)
    scheduling.prepare_run = [hook = before_dispatch_](const std::string &model) {
      hook(model);
      return Status::ok();
    };
  service_ =
      std::make_unique<WorkerService>(*repository_, std::move(scheduling), config_.worker_name,
                                      servingOptions(config_, build_, pool));
  // Liveness and metrics answer before any model loads (a slow compile must not fail a
  // liveness probe); readiness stays false until the startup loads are done and the
  // front-ends listen.
  if (config_.endpoints.metrics_port > 0) {
    frontend::MetricsHealthServerOptions metrics_options;
    metrics_options.host = config_.endpoints.host;
    metrics_options.port = ephemeral_ports_ ? 0 : static_cast<int>(config_.endpoints.metrics_port);
    WorkerService *service = service_.get();
    metrics_ = std::make_unique<frontend::MetricsHealthServer>(
        metrics_options, [service] { return service->serverReady(); },
        [service] { return service->renderMetrics(); });
    RS_RETURN_IF_ERROR(metrics_->start());
  }
  if (before_models_load_)
    before_models_load_();
  for (const std::string &dir : config_.model_dirs)
    RS_RETURN_IF_ERROR(repository_->loadRepository(dir, config_.models_include));
  if (probe.valid()) {
    RS_ASSIGN_OR_RETURN(facts_->tf32_probe, probe.get());
  }
  service_->registerLoadedModels();
  size_t ready = 0, failed = 0;
  for (const auto &s : repository_->states())
    (s.model ? ready : failed)++;
  spdlog::info("models ready loaded={} failed={}", ready, failed);
  if (ready + failed == 0) // serving nothing is allowed (models may arrive), but say why
    for (const std::string &dir : config_.model_dirs)
      spdlog::warn("model repository {} holds no bundle: a bundle is a subdirectory with a "
                   "manifest.yaml{}{}",
                   dir,
                   std::filesystem::exists(std::filesystem::path(dir) / "manifest.yaml")
                       ? "; this directory is itself a bundle, so model_repo should name its parent"
                       : "",
                   config_.models_include.empty() ? ""
                                                  : "; models_include may exclude every bundle");

  frontend::GrpcServerOptions grpc_options;
  grpc_options.host = config_.endpoints.host;
  grpc_options.port = ephemeral_ports_ ? 0 : static_cast<int>(config_.endpoints.port);
  grpc_options.max_recv_msg_bytes = config_.grpc.max_recv_msg_bytes;
  grpc_options.max_send_msg_bytes = config_.grpc.max_send_msg_bytes;
  grpc_options.threads = static_cast<int>(config_.grpc.polling_threads);
  grpc_options.busy_poll =
      std::chrono::microseconds(std::max<int64_t>(config_.grpc.busy_poll_us, 0));
  grpc_options.evidence = [this] { return evidenceJson(); };
  grpc_options.tls = {config_.tls.cert_file, config_.tls.key_file, config_.tls.client_ca_file};
  protocol::SharedMemoryRegistry *shared_memory =
      config_.endpoints.shared_memory == config::SharedMemoryMode::kSystem
          ? &service_->sharedMemory()
          : nullptr;
  grpc_options.shared_memory = shared_memory;
  grpc_options.reporter = service_.get();
  grpc_ = std::make_unique<frontend::GrpcServer>(grpc_options, *service_, *service_);
  RS_RETURN_IF_ERROR(grpc_->start());
  if (config_.endpoints.http_port > 0) {
    frontend::HttpServerOptions http_options;
    http_options.host = config_.endpoints.host;
    http_options.port = ephemeral_ports_ ? 0 : static_cast<int>(config_.endpoints.http_port);
    http_options.max_body_bytes = config_.endpoints.max_request_bytes;
    http_options.max_shared_memory_input_bytes = config_.grpc.max_recv_msg_bytes;
    http_options.evidence = [this] { return evidenceJson(); };
    http_options.tls = grpc_options.tls;
    http_options.shared_memory = shared_memory;
    http_options.reporter = service_.get();
    http_options.cors_allowed_origins = config_.endpoints.cors_allowed_origins;
    http_ = std::make_unique<frontend::HttpServer>(http_options, *service_, *service_);
    RS_RETURN_IF_ERROR(http_->start());
  }
  if (config_.model_control_mode == config::ModelControlMode::kDynamic)
    startWatchers();
  // Ready only once every front-end listens: whoever waits on /readyz (an orchestrator's
  // probe, a test) never sends a request to a data port that is not yet open.
  service_->markStartupDone();
  grpc_->refreshHealth();
  spdlog::info("serving grpc={}:{} http={} metrics={}", config_.endpoints.host, grpcPort(),
               httpPort(), metricsPort());
  return Status::ok();
}

bool Worker::drainAndShutdown(std::chrono::milliseconds exit_timeout) {
  for (auto &watcher : watchers_) // the repository stays as it is while draining
    watcher->stop();
  bool idle = true;
  if (service_) {
    service_->beginDrain();
    if (grpc_)
      grpc_->refreshHealth(); // grpc.health.v1 turns NOT_SERVING with readiness
    if (http_)
      http_->beginDrain();
    spdlog::info("draining: not ready, new requests get UNAVAILABLE, waiting up to {} ms for {} "
                 "in-flight request(s)",
                 exit_timeout.count(), service_->admission().inflight());
    idle = service_->waitIdle(std::chrono::steady_clock::now() + exit_timeout);
    if (!idle)
      spdlog::warn("exit timeout: {} request(s) still in flight; queued ones get UNAVAILABLE",
                   service_->admission().inflight());
    // Queued requests (only left after a timeout) fail with UNAVAILABLE; a running dispatch
    // finishes first, so the front-ends below have nothing left to wait for.
    service_->shutdown();
  }
  shutdown();
  return idle;
}

void Worker::startWatchers() {
  for (const std::string &dir : config_.model_dirs) {
    runtime::RepositoryWatcher::Actions actions;
    WorkerService *service = service_.get();
    actions.load = [service](const std::string &name, const std::string &bundle) {
      return service->loadModel(name, bundle);
    };
    actions.unload = [service](const std::string &name) { return service->unloadModel(name); };
    actions.rename = [service](const std::string &from, const std::string &to,
                               const std::string &bundle) {
      return service->renameModel(from, to, bundle);
    };
    auto watcher = std::make_unique<runtime::RepositoryWatcher>(
        dir, config_.models_include, config_.model_poll_seconds, std::move(actions));
    watcher->markCurrentApplied();
    watcher->start();
    spdlog::info("watcher: polling model_dir={} every {} s", dir, config_.model_poll_seconds);
    watchers_.push_back(std::move(watcher));
  }
}

void Worker::pollRepositories() {
  for (auto &watcher : watchers_)
    (void)watcher->poll();
}

void Worker::shutdown() {
  for (auto &watcher : watchers_) // no reload may start while the servers stop
    watcher->stop();
  if (grpc_)
    grpc_->shutdown();
  if (http_)
    http_->shutdown();
  if (metrics_)
    metrics_->shutdown();
  if (service_)
    service_->shutdown();
  trimmer_.reset();
}

std::string Worker::evidenceJson() const {
  if (!facts_ || !repository_)
    return "{}";
  return evidenceDocument(*facts_, *repository_)
      .dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

int Worker::grpcPort() const { return grpc_ ? grpc_->port() : 0; }
int Worker::httpPort() const { return http_ ? http_->port() : 0; }
int Worker::metricsPort() const { return metrics_ ? metrics_->port() : 0; }

} // namespace rs::server
