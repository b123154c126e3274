//===- server/worker_metrics.cc - Prometheus series of one worker -----------===//
#include "server/worker_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

namespace rs::server {
namespace {

/// 0.001 * 2^k seconds, k = 0..13 (1 ms to 8.192 s), as the reference.
prometheus::Histogram::BucketBoundaries latencyBuckets() {
  prometheus::Histogram::BucketBoundaries b;
  for (int k = 0; k <= 13; ++k)
    b.push_back(0.001 * static_cast<double>(1 << k));
  return b;
}

} // namespace

WorkerMetrics::WorkerMetrics(std::string worker_name)
    : registry_(std::make_shared<prometheus::Registry>()) {
  const prometheus::Labels constant{{"worker", worker_name}};
  requests_ = &prometheus::BuildCounter()
                   .Name("worker_requests_total")
                   .Help("Inference requests answered, by model and gRPC status")
                   .Labels(constant)
                   .Register(*registry_);
  latency_ = &prometheus::BuildHistogram()
                  .Name("worker_request_latency_seconds")
                  .Help("Inference request latency from arrival to answer, seconds")
                  .Labels(constant)
                  .Register(*registry_);
  queue_depth_ = &prometheus::BuildGauge()
                      .Name("worker_queue_depth")
                      .Help("Requests queued per model")
                      .Labels(constant)
                      .Register(*registry_);
  inflight_ = &prometheus::BuildGauge()
                   .Name("worker_inflight_requests")
                   .Help("Inference requests accepted and not yet answered")
                   .Labels(constant)
                   .Register(*registry_)
                   .Add({});
  models_loaded_ = &prometheus::BuildGauge()
                        .Name("worker_models_loaded")
                        .Help("Models loaded and serving")
                        .Labels(constant)
                        .Register(*registry_)
                        .Add({});
  cache_misses_ = &prometheus::BuildCounter()
                       .Name("worker_executable_cache_misses_total")
                       .Help("Programs compiled instead of loaded from the executable cache")
                       .Labels(constant)
                       .Register(*registry_)
                       .Add({});
}

WorkerMetrics::~WorkerMetrics() = default;

void WorkerMetrics::requestStarted() { inflight_->Increment(); }

void WorkerMetrics::requestFinished(const std::string &model, StatusCode code, double seconds) {
  inflight_->Decrement();
  requests_->Add({{"model", model}, {"status", std::string(statusCodeName(code))}}).Increment();
  latency_->Add({{"model", model}}, latencyBuckets()).Observe(seconds);
}

std::string WorkerMetrics::render(const runtime::ModelRepository &repository,
                                  const scheduler::Scheduler &scheduler) {
  double loaded = 0;
  for (const runtime::ModelState &s : repository.states()) {
    if (!s.model)
      continue;
    ++loaded;
    queue_depth_->Add({{"model", s.name}}).Set(static_cast<double>(scheduler.queueDepth(s.name)));
  }
  models_loaded_->Set(loaded);
  // The repository counts misses; the counter catches up (it only ever increases).
  const double misses = static_cast<double>(repository.executableCacheMisses());
  if (misses > cache_misses_->Value())
    cache_misses_->Increment(misses - cache_misses_->Value());
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

} // namespace rs::server
