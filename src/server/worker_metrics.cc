//===- server/worker_metrics.cc - Prometheus series of one worker ---------===//
//
// The families of a worker's series, registered with their help texts (the reference's
// names plus this server's own), and the scrape: the gauges and counters that mirror the
// repository, scheduler, weight cache and process, then the text exposition.
//
//===----------------------------------------------------------------------===//
#include "server/worker_metrics.h"

#include "pjrt/vendor_profile.h"
#include "runtime/executable_cache.h"
#include "server/process_stats.h"
#include "server/worker_metrics_impl.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/summary.h>
#include <prometheus/text_serializer.h>

#include <cstdlib>

namespace rs::server {
namespace {

/// The first device of the first registered GPU vendor's visible-devices variable that is set
/// (CUDA_VISIBLE_DEVICES), "" when none is (the reference's `gpu` label).
std::string gpuLabel() {
  for (const pjrt::VendorProfile *vendor : pjrt::vendorProfiles()) {
    const char *v = std::getenv(std::string(vendor->visibleDevicesVariable()).c_str());
    if (!v)
      continue;
    std::string s(v);
    return s.substr(0, s.find(','));
  }
  return "";
}

/// Raises a counter that mirrors an external total to `total` (counters only increase).
void catchUp(prometheus::Counter *c, double total) {
  if (total > c->Value())
    c->Increment(total - c->Value());
}

template <typename T> T *single(prometheus::Family<T> &family) { return &family.Add({}); }

} // namespace

namespace detail {

const prometheus::Summary::Quantiles &waitQuantiles() {
  static const prometheus::Summary::Quantiles q = {{0.5, 0.05}, {0.99, 0.001}};
  return q;
}

} // namespace detail

using detail::kModelStates;
using detail::waitQuantiles;

WorkerMetrics::WorkerMetrics(std::string worker_name, WorkerInfo info)
    : registry_(std::make_shared<prometheus::Registry>()) {
  const prometheus::Labels constant{{"worker", worker_name}, {"gpu", gpuLabel()}};
  prometheus::Registry &r = *registry_;
  auto counter = [&](const char *name, const char *help) {
    return &prometheus::BuildCounter().Name(name).Help(help).Labels(constant).Register(r);
  };
  auto gauge = [&](const char *name, const char *help) {
    return &prometheus::BuildGauge().Name(name).Help(help).Labels(constant).Register(r);
  };
  auto histogram = [&](const char *name, const char *help) {
    return &prometheus::BuildHistogram().Name(name).Help(help).Labels(constant).Register(r);
  };
  // Hot path.
  requests_ = counter("worker_requests_total",
                      "Inference requests answered, by model and gRPC status code");
  latency_ = histogram("worker_request_latency_seconds",
                       "Inference request latency from arrival to answer, seconds");
  queue_latency_ = histogram("worker_request_queue_seconds",
                             "Time a request waited in its model's queue before its dispatch, "
                             "seconds");
  compute_latency_ = histogram("worker_request_compute_seconds",
                               "Run time of the dispatch that computed a request, seconds");
  batch_size_ = histogram("worker_batch_size", "Real rows per dispatch (padding excluded)");
  // Per model.
  queue_depth_ = gauge("worker_queue_depth", "Requests queued per model");
  queue_wait_quantile_ = &prometheus::BuildSummary()
                              .Name("worker_queue_wait_seconds")
                              .Help("Queue wait per model over the last minute, seconds")
                              .Labels(constant)
                              .Register(r);
  dispatches_ = counter("worker_dispatch_total", "Program executions per model");
  compute_seconds_ = counter("worker_compute_seconds_total",
                             "Wall time spent executing each model's programs, seconds");
  stage_seconds_ = counter("worker_request_stage_seconds_total",
                           "Seconds in each stage of the answered requests' path, summed over "
                           "requests");
  served_ = counter("worker_requests_served_total",
                    "Requests answered successfully after a dispatch, per model");
  rows_served_ = counter("worker_rows_served_total", "Real rows computed per model");
  model_resident_ = gauge("worker_model_resident", "1 when the model's weights are resident");
  model_pinned_ = gauge("worker_model_pinned", "1 when the model is pinned resident");
  model_weight_bytes_ = gauge("worker_model_weight_bytes", "Bytes of the model's weights");
  model_max_batch_ = gauge("worker_model_max_batch_size",
                           "Largest compiled batch size of the model (0: unbatched)");
  // Worker level.
  inflight_ = single(
      *gauge("worker_inflight_requests", "Inference requests admitted and not yet answered"));
  shed_ = single(*counter("worker_requests_shed_total",
                          "Requests refused because endpoints.max_concurrent_requests were in "
                          "flight"));
  max_concurrent_ = single(
      *gauge("worker_max_concurrent_requests", "endpoints.max_concurrent_requests (0: uncapped)"));
  models_loaded_ = single(*gauge("worker_models_loaded", "Models loaded and serving"));
  model_state_ = gauge("worker_model_state",
                       "1 for the model's state (READY or UNAVAILABLE), 0 for the other");
  load_failures_ = counter("worker_model_load_failures_total",
                           "Failed loads of a model (startup, reload or new bundle), by model "
                           "and reason (the failure's status code)");
  models_resident_ = single(*gauge("worker_models_resident", "Models whose weights are resident"));
  resident_weight_bytes_ =
      single(*gauge("worker_resident_weight_bytes", "Bytes of resident model weights"));
  cache_misses_ = single(*counter("worker_executable_cache_misses_total",
                                  "Programs compiled instead of loaded from the executable cache"));
  cache_hits_ = single(
      *counter("worker_executable_cache_hits_total", "Programs loaded from the executable cache"));
  shm_regions_ =
      single(*gauge("worker_shared_memory_regions", "System shared memory regions registered"));
  shm_bytes_ = single(
      *gauge("worker_shared_memory_bytes", "Bytes of the registered system shared memory windows"));
  log_suppressed_ = single(*counter("worker_request_log_suppressed_total",
                                    "Request error log lines dropped by the rate limit"));
  if (info.weight_cache) {
    cache_resident_ = single(*gauge("worker_weight_cache_resident_bytes",
                                    "Bytes of on-demand model weights resident now"));
    cache_max_ = single(*gauge("worker_weight_cache_max_bytes",
                               "On-demand weight budget: the pool minus pinned bytes"));
    cache_pinned_ = single(
        *gauge("worker_weight_cache_pinned_bytes", "Bytes of weights pinned resident (device)"));
    cache_peak_ = single(*gauge("worker_weight_cache_peak_resident_bytes",
                                "Most on-demand weight bytes ever resident at once"));
    weight_pool_ = single(*gauge("worker_weight_pool_bytes",
                                 "Weight pool: weight_cache_fraction of the arena, capped by "
                                 "(1 - weight_cache_wiggle_fraction) of it"));
    weight_loads_ = single(*counter("worker_weight_loads_total",
                                    "On-demand weight loads (a dispatch of a non-resident model)"));
    weight_evicts_ = single(
        *counter("worker_weight_evicts_total", "Models evicted from the on-demand weight cache"));
    weight_load_seconds_ = single(*counter("worker_weight_load_seconds_total",
                                           "Time spent making weights resident, seconds"));
  }
  gauge("worker_info", "Worker identity and modes (value 1)")
      ->Add({{"device_ordinal", info.device_ordinal},
             {"control_mode", info.control_mode},
             {"discipline", info.discipline},
             {"residency_mode", info.residency_mode}})
      .Set(1);
  const ServerBuild &build = info.build;
  gauge("reactant_server_build_info", "The server build (value 1)")
      ->Add({{"version", build.version},
             {"commit", build.commit},
             {"compiler", build.compiler},
             {"build_type", build.build_type},
             {"eigen", build.eigen}})
      .Set(1);
  // Process.
  process_cpu_ = single(
      *counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds"));
  process_resident_ =
      single(*gauge("process_resident_memory_bytes", "Resident memory size in bytes"));
  process_virtual_ = single(*gauge("process_virtual_memory_bytes", "Virtual memory size in bytes"));
  process_open_fds_ = single(*gauge("process_open_fds", "Number of open file descriptors"));
  process_max_fds_ = single(*gauge("process_max_fds", "Maximum number of open file descriptors"));
  process_start_ = single(
      *gauge("process_start_time_seconds", "Start time of the process since the epoch in seconds"));
}

WorkerMetrics::~WorkerMetrics() = default;

WorkerMetrics::ModelSeries &WorkerMetrics::seriesOf(const std::string &model) {
  return series_[model];
}

std::string WorkerMetrics::labelOf(const std::string &model) const {
  return model.empty() || !is_known_ || is_known_(model) ? model : std::string();
}

void WorkerMetrics::setIsKnown(std::function<bool(const std::string &)> is_known) {
  std::lock_guard<std::mutex> lock(series_mu_);
  is_known_ = std::move(is_known);
}
std::string WorkerMetrics::render(const runtime::ModelRepository &repository,
                                  const scheduler::Scheduler &scheduler,
                                  const MetricsSnapshot &snapshot) {
  double loaded = 0, resident = 0, weight_bytes = 0;
  const runtime::WeightCache *cache = snapshot.weight_cache;
  for (const runtime::ModelState &s : repository.states()) {
    for (const char *state : kModelStates)
      model_state_->Add({{"model", s.name}, {"state", state}})
          .Set((s.model != nullptr) == (std::string_view(state) == "READY") ? 1 : 0);
    if (!s.model)
      continue;
    ++loaded;
    const prometheus::Labels labels{{"model", s.name}};
    double bytes = 0;
    for (const Tensor &w : s.model->weights)
      bytes += static_cast<double>(w.byteSize());
    const bool is_resident = !cache || cache->resident(s.name);
    const bool pinned = cache && cache->residency(s.name) == runtime::Residency::kPinnedDevice;
    if (is_resident) {
      ++resident;
      weight_bytes += bytes;
    }
    queue_depth_->Add(labels).Set(static_cast<double>(scheduler.queueDepth(s.name)));
    model_resident_->Add(labels).Set(is_resident ? 1 : 0);
    model_pinned_->Add(labels).Set(pinned ? 1 : 0);
    model_weight_bytes_->Add(labels).Set(bytes);
    model_max_batch_->Add(labels).Set(
        s.model->batch_sizes.empty() ? 0 : static_cast<double>(s.model->batch_sizes.back()));
    // Series that exist from the start, so rate() has a zero to begin from.
    dispatches_->Add(labels);
    compute_seconds_->Add(labels);
    served_->Add(labels);
    rows_served_->Add(labels);
    queue_wait_quantile_->Add(labels, waitQuantiles());
  }
  models_loaded_->Set(loaded);
  models_resident_->Set(resident);
  resident_weight_bytes_->Set(weight_bytes);
  if (cache && cache_resident_) {
    const runtime::WeightCacheStats c = cache->stats();
    cache_resident_->Set(static_cast<double>(c.resident_bytes));
    cache_max_->Set(static_cast<double>(c.max_bytes));
    cache_pinned_->Set(static_cast<double>(c.pinned_bytes));
    cache_peak_->Set(static_cast<double>(c.peak_resident_bytes));
    weight_pool_->Set(static_cast<double>(c.pool_bytes));
    catchUp(weight_loads_, static_cast<double>(c.loads));
    catchUp(weight_evicts_, static_cast<double>(c.evicts));
    catchUp(weight_load_seconds_, c.load_seconds);
  }
  for (const runtime::LoadFailureCount &f : repository.loadFailures())
    catchUp(&load_failures_->Add({{"model", f.model}, {"reason", f.reason}}),
            static_cast<double>(f.count));
  // The repository counts cache outcomes; the counters catch up.
  catchUp(cache_misses_, static_cast<double>(repository.executableCacheMisses()));
  catchUp(cache_hits_, static_cast<double>(repository.executableCacheHits()));
  inflight_->Set(static_cast<double>(snapshot.inflight));
  catchUp(shed_, static_cast<double>(snapshot.shed));
  max_concurrent_->Set(static_cast<double>(snapshot.max_concurrent));
  shm_regions_->Set(static_cast<double>(snapshot.shared_memory_regions));
  shm_bytes_->Set(static_cast<double>(snapshot.shared_memory_bytes));
  catchUp(log_suppressed_, static_cast<double>(snapshot.log_suppressed));
  const ProcessStats p = readProcessStats();
  catchUp(process_cpu_, p.cpu_seconds);
  process_resident_->Set(p.resident_bytes);
  process_virtual_->Set(p.virtual_bytes);
  process_open_fds_->Set(p.open_fds);
  process_max_fds_->Set(p.max_fds);
  process_start_->Set(p.start_time_seconds);
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

} // namespace rs::server
