//===- server/worker.cc - Bring-up and shutdown of one worker ---------------===//
#include "server/worker.h"

#include "frontend/metrics_health_server.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/numerics.h"
#include "pjrt/compile_options.h"
#include "pjrt/tf32_probe.h"
#include "runtime/cpu_backend.h"
#include "runtime/executable_cache.h"
#include "runtime/pjrt_backend.h"
#include "runtime/weight_cache.h"
#include "server/evidence.h"
#include "server/gpu_flags.h"

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

/// "[a, b]" of `items`.
template <typename C> std::string listText(const C &items) {
  std::string out = "[";
  for (const auto &item : items)
    out += (out.size() > 1 ? ", " : "") + std::string(item);
  return out + "]";
}

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
  os << " from_environment=" << listText(config.env_keys)
     << " from_profile=" << listText(config.profile_keys);
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

/// How the repository loads programs, from the worker's settings.
runtime::ModelRepositoryOptions repositoryOptions(const config::WorkerConfig &config,
                                                  const ServerBuild &build) {
  const config::RuntimeConfig &rt = config.runtime;
  runtime::ModelRepositoryOptions o;
  switch (rt.numerics) {
  case config::Numerics::kF32: o.numerics = passes::NumericsMode::kF32; break;
  case config::Numerics::kAuto: o.numerics = passes::NumericsMode::kAuto; break;
  case config::Numerics::kTf32: o.numerics = passes::NumericsMode::kTf32; break;
  }
  o.largest_batch_only = rt.batch_sizes == config::BatchSizes::kLargest;
  o.executable_cache = rt.executable_cache;
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

/// Creates the PJRT backend for `runtime.backend: cuda` (plugin, device, allocator and XLA
/// flags from `rt`). Under numerics f32, NVIDIA_TF32_OVERRIDE=0 is exported first, since
/// the CUDA libraries read it when the client is created.
Result<std::unique_ptr<runtime::PjrtBackend>> createGpuBackend(const config::RuntimeConfig &rt) {
  if (rt.numerics == config::Numerics::kF32 && ::setenv("NVIDIA_TF32_OVERRIDE", "0", 1) != 0)
    return internalError() << "cannot set NVIDIA_TF32_OVERRIDE=0 for numerics f32";
  runtime::PjrtBackendOptions o;
  o.plugin_path = rt.pjrt_plugin;
  o.client.device_ordinal = static_cast<int>(rt.device_ordinal);
  o.client.memory_fraction = rt.mem_fraction;
  o.client.preallocate = rt.preallocate;
  o.client.event_spin = std::chrono::microseconds(rt.event_spin_us);
  RS_ASSIGN_OR_RETURN(o.xla_flags, gpuXlaFlags(rt));
  const auto start = std::chrono::steady_clock::now();
  RS_ASSIGN_OR_RETURN(std::unique_ptr<runtime::PjrtBackend> backend, runtime::createPjrtBackend(o));
  const runtime::DeviceInfo info = backend->deviceInfo();
  spdlog::info("GPU backend ready platform={} device={} ordinal={} compute_capability={} "
               "mem_fraction={} preallocate={} xla_flags=[{}] plugin=[{}] seconds={:.3f}",
               info.platform, info.device_kind, info.device_ordinal, info.compute_capability,
               rt.mem_fraction, rt.preallocate, backend->xlaFlags(), info.backend_version,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return backend;
}

using ProbeFacts = std::vector<std::pair<std::string, std::string>>;

/// Where the TF32 probe's programs are cached: `<model_repo>/.cache/`, keyed like every
/// served program.
struct ProbeCache {
  runtime::ExecutableCache cache;
  runtime::CacheKeyParts parts;
};

ProbeCache probeCache(const runtime::Backend &backend, const config::WorkerConfig &config,
                      const ServerBuild &build) {
  const runtime::ModelRepositoryOptions repo = repositoryOptions(config, build);
  runtime::CacheKeyParts parts;
  parts.compile_settings = repo.compile_settings;
  parts.device = backend.deviceInfo();
  parts.server_build = repo.server_build;
  return {runtime::ExecutableCache(config.model_dirs.empty() ? "" : config.model_dirs.front(),
                                   config.runtime.executable_cache && !config.model_dirs.empty()),
          std::move(parts)};
}

/// One leg of the TF32 probe: C = A·I with `module` (pjrt/tf32_probe.h), compiled through
/// the executable cache like every served program (so a warm start compiles nothing).
/// Returns C; `ms` gets the leg's time including compile or load.
Result<Tensor> runProbeLeg(runtime::Backend &backend, const ir::Module &module,
                           const std::string &name, ProbeCache &cache, double *ms) {
  const auto start = std::chrono::steady_clock::now();
  RS_ASSIGN_OR_RETURN(runtime::CachedProgram program,
                      cache.cache.loadOrCompile(backend, module, name, cache.parts));
  const Tensor a = pjrt::tf32ProbeMatrix();
  const std::vector<Tensor> args{a, pjrt::tf32ProbeIdentity()};
  RS_ASSIGN_OR_RETURN(std::vector<Tensor> out, program.executable->execute(args));
  *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  spdlog::info("TF32 probe leg={} executable_cache={} ms={:.1f}", name,
               program.outcome.hit ? "hit" : "miss (" + program.outcome.miss_reason + ")", *ms);
  if (out.size() != 1)
    return internalError() << "TF32 probe leg " << name << ": " << out.size()
                           << " results, expected 1";
  return out.front();
}

/// Runs the TF32 probe (reference-system.md §3.2; the worker runs it while the models load) and
/// logs the `TF32 probe` line. DEFAULT leg: tf32_active (a failure only warns). Pinned leg
/// (numerics f32 only): the probe's product after the numerics pass, i.e. the path every
/// served f32 program takes. FailedPrecondition under f32 unless the pin is bit-exact, and
/// under tf32 unless the probe shows TF32 in use. Returns the evidence fields.
Result<ProbeFacts> runGpuTf32Probe(runtime::Backend &backend, const config::WorkerConfig &config,
                                   const ServerBuild &build) {
  const config::Numerics numerics = config.runtime.numerics;
  const bool f32 = numerics == config::Numerics::kF32;
  const std::string_view mode = config::numericsName(numerics);
  const Tensor a = pjrt::tf32ProbeMatrix();
  double default_ms = 0, pinned_ms = 0;
  std::optional<bool> tf32_active;
  std::string default_error;
  ProbeCache cache = probeCache(backend, config, build);
  RS_ASSIGN_OR_RETURN(ir::Module probe,
                      ir::parseModule(pjrt::tf32ProbeProgram("DEFAULT"), "tf32_probe.mlir"));
  Result<Tensor> c = runProbeLeg(backend, probe, "tf32_probe.default", cache, &default_ms);
  if (c.isOk()) {
    int64_t mismatches = 0;
    const pjrt::ProbeVerdict verdict = pjrt::classifyProbeOutput(a, *c, &mismatches);
    if (verdict != pjrt::ProbeVerdict::kOther)
      tf32_active = verdict == pjrt::ProbeVerdict::kTf32;
    else
      default_error = std::to_string(mismatches) + " entries differ from A, not all 1.0";
  } else {
    default_error = c.status().toString();
    spdlog::warn("TF32 probe: the DEFAULT leg failed: {}", default_error);
  }
  std::string pinned = "skipped";
  int64_t pinned_mismatches = 0;
  if (f32) {
    const runtime::DeviceInfo info = backend.deviceInfo();
    RS_RETURN_IF_ERROR(
        passes::pinNumerics(probe, {passes::NumericsMode::kF32,
                                    passes::targetHasTf32(info.platform, info.compute_capability)})
            .status());
    RS_ASSIGN_OR_RETURN(Tensor pc,
                        runProbeLeg(backend, probe, "tf32_probe.pinned", cache, &pinned_ms));
    const bool exact =
        pjrt::classifyProbeOutput(a, pc, &pinned_mismatches) == pjrt::ProbeVerdict::kExact;
    pinned = exact ? "true" : "false";
  }
  const std::string active = tf32_active ? (*tf32_active ? "true" : "false") : "unknown";
  spdlog::info("TF32 probe numerics={} tf32_active={} pinned_exact={} default_ms={:.1f} "
               "pinned_ms={:.1f}{}",
               mode, active, pinned, default_ms, pinned_ms,
               default_error.empty() ? "" : " default_error=" + default_error);
  if (f32 && pinned != "true")
    return failedPrecondition() << "TF32 probe: numerics f32 but the pinned product is not "
                                   "bit-exact ("
                                << pinned_mismatches << " of "
                                << pjrt::kTf32ProbeSize * pjrt::kTf32ProbeSize
                                << " entries differ); the device does not compute f32 exactly";
  if (numerics == config::Numerics::kTf32 && tf32_active != true)
    return failedPrecondition() << "TF32 probe: numerics tf32 but the device does not compute "
                                   "in TF32 (tf32_active expected true, got "
                                << active << ")";
  return ProbeFacts{
      {"numerics", std::string(mode)}, {"tf32_active", active}, {"pinned_exact", pinned}};
}

} // namespace

Worker::Worker(WorkerOptions options)
    : config_(std::move(options.config)), build_(std::move(options.build)),
      ephemeral_ports_(options.ephemeral_ports) {}

Worker::~Worker() { shutdown(); }

namespace {

/// glibc gives each thread that allocates a malloc arena of its own (up to 8 per core), and
/// memory freed into an arena serves only that arena's later allocations: when a CPU
/// worker's batches run on several threads (the gRPC polling threads dispatch inline), every
/// one of them keeps a batch's worth of freed activations. Two arenas keep the peak near one
/// batch's (bench/serve_rss.sh, bert_bench, 4 polling threads: 155 MB, 143 MB with two). A
/// MALLOC_ARENA_MAX in the environment wins.
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
  std::vector<std::pair<std::string, std::string>> probe_facts;
  BackendFacts backend_facts; // plugin, CUDA and driver versions (evidence; "" on the cpu)
  // The TF32 probe runs on its own thread while the models load: it needs only the
  // device (the numerics pass reads the device description, not the probe), and its
  // first execution's one-time GPU setup overlaps the loads. A failed probe still fails
  // the start, after the loads; the log lines are the same, possibly interleaved.
  std::future<Result<ProbeFacts>> probe;
  if (rt.backend == config::Backend::kCuda) {
    Result<std::unique_ptr<runtime::PjrtBackend>> gpu = createGpuBackend(rt);
    if (gpu.isOk()) {
      backend_facts = pjrtBackendFacts(**gpu);
      runtime::PjrtBackend *device = gpu->get(); // owned by backend_ for the Worker's life
      probe = std::async(std::launch::async,
                         [device, this] { return runGpuTf32Probe(*device, config_, build_); });
      backend_ = std::move(*gpu);
    } else if (!rt.allow_cpu_fallback) {
      return gpu.status().withPrefix("runtime.backend: cuda (runtime.allow_cpu_fallback: false)");
    } else {
      spdlog::warn("runtime.backend=cuda failed to start ({}); falling back to the cpu backend "
                   "(runtime.allow_cpu_fallback=true)",
                   gpu.status().message());
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
    spdlog::info("TF32 probe numerics={} tf32_active=not applicable (cpu backend computes f32 "
                 "exactly) pinned_exact=not applicable",
                 config::numericsName(rt.numerics));
    probe_facts = {{"numerics", std::string(config::numericsName(rt.numerics))},
                   {"tf32_active", "not applicable (cpu backend computes f32 exactly)"},
                   {"pinned_exact", "not applicable"}};
  }
  facts_ = std::make_unique<WorkerFacts>();
  facts_->config = config_;
  facts_->build = build_;
  facts_->device = backend_->deviceInfo();
  facts_->backend = std::move(backend_facts);
  facts_->tf32_probe = std::move(probe_facts);
  facts_->started_at = protocol::utcNow();

  logRegulatedProfile(config_);
  repository_ =
      std::make_unique<runtime::ModelRepository>(backend_, repositoryOptions(config_, build_));
  for (const std::string &dir : config_.model_dirs)
    RS_RETURN_IF_ERROR(repository_->loadRepository(dir, config_.models_include));
  if (probe.valid()) {
    RS_ASSIGN_OR_RETURN(facts_->tf32_probe, probe.get());
  }
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
  service_ =
      std::make_unique<WorkerService>(*repository_, schedulerOptions(config_), config_.worker_name,
                                      servingOptions(config_, build_, pool));
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
  grpc_options.shared_memory = &service_->sharedMemory();
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
    http_options.shared_memory = &service_->sharedMemory();
    http_options.reporter = service_.get();
    http_ = std::make_unique<frontend::HttpServer>(http_options, *service_, *service_);
    RS_RETURN_IF_ERROR(http_->start());
  }
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
  if (config_.model_control_mode == config::ModelControlMode::kDynamic)
    startWatchers();
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
