//===- server/worker.cc - Bring-up and shutdown of one worker -------------===//
//
// Worker::start() in the bring-up order of server/worker.h (the options of each part come
// from worker_settings.cc), the drain and shutdown, the repository watchers, and the
// evidence document the front-ends serve.
//
//===----------------------------------------------------------------------===//
#include "server/worker.h"

#include "frontend/metrics_health_server.h"
#include "runtime/cpu_backend.h"
#include "runtime/weight_cache.h"
#include "server/evidence.h"
#include "server/memory_trimmer.h"
#include "server/worker_impl.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>

namespace rs::server {

using namespace detail;

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
  RS_ASSIGN_OR_RETURN(const config::ImageIdentity image,
                      config::readImageIdentity(config_.image_env));
  logEffectiveConfiguration(config_, build_, image);
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
  facts_->image = image;
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
