//===- server/worker_metrics_series.cc - A worker's per-model series ------===//
//
// The series each request and dispatch updates (requests by status, latency, queue and
// compute histograms, batch rows, the queue-wait summary, the per-stage seconds), made on
// first use, and their removal when a model leaves.
//
//===----------------------------------------------------------------------===//
#include "server/worker_metrics.h"

#include "server/worker_metrics_impl.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>

#include <array>
#include <cmath>

namespace rs::server {

using detail::kModelStates;
using detail::waitQuantiles;

namespace {

/// base·2^k, k = 0..last.
prometheus::Histogram::BucketBoundaries powersOfTwo(double base, int last) {
  prometheus::Histogram::BucketBoundaries b;
  for (int k = 0; k <= last; ++k)
    b.push_back(base * std::ldexp(1.0, k));
  return b;
}

/// 0.001 * 2^k seconds, k = 0..13 (1 ms to 8.192 s), as the reference.
const prometheus::Histogram::BucketBoundaries &latencyBuckets() {
  static const auto b = powersOfTwo(0.001, 13);
  return b;
}
/// 0.0001 * 2^k seconds, k = 0..17 (0.1 ms to 13.1 s): queue waits and compute are often
/// far below a millisecond on small models.
const prometheus::Histogram::BucketBoundaries &phaseBuckets() {
  static const auto b = powersOfTwo(0.0001, 17);
  return b;
}
/// 1, 2, 4, ... 1024 rows.
const prometheus::Histogram::BucketBoundaries &rowBuckets() {
  static const auto b = powersOfTwo(1, 10);
  return b;
}

/// `*slot`, added to `family` with `labels` on first use (each series appears exactly when
/// it did without the cache).
template <typename T, typename... Args>
T &lazySeries(T *&slot, prometheus::Family<T> *family, const prometheus::Labels &labels,
              Args &&...args) {
  if (slot == nullptr)
    slot = &family->Add(labels, std::forward<Args>(args)...);
  return *slot;
}

/// The same with the label model=`model`.
template <typename T, typename... Args>
T &lazySeries(T *&slot, prometheus::Family<T> *family, const std::string &model, Args &&...args) {
  return lazySeries(slot, family, prometheus::Labels{{"model", model}},
                    std::forward<Args>(args)...);
}

/// The stages of worker_request_stage_seconds_total, in the order a request passes them.
enum Stage : size_t { kDecode, kQueue, kGather, kUpload, kExecute, kReadback, kScatter, kEncode };
constexpr std::array<const char *, 8> kStageNames = {"decode",  "queue",    "gather",  "upload",
                                                     "execute", "readback", "scatter", "encode"};

/// The stage counter `stage` of `model` (added to `family` on first use).
prometheus::Counter &stageCounter(std::array<prometheus::Counter *, 8> &slots,
                                  prometheus::Family<prometheus::Counter> *family,
                                  const std::string &model, Stage stage) {
  return lazySeries(slots[stage], family,
                    prometheus::Labels{{"model", model}, {"stage", kStageNames[stage]}});
}

} // namespace

prometheus::Counter &WorkerMetrics::requestCounter(ModelSeries &s, const std::string &model,
                                                   StatusCode code) {
  return lazySeries(
      s.requests[code], requests_,
      prometheus::Labels{{"model", model}, {"status", std::string(statusCodeName(code))}});
}

void WorkerMetrics::requestFinished(const std::string &name, StatusCode code, double seconds) {
  std::lock_guard<std::mutex> lock(series_mu_);
  const std::string model = labelOf(name);
  ModelSeries &s = seriesOf(model);
  requestCounter(s, model, code).Increment();
  lazySeries(s.latency, latency_, model, latencyBuckets()).Observe(seconds);
  if (code == StatusCode::kOk)
    lazySeries(s.served, served_, model).Increment();
}

void WorkerMetrics::requestRejected(const std::string &name, StatusCode code) {
  std::lock_guard<std::mutex> lock(series_mu_);
  const std::string model = labelOf(name);
  requestCounter(seriesOf(model), model, code).Increment();
}

void WorkerMetrics::observeDispatch(const scheduler::DispatchStats &stats) {
  std::lock_guard<std::mutex> lock(series_mu_);
  const std::string m = labelOf(stats.model);
  ModelSeries &s = seriesOf(m);
  lazySeries(s.dispatches, dispatches_, m).Increment();
  lazySeries(s.compute_seconds, compute_seconds_, m).Increment(stats.compute_seconds);
  lazySeries(s.batch_size, batch_size_, m, rowBuckets()).Observe(static_cast<double>(stats.rows));
  if (stats.ok)
    lazySeries(s.rows_served, rows_served_, m).Increment(static_cast<double>(stats.rows));
  prometheus::Histogram &queue = lazySeries(s.queue, queue_latency_, m, phaseBuckets());
  prometheus::Histogram &compute = lazySeries(s.compute, compute_latency_, m, phaseBuckets());
  prometheus::Summary &quantiles =
      lazySeries(s.quantiles, queue_wait_quantile_, m, waitQuantiles());
  double waited = 0;
  for (double wait : stats.queue_wait_seconds) {
    queue.Observe(wait);
    compute.Observe(stats.compute_seconds);
    quantiles.Observe(wait);
    waited += wait;
  }
  // The dispatch's stages, once per request it answered. Without the backend's own split
  // the whole run is execute; with it, what the split leaves of the run (argument checks,
  // the call around the program) counts as execute too.
  const auto requests = static_cast<double>(stats.queue_wait_seconds.size());
  const RunProfile &run = stats.run_profile;
  const double execute = run.filled
                             ? stats.compute_seconds - run.upload_seconds - run.readback_seconds
                             : stats.compute_seconds;
  auto add = [&](Stage stage, double seconds) {
    if (seconds > 0)
      stageCounter(s.stages, stage_seconds_, m, stage).Increment(seconds);
  };
  add(kQueue, waited);
  add(kGather, requests * stats.input_seconds);
  add(kUpload, requests * run.upload_seconds);
  add(kExecute, requests * execute);
  add(kReadback, requests * run.readback_seconds);
  add(kScatter, requests * stats.output_seconds);
}

void WorkerMetrics::observeRequestStages(const std::string &name, double decode_seconds,
                                         double encode_seconds) {
  std::lock_guard<std::mutex> lock(series_mu_);
  const std::string model = labelOf(name);
  ModelSeries &s = seriesOf(model);
  if (decode_seconds > 0)
    stageCounter(s.stages, stage_seconds_, model, kDecode).Increment(decode_seconds);
  if (encode_seconds > 0)
    stageCounter(s.stages, stage_seconds_, model, kEncode).Increment(encode_seconds);
}

namespace {

/// Removes the series of `family` with `labels`, if it has one (`args`: what Add() needs
/// to find it, e.g. the buckets of a histogram).
template <typename T, typename... Args>
void removeSeries(prometheus::Family<T> *family, const prometheus::Labels &labels, Args &&...args) {
  if (family->Has(labels))
    family->Remove(&family->Add(labels, std::forward<Args>(args)...));
}

} // namespace

void WorkerMetrics::forgetModel(const std::string &model) {
  std::lock_guard<std::mutex> lock(series_mu_);
  series_.erase(model);
  const prometheus::Labels labels{{"model", model}};
  for (int code = 0; code <= static_cast<int>(StatusCode::kUnauthenticated); ++code)
    removeSeries(
        requests_,
        {{"model", model}, {"status", std::string(statusCodeName(static_cast<StatusCode>(code)))}});
  removeSeries(latency_, labels, latencyBuckets());
  removeSeries(queue_latency_, labels, phaseBuckets());
  removeSeries(compute_latency_, labels, phaseBuckets());
  removeSeries(batch_size_, labels, rowBuckets());
  removeSeries(queue_wait_quantile_, labels, waitQuantiles());
  for (prometheus::Family<prometheus::Gauge> *g :
       {queue_depth_, model_resident_, model_pinned_, model_weight_bytes_, model_max_batch_})
    removeSeries(g, labels);
  for (prometheus::Family<prometheus::Counter> *c :
       {dispatches_, compute_seconds_, served_, rows_served_})
    removeSeries(c, labels);
  for (const char *state : kModelStates)
    removeSeries(model_state_, {{"model", model}, {"state", state}});
  for (const char *stage : kStageNames)
    removeSeries(stage_seconds_, {{"model", model}, {"stage", stage}});
}

} // namespace rs::server
