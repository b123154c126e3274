//===- server/worker.cc - Bring-up and shutdown of one worker ---------------===//
#include "server/worker.h"

#include "runtime/cpu_backend.h"
#include "runtime/executable_cache.h"
#include "server/evidence.h"
#include "server/metrics_health_server.h"

#include <spdlog/spdlog.h>

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
void logEffectiveConfiguration(const config::WorkerConfig &config) {
  const runtime::ServerBuild &build = runtime::serverBuild();
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
runtime::ModelRepositoryOptions repositoryOptions(const config::WorkerConfig &config) {
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
  std::string flags;
  for (const auto &[name, value] : rt.xla_flags)
    flags += (flags.empty() ? "" : " ") + ("--" + name + "=" + value);
  o.compile_settings = "xla_flags=[" + flags + "] autotune=" + (rt.autotune ? "true" : "false");
  o.server_build = runtime::serverBuild().toString();
  return o;
}

/// Admission, worker_info labels and the request log, from the worker's settings.
ServingOptions servingOptions(const config::WorkerConfig &config) {
  ServingOptions o;
  o.max_concurrent_requests = config.endpoints.max_concurrent_requests;
  o.info.device_ordinal = std::to_string(config.runtime.device_ordinal);
  o.info.control_mode = std::string(config::modelControlModeName(config.model_control_mode));
  o.info.discipline = std::string(config::disciplineName(config.scheduler.discipline));
  o.info.residency_mode = "self_managed";
  return o;
}

scheduler::SchedulerOptions schedulerOptions(const config::WorkerConfig &config) {
  scheduler::SchedulerOptions o;
  o.coalescing = config.scheduler.coalescing;
  o.batch_sizes = config.runtime.batch_sizes == config::BatchSizes::kLargest
                      ? scheduler::BatchSizePolicy::kLargest
                      : scheduler::BatchSizePolicy::kAll;
  o.max_queue_depth = config.scheduler.max_queue_depth;
  return o;
}

} // namespace

Worker::Worker(WorkerOptions options)
    : config_(std::move(options.config)), ephemeral_ports_(options.ephemeral_ports) {}

Worker::~Worker() { shutdown(); }

Status Worker::start() {
  logEffectiveConfiguration(config_);
  const config::RuntimeConfig &rt = config_.runtime;
  if (rt.backend == config::Backend::kCuda) {
    if (!rt.allow_cpu_fallback)
      return failedPrecondition()
             << "runtime.backend: cuda is not available in this worker (no PJRT backend is "
                "linked); set runtime.backend: cpu or runtime.allow_cpu_fallback: true";
    spdlog::warn("runtime.backend=cuda is not available; falling back to the cpu backend "
                 "(runtime.allow_cpu_fallback=true)");
  }
  if (rt.numerics == config::Numerics::kTf32)
    return failedPrecondition() << "runtime.numerics: tf32 needs a GPU with TF32; the cpu "
                                   "backend computes f32 exactly (use f32 or auto)";
  runtime::CpuBackendOptions cpu_options;
  cpu_options.num_threads = static_cast<int>(rt.cpu_threads);
  RS_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Backend> backend,
                      runtime::createCpuBackend(cpu_options));
  backend_ = std::move(backend);
  spdlog::info("TF32 probe numerics={} tf32_active=not applicable (cpu backend computes f32 "
               "exactly) pinned_exact=not applicable",
               config::numericsName(rt.numerics));
  facts_ = std::make_unique<WorkerFacts>();
  facts_->config = config_;
  facts_->device = backend_->deviceInfo();
  facts_->tf32_probe = {{"numerics", std::string(config::numericsName(rt.numerics))},
                        {"tf32_active", "not applicable (cpu backend computes f32 exactly)"},
                        {"pinned_exact", "not applicable"}};
  facts_->started_at = utcNow();

  logRegulatedProfile(config_);
  repository_ = std::make_unique<runtime::ModelRepository>(backend_, repositoryOptions(config_));
  for (const std::string &dir : config_.model_dirs)
    RS_RETURN_IF_ERROR(repository_->loadRepository(dir, config_.models_include));
  service_ = std::make_unique<WorkerService>(*repository_, schedulerOptions(config_),
                                             config_.worker_name, servingOptions(config_));
  service_->registerLoadedModels();
  size_t ready = 0, failed = 0;
  for (const auto &s : repository_->states())
    (s.model ? ready : failed)++;
  spdlog::info("models ready loaded={} failed={}", ready, failed);

  GrpcServerOptions grpc_options;
  grpc_options.host = config_.endpoints.host;
  grpc_options.port = ephemeral_ports_ ? 0 : static_cast<int>(config_.endpoints.port);
  grpc_options.max_recv_msg_bytes = config_.grpc.max_recv_msg_bytes;
  grpc_options.max_send_msg_bytes = config_.grpc.max_send_msg_bytes;
  grpc_options.evidence = [this] { return evidenceJson(); };
  grpc_options.shared_memory = &service_->sharedMemory();
  grpc_options.reporter = service_.get();
  grpc_ = std::make_unique<GrpcServer>(grpc_options, *service_);
  RS_RETURN_IF_ERROR(grpc_->start());
  if (config_.endpoints.http_port > 0) {
    HttpServerOptions http_options;
    http_options.host = config_.endpoints.host;
    http_options.port = ephemeral_ports_ ? 0 : static_cast<int>(config_.endpoints.http_port);
    http_options.max_body_bytes = config_.grpc.max_recv_msg_bytes;
    http_options.evidence = [this] { return evidenceJson(); };
    http_options.shared_memory = &service_->sharedMemory();
    http_options.reporter = service_.get();
    http_ = std::make_unique<HttpServer>(http_options, *service_);
    RS_RETURN_IF_ERROR(http_->start());
  }
  if (config_.endpoints.metrics_port > 0) {
    MetricsHealthServerOptions metrics_options;
    metrics_options.host = config_.endpoints.host;
    metrics_options.port = ephemeral_ports_ ? 0 : static_cast<int>(config_.endpoints.metrics_port);
    WorkerService *service = service_.get();
    metrics_ = std::make_unique<MetricsHealthServer>(
        metrics_options, [service] { return service->serverReady(); },
        [service] { return service->renderMetrics(); });
    RS_RETURN_IF_ERROR(metrics_->start());
  }
  spdlog::info("serving grpc={}:{} http={} metrics={}", config_.endpoints.host, grpcPort(),
               httpPort(), metricsPort());
  return Status::ok();
}

bool Worker::drainAndShutdown(std::chrono::milliseconds exit_timeout) {
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

void Worker::shutdown() {
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
