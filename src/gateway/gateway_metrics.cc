//===- gateway/gateway_metrics.cc - The gateway's own Prometheus series -----===//
#include "gateway/gateway_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <cctype>

namespace rs::gateway {
namespace {

/// 0.001 * 2^k seconds, k = 0..13 (1 ms to 8.192 s), as the reference.
prometheus::Histogram::BucketBoundaries latencyBuckets() {
  prometheus::Histogram::BucketBoundaries b;
  for (int k = 0; k <= 13; ++k)
    b.push_back(0.001 * static_cast<double>(1 << k));
  return b;
}

prometheus::Family<prometheus::Gauge> &gauge(prometheus::Registry &r, const std::string &name,
                                             const std::string &help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r);
}

} // namespace

std::string camelStatusName(StatusCode code) {
  if (code == StatusCode::kOk)
    return "OK";
  std::string out;
  bool upper = true;
  for (char c : statusCodeName(code)) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? c : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    upper = false;
  }
  return out;
}

GatewayMetrics::GatewayMetrics(int64_t max_concurrent_requests)
    : registry_(std::make_shared<prometheus::Registry>()) {
  requests_ = &prometheus::BuildCounter()
                   .Name("gateway_requests_total")
                   .Help("Client calls answered by the gateway, by rpc, model and status")
                   .Register(*registry_);
  latency_ = &prometheus::BuildHistogram()
                  .Name("gateway_request_latency_seconds")
                  .Help("Client call latency at the gateway, seconds")
                  .Register(*registry_);
  worker_latency_ = &prometheus::BuildHistogram()
                         .Name("gateway_worker_latency_seconds")
                         .Help("Latency of the gateway's calls to each worker, seconds")
                         .Register(*registry_);
  inflight_ = &gauge(*registry_, "gateway_inflight_requests", "Client calls in flight").Add({});
  shed_ = &prometheus::BuildCounter()
               .Name("gateway_requests_shed_total")
               .Help("Client calls refused with RESOURCE_EXHAUSTED at the inbound cap")
               .Register(*registry_)
               .Add({});
  gauge(*registry_, "gateway_max_concurrent_requests", "Inbound cap on calls in flight (0: none)")
      .Add({})
      .Set(static_cast<double>(max_concurrent_requests));
}

GatewayMetrics::~GatewayMetrics() = default;

void GatewayMetrics::requestDone(const std::string &rpc, const std::string &model, StatusCode code,
                                 double seconds) {
  requests_->Add({{"rpc", rpc}, {"model", model}, {"status", camelStatusName(code)}}).Increment();
  latency_->Add({{"rpc", rpc}, {"model", model}}, latencyBuckets()).Observe(seconds);
}

void GatewayMetrics::workerCall(const std::string &rpc, const std::string &worker, double seconds) {
  worker_latency_->Add({{"rpc", rpc}, {"worker", worker}}, latencyBuckets()).Observe(seconds);
}

void GatewayMetrics::inflightAdd(int64_t delta) {
  inflight_->Increment(static_cast<double>(delta));
}

void GatewayMetrics::shed() { shed_->Increment(); }

std::string GatewayMetrics::render(const RouterMetrics &router, config::SchedulingMode mode,
                                   const std::map<std::string, bool> &metrics_up) {
  // The router's series are a fresh snapshot each time (placements come and go).
  prometheus::Registry snap;
  gauge(snap, "gateway_routing_table_size", "Models with at least one ready worker")
      .Add({})
      .Set(static_cast<double>(router.routing_table_size));
  auto &ready = gauge(snap, "gateway_worker_ready", "1 when the worker's last probe said ready");
  for (const auto &w : router.workers)
    ready.Add({{"worker", w.name}}).Set(w.ready ? 1 : 0);
  auto &up = gauge(snap, "gateway_worker_metrics_up", "1 when the worker's /metrics answered");
  for (const auto &[name, ok] : metrics_up)
    up.Add({{"worker", name}}).Set(ok ? 1 : 0);
  auto &weight = gauge(snap, "gateway_placement_weight", "1/k on each of a model's k replicas");
  auto &util = gauge(snap, "gateway_model_utilization",
                     "Arrival rate x cost per request at the last repack, compute-seconds/s");
  auto &replicas = gauge(snap, "gateway_model_replicas", "Workers a model is routed over");
  auto &quantum = gauge(snap, "gateway_model_fill_quantum", "Fill quantum Q, items");
  for (const auto &m : router.models) {
    for (const auto &[worker, w] : m.placement_weights)
      weight.Add({{"model", m.name}, {"worker", worker}}).Set(w);
    util.Add({{"model", m.name}}).Set(m.utilization);
    replicas.Add({{"model", m.name}}).Set(static_cast<double>(m.replicas));
    quantum.Add({{"model", m.name}}).Set(static_cast<double>(m.fill_quantum));
  }
  auto &repacks = prometheus::BuildCounter()
                      .Name("gateway_repacks_total")
                      .Help("lpt_packing repacks by trigger")
                      .Register(snap);
  for (const char *trigger : {"startup", "compute", "operator"}) {
    auto it = router.repacks.find(trigger);
    repacks.Add({{"trigger", trigger}})
        .Increment(it == router.repacks.end() ? 0 : static_cast<double>(it->second));
  }
  auto &outstanding =
      gauge(snap, "gateway_replica_outstanding", "In-flight items per model and worker");
  for (const auto &r : router.replicas)
    outstanding.Add({{"model", r.model}, {"worker", r.worker}})
        .Set(static_cast<double>(r.outstanding_items));
  if (mode == config::SchedulingMode::kLptPacking) {
    auto &routed = prometheus::BuildCounter()
                       .Name("gateway_replica_routed_total")
                       .Help("Requests routed per model and worker")
                       .Register(snap);
    for (const auto &r : router.replicas)
      routed.Add({{"model", r.model}, {"worker", r.worker}})
          .Increment(static_cast<double>(r.routed_total));
  }
  if (mode != config::SchedulingMode::kRoundRobin) {
    auto &work = gauge(snap, "gateway_worker_inflight_work",
                       "In-flight work per worker by work_basis (compute in seconds)");
    for (const auto &w : router.workers)
      work.Add({{"worker", w.name}, {"basis", router.basis}}).Set(w.inflight_work);
  }
  prometheus::TextSerializer serializer;
  return serializer.Serialize(registry_->Collect()) + serializer.Serialize(snap.Collect());
}

} // namespace rs::gateway
