//===- server/worker_metrics.h - Prometheus series of one worker ------------===//
//
// The worker's metrics (reference-system.md §6, same names and labels), kept with
// prometheus-cpp and rendered in the text exposition format 0.0.4 for `/metrics`:
// - worker_requests_total{model,status}: requests answered, status = upper-case gRPC code;
// - worker_request_latency_seconds{model}: histogram, buckets 0.001·2^k s, k = 0..13;
// - worker_inflight_requests: requests accepted and not yet answered;
// - worker_models_loaded: models loaded and serving;
// - worker_queue_depth{model}: requests queued per model;
// - worker_executable_cache_misses_total: programs compiled instead of loaded from the
//   executable cache since the worker started (seed/reproducibility.md: zero after a
//   restart with a warm cache).
// Every series carries the constant label `worker`.
// Thread safety: every method may be called concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/model_repository.h"
#include "scheduler/scheduler.h"
#include "support/status.h"

#include <memory>
#include <string>

namespace prometheus {
class Registry;
class Gauge;
template <typename T> class Family;
class Counter;
class Histogram;
} // namespace prometheus

namespace rs::server {

class WorkerMetrics {
public:
  explicit WorkerMetrics(std::string worker_name);
  ~WorkerMetrics();

  /// A request was accepted (counts towards worker_inflight_requests).
  void requestStarted();
  /// A request was answered with `code` after `seconds` (wall time since it arrived).
  void requestFinished(const std::string &model, StatusCode code, double seconds);
  /// Refreshes the gauges from `repository` and `scheduler` and renders every series.
  std::string render(const runtime::ModelRepository &repository,
                     const scheduler::Scheduler &scheduler);

private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter> *requests_;
  prometheus::Family<prometheus::Histogram> *latency_;
  prometheus::Family<prometheus::Gauge> *queue_depth_;
  prometheus::Gauge *inflight_;
  prometheus::Gauge *models_loaded_;
  prometheus::Counter *cache_misses_;
};

} // namespace rs::server
