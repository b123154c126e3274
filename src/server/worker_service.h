//===- server/worker_service.h - One worker: models + scheduler -------------===//
//
// The InferenceService that the gRPC and HTTP front-ends call (DESIGN.md "Request
// path"): looks the model up in the ModelRepository, validates the request against its
// manifest (runtime/request_validation.h), queues it on the Scheduler (one dispatch loop
// for the worker's device), and turns the outputs into an InferResponse with the
// requested outputs in order.
//
// Errors: NotFound (unknown model), Unavailable (the model failed to load; the message
// carries the load error), InvalidArgument (request does not match the model; message
// starts with the model and request id), plus the scheduler's codes.
// Thread safety: every method is safe to call concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/inference.h"
#include "runtime/model_repository.h"
#include "scheduler/scheduler.h"
#include "server/worker_metrics.h"

#include <memory>

namespace rs::server {

class WorkerService final : public runtime::InferenceService {
public:
  /// `repository` must outlive the service. The scheduler starts immediately.
  /// `worker_name` is the constant `worker` label of the metrics.
  WorkerService(runtime::ModelRepository &repository, scheduler::SchedulerOptions options,
                std::string worker_name = "worker0");
  ~WorkerService() override;

  /// Registers every loaded model of the repository with the scheduler (call after loading).
  void registerLoadedModels();
  /// Stops the dispatch loop; queued requests fail with Unavailable.
  void shutdown();
  /// The Prometheus text exposition of the worker's metrics.
  std::string renderMetrics();

  bool serverLive() const override { return true; }
  bool serverReady() const override;
  runtime::ServerMetadata serverMetadata() const override;
  Result<runtime::ModelMetadata> modelMetadata(const std::string &model_name) const override;
  Result<runtime::ModelReadiness> modelReady(const std::string &model_name) const override;
  void infer(runtime::InferRequest request, runtime::InferCallback done) override;

private:
  runtime::ModelRepository &repository_;
  scheduler::Scheduler scheduler_;
  WorkerMetrics metrics_;
};

} // namespace rs::server
