//===- server/worker_service.h - One worker: models + scheduler -------------===//
//
// The InferenceService that the gRPC and HTTP front-ends call (DESIGN.md "Request
// path"): looks the model up in the ModelRepository, validates the request against its
// manifest (runtime/request_validation.h), queues it on the Scheduler (one dispatch loop
// for the worker's device), and turns the outputs into an InferResponse with the
// requested outputs in order.
//
// Errors: NotFound (unknown model), Unavailable (the model failed to load; the message
// carries the load error; or the worker is draining for shutdown), InvalidArgument
// (request does not match the model; message starts with the model and request id),
// ResourceExhausted (endpoints.max_concurrent_requests in flight: server/admission.h),
// plus the scheduler's codes.
//
// It also owns what both front-ends share: the system shared memory regions
// (protocol/shared_memory.h), the request error log (server/request_log.h; it is the
// front-ends' RequestReporter) and the metrics (server/worker_metrics.h).
// Thread safety: every method is safe to call concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/shared_memory.h"
#include "runtime/inference.h"
#include "runtime/model_repository.h"
#include "scheduler/scheduler.h"
#include "server/admission.h"
#include "server/request_log.h"
#include "server/worker_metrics.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rs::server {

/// Serving settings besides the scheduler's.
struct ServingOptions {
  /// endpoints.max_concurrent_requests: requests in flight at once; 0 = uncapped.
  int64_t max_concurrent_requests = 0;
  /// The worker_info labels.
  WorkerInfo info;
  /// Rate limit of the request error log.
  RequestLogOptions log;
};

class WorkerService final : public runtime::InferenceService, public RequestReporter {
public:
  /// `repository` must outlive the service. The scheduler starts immediately.
  /// `worker_name` is the constant `worker` label of the metrics.
  WorkerService(runtime::ModelRepository &repository, scheduler::SchedulerOptions options,
                std::string worker_name = "worker0", ServingOptions serving = {});
  ~WorkerService() override;

  /// Registers every loaded model of the repository with the scheduler (call after loading).
  void registerLoadedModels();
  /// Stops the dispatch loop; queued requests fail with Unavailable.
  void shutdown();
  /// The Prometheus text exposition of the worker's metrics.
  std::string renderMetrics();

  /// Graceful shutdown, step 1: readiness turns false and new requests get Unavailable;
  /// admitted requests go on. Idempotent.
  void beginDrain();
  /// Step 2: waits until no admitted request is in flight (true) or `deadline` (false).
  bool waitIdle(std::chrono::steady_clock::time_point deadline);
  bool draining() const { return admission_.draining(); }

  /// The regions of the system shared memory extension (both front-ends use them).
  protocol::SharedMemoryRegistry &sharedMemory() { return shared_memory_; }
  /// The concurrency cap (tests hold slots to fill it).
  Admission &admission() { return admission_; }
  /// Logs the failure once (rate-limited) and counts it when the service did not.
  void requestFailed(const FailedRequest &request, const Status &status, bool in_service) override;

  bool serverLive() const override { return true; }
  /// At least one model, every model loaded, and not draining.
  bool serverReady() const override;
  runtime::ServerMetadata serverMetadata() const override;
  Result<runtime::ModelMetadata> modelMetadata(const std::string &model_name) const override;
  Result<runtime::ModelReadiness> modelReady(const std::string &model_name) const override;
  void infer(runtime::InferRequest request, runtime::InferCallback done) override;
  /// Every model of the repository: ready when loaded, else the load error (RepositoryIndex).
  std::vector<runtime::ModelIndexEntry> listModels() const override;
  /// ModelControlStatus: the discipline, and per loaded model its weight bytes, max batch
  /// (largest compiled size, capped by scheduler.models.<m>.max_batch_size), queue depth
  /// and the scheduler's serving counters.
  Result<runtime::ControlStatus> controlStatus() const override;

private:
  /// The `model` label of `name`: itself for a known model, "" otherwise.
  std::string metricsModel(const std::string &name) const;

  runtime::ModelRepository &repository_;
  scheduler::Discipline discipline_; // for ModelControlStatus
  Admission admission_;
  RequestErrorLog request_log_;
  protocol::SharedMemoryRegistry shared_memory_;
  WorkerMetrics metrics_;
  scheduler::Scheduler scheduler_;
};

} // namespace rs::server
