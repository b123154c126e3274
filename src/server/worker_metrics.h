//===- server/worker_metrics.h - Prometheus series of one worker ------------===//
//
// The worker's metrics (reference-system.md §6, same names and labels), kept with
// prometheus-cpp and rendered in the text exposition format 0.0.4 for `/metrics`
// (docs/metrics.md lists them with their meaning):
//
// Reference series that apply to a CPU worker:
// - per {model}: worker_dispatch_total, worker_compute_seconds_total (counters),
//   worker_queue_depth, worker_queue_wait_seconds{model,quantile="0.5"|"0.99"} (a summary
//   over the last minute, with _sum and _count), worker_model_resident, worker_model_pinned,
//   worker_model_weight_bytes, worker_requests_served_total, worker_rows_served_total,
//   worker_model_max_batch_size;
// - worker_models_loaded, worker_models_resident, worker_resident_weight_bytes;
// - worker_info{device_ordinal,control_mode,discipline,residency_mode} 1;
// - admission: worker_inflight_requests, worker_requests_shed_total,
//   worker_max_concurrent_requests;
// - hot path: worker_requests_total{model,status} (status = upper-case gRPC code name: the
//   errors by code) and the histogram worker_request_latency_seconds{model} (arrival to
//   answer; buckets 0.001·2^k s, k = 0..13);
// - process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
//   process_open_fds, process_max_fds, process_start_time_seconds.
// - with the on-demand weight cache on (runtime/weight_cache.h; runtime.weight_cache_fraction
//   > 0): worker_weight_cache_{resident,max,pinned}_bytes, worker_weight_pool_bytes,
//   worker_weight_{loads,evicts}_total, worker_weight_load_seconds_total, and ours,
//   worker_weight_cache_peak_resident_bytes (most on-demand bytes resident at once).
//   worker_weight_cache_max_scratch_bytes is not exported: the CPU backend has no
//   isolation probe (scratch 0).
// The device-memory series of the reference describe a GPU memory pool, which the CPU
// backend does not have, so they are not exported.
//
// Ours:
// - histograms worker_request_queue_seconds{model} (submit to dispatch) and
//   worker_request_compute_seconds{model} (the dispatch that ran the request), buckets
//   0.0001·2^k s, k = 0..17; worker_batch_size{model} (real rows per dispatch, buckets
//   1, 2, 4, ... 1024);
// - worker_request_stage_seconds_total{model,stage}: seconds of each stage of the answered
//   requests' path, summed over requests (a dispatch's stages count once per request in
//   it), so that its increase over the increase of worker_request_latency_seconds_count is
//   the mean per request; stage = decode, queue, gather, upload, execute, readback, scatter,
//   encode (docs/metrics.md "Where a request's time goes");
// - worker_executable_cache_misses_total and worker_executable_cache_hits_total: programs
//   compiled / loaded from the executable cache since the worker started
//   (seed/reproducibility.md: no miss after a restart with a warm cache);
// - worker_shared_memory_regions, worker_shared_memory_bytes (registered windows);
// - worker_request_log_suppressed_total (request error lines dropped by the rate limit);
// - worker_model_state{model,state} (1 for the model's index state, READY or UNAVAILABLE,
//   0 for the other; unloaded and failed models included) and
//   worker_model_load_failures_total{model,reason} (reason: the failure's status code name);
// - reactant_server_build_info{version,commit,compiler,build_type,eigen} 1.
//
// Every series carries the constant labels `worker` and `gpu` (the first device of the GPU
// vendor's visible-devices variable, CUDA_VISIBLE_DEVICES, "" when unset). The `model` label of a
// request that names an unknown model is "" (a client must not be able to create series at will).
// Thread safety: every method may be called concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/model_repository.h"
#include "runtime/weight_cache.h"
#include "scheduler/scheduler.h"
#include "support/build_info.h"
#include "support/status.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace prometheus {
class Registry;
class Gauge;
template <typename T> class Family;
class Counter;
class Histogram;
class Summary;
} // namespace prometheus

namespace rs::server {

/// The worker_info labels (reference-system.md §6).
struct WorkerInfo {
  std::string device_ordinal = "0";
  std::string control_mode = "static";         // model_control_mode
  std::string discipline = "fair";             // scheduler.discipline
  std::string residency_mode = "self_managed"; // or "externally_managed"
  /// The on-demand weight cache is on: export the worker_weight_* series.
  bool weight_cache = false;
  /// The `reactant_server_build_info` labels.
  ServerBuild build = thisBuild();
};

/// Values read at render time from the rest of the worker.
struct MetricsSnapshot {
  int64_t inflight = 0;
  uint64_t shed = 0;
  int64_t max_concurrent = 0;
  uint64_t shared_memory_regions = 0;
  uint64_t shared_memory_bytes = 0;
  uint64_t log_suppressed = 0;
  /// Residency per model and the weight_cache series (null: every model resident).
  const runtime::WeightCache *weight_cache = nullptr;
};

class WorkerMetrics {
public:
  explicit WorkerMetrics(std::string worker_name, WorkerInfo info = {});
  ~WorkerMetrics();

  /// A request was answered with `code` after `seconds` (wall time since it arrived).
  /// `model` is "" for an unknown model.
  void requestFinished(const std::string &model, StatusCode code, double seconds);
  /// A request failed before reaching the service (decoding), no latency observed.
  void requestRejected(const std::string &model, StatusCode code);
  /// A scheduler dispatch (compute and queue-wait histograms, dispatch and row counters,
  /// and the dispatch's stages of worker_request_stage_seconds_total).
  void observeDispatch(const scheduler::DispatchStats &stats);
  /// The front-end stages of one answered request of `model`: decoding the request before
  /// it reached the service and encoding (delivering) its answer, seconds.
  void observeRequestStages(const std::string &model, double decode_seconds, double encode_seconds);
  /// Drops every series labelled `model` (a model unloaded, or renamed away from that
  /// name), so /metrics lists only the models the worker serves.
  void forgetModel(const std::string &model);
  /// Whether a model is known now (the repository's view: loaded, or failed to load), asked
  /// under the series lock before a per-model series is recorded: an observation of a model
  /// no longer known (a request refused or finished while its model was unloaded) counts
  /// under model "", instead of bringing back the series forgetModel() dropped. The unload
  /// removes the model from the repository before it calls forgetModel(). Unset: every
  /// label is taken as is.
  void setIsKnown(std::function<bool(const std::string &)> is_known);
  /// Refreshes the gauges from `repository`, `scheduler` and `snapshot` (admission, shared
  /// memory, log) and renders every series.
  std::string render(const runtime::ModelRepository &repository,
                     const scheduler::Scheduler &scheduler, const MetricsSnapshot &snapshot);

private:
  /// One model's per-request series, found once: prometheus-cpp's Family::Add() builds
  /// (and throws away) a new metric on every call, a Summary's quantile state included.
  struct ModelSeries {
    std::map<StatusCode, prometheus::Counter *> requests;
    prometheus::Histogram *latency = nullptr;
    prometheus::Counter *served = nullptr;
    prometheus::Counter *dispatches = nullptr;
    prometheus::Counter *compute_seconds = nullptr;
    prometheus::Histogram *batch_size = nullptr;
    prometheus::Counter *rows_served = nullptr;
    prometheus::Histogram *queue = nullptr;
    prometheus::Histogram *compute = nullptr;
    prometheus::Summary *quantiles = nullptr;
    std::array<prometheus::Counter *, 8> stages{}; // indexed by the Stage enum of the .cc
  };
  /// The cached series of `model` (each added to its family on first use). Requires
  /// series_mu_.
  ModelSeries &seriesOf(const std::string &model);
  /// `model`, or "" when is_known_ says it is not known. Requires series_mu_.
  std::string labelOf(const std::string &model) const;
  prometheus::Counter &requestCounter(ModelSeries &s, const std::string &model, StatusCode code);

  std::mutex series_mu_;                      // held while a cached series is used or removed
  std::map<std::string, ModelSeries> series_; // GUARDED_BY(series_mu_)
  std::function<bool(const std::string &)> is_known_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter> *requests_;
  prometheus::Family<prometheus::Histogram> *latency_;
  prometheus::Family<prometheus::Histogram> *queue_latency_;
  prometheus::Family<prometheus::Histogram> *compute_latency_;
  prometheus::Family<prometheus::Histogram> *batch_size_;
  prometheus::Family<prometheus::Gauge> *queue_depth_;
  prometheus::Family<prometheus::Summary> *queue_wait_quantile_;
  prometheus::Family<prometheus::Counter> *dispatches_;
  prometheus::Family<prometheus::Counter> *compute_seconds_;
  prometheus::Family<prometheus::Counter> *served_;
  prometheus::Family<prometheus::Counter> *rows_served_;
  prometheus::Family<prometheus::Gauge> *model_resident_;
  prometheus::Family<prometheus::Gauge> *model_pinned_;
  prometheus::Family<prometheus::Gauge> *model_weight_bytes_;
  prometheus::Family<prometheus::Gauge> *model_max_batch_;
  prometheus::Family<prometheus::Gauge> *model_state_;
  prometheus::Family<prometheus::Counter> *load_failures_;
  prometheus::Family<prometheus::Counter> *stage_seconds_;
  prometheus::Gauge *inflight_;
  prometheus::Counter *shed_;
  prometheus::Gauge *max_concurrent_;
  prometheus::Gauge *models_loaded_;
  prometheus::Gauge *models_resident_;
  prometheus::Gauge *resident_weight_bytes_;
  prometheus::Counter *cache_misses_;
  prometheus::Counter *cache_hits_;
  prometheus::Gauge *shm_regions_;
  prometheus::Gauge *shm_bytes_;
  prometheus::Counter *log_suppressed_;
  // Weight cache (null when it is off).
  prometheus::Gauge *cache_resident_ = nullptr;
  prometheus::Gauge *cache_max_ = nullptr;
  prometheus::Gauge *cache_pinned_ = nullptr;
  prometheus::Gauge *cache_peak_ = nullptr;
  prometheus::Gauge *weight_pool_ = nullptr;
  prometheus::Counter *weight_loads_ = nullptr;
  prometheus::Counter *weight_evicts_ = nullptr;
  prometheus::Counter *weight_load_seconds_ = nullptr;
  prometheus::Counter *process_cpu_;
  prometheus::Gauge *process_resident_;
  prometheus::Gauge *process_virtual_;
  prometheus::Gauge *process_open_fds_;
  prometheus::Gauge *process_max_fds_;
  prometheus::Gauge *process_start_;
};

} // namespace rs::server
