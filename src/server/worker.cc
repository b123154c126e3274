//===- server/worker.cc - Bring-up and shutdown of one worker ---------------===//
#include "server/worker.h"

#include "runtime/cpu_backend.h"
#include "server/metrics_health_server.h"

#include <spdlog/spdlog.h>

#include <sstream>

namespace rs::server {
namespace {

/// The `Effective configuration` line: every resolved key=value, sorted.
void logEffectiveConfiguration(const config::WorkerConfig &config) {
  std::ostringstream os;
  bool first = true;
  for (const auto &[key, value] : config::effectiveSettings(config)) {
    os << (first ? "" : " ") << key << '=' << value;
    first = false;
  }
  spdlog::info("Effective configuration worker={} {}", config.worker_name, os.str());
  if (!config.env_overrides.empty()) {
    std::ostringstream env;
    for (const auto &[var, value] : config.env_overrides)
      env << (env.tellp() > 0 ? " " : "") << var << '=' << value;
    spdlog::info("Configuration overridden by environment {}", env.str());
  }
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

  repository_ = std::make_unique<runtime::ModelRepository>(backend_);
  for (const std::string &dir : config_.model_dirs)
    RS_RETURN_IF_ERROR(repository_->loadRepository(dir, config_.models_include));
  service_ =
      std::make_unique<WorkerService>(*repository_, schedulerOptions(config_), config_.worker_name);
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
  grpc_ = std::make_unique<GrpcServer>(grpc_options, *service_);
  RS_RETURN_IF_ERROR(grpc_->start());
  if (config_.endpoints.http_port > 0) {
    HttpServerOptions http_options;
    http_options.host = config_.endpoints.host;
    http_options.port = ephemeral_ports_ ? 0 : static_cast<int>(config_.endpoints.http_port);
    http_options.max_body_bytes = config_.grpc.max_recv_msg_bytes;
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

int Worker::grpcPort() const { return grpc_ ? grpc_->port() : 0; }
int Worker::httpPort() const { return http_ ? http_->port() : 0; }
int Worker::metricsPort() const { return metrics_ ? metrics_->port() : 0; }

} // namespace rs::server
