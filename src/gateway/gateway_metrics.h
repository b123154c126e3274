//===- gateway/gateway_metrics.h - The gateway's own Prometheus series ------===//
//
// Series of reference-system.md section 6 (same names and labels):
// - gateway_requests_total{rpc,model,status}: status in CamelCase (OK, NotFound,
//   Unavailable, ResourceExhausted, InvalidArgument, FailedPrecondition, Internal,
//   DeadlineExceeded, ...);
// - gateway_request_latency_seconds{rpc,model}, gateway_worker_latency_seconds{rpc,worker}:
//   histograms, buckets 0.001 x 2^k s, k = 0..13;
// - gateway_inflight_requests, gateway_requests_shed_total, gateway_max_concurrent_requests;
// - from the router at render time: gateway_routing_table_size, gateway_worker_ready{worker},
//   gateway_worker_metrics_up{worker}, gateway_placement_weight{model,worker},
//   gateway_model_utilization{model}, gateway_model_replicas{model},
//   gateway_model_fill_quantum{model}, gateway_repacks_total{trigger},
//   gateway_replica_outstanding{model,worker} (in-flight items),
//   gateway_replica_routed_total{model,worker} (lpt_packing only) and
//   gateway_worker_inflight_work{worker,basis} (least_outstanding and lpt_packing).
//
// Thread safety: every method may be called concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "gateway/router.h"
#include "support/status.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace prometheus {
class Registry;
class Gauge;
class Counter;
class Histogram;
template <typename T> class Family;
} // namespace prometheus

namespace rs::gateway {

/// "OK", "NotFound", "DeadlineExceeded", ... for a code.
std::string camelStatusName(StatusCode code);

class GatewayMetrics {
public:
  /// `max_concurrent_requests` is the inbound cap (0: none).
  explicit GatewayMetrics(int64_t max_concurrent_requests);
  ~GatewayMetrics();

  /// A client call of `rpc` for `model` ended with `code` after `seconds`.
  void requestDone(const std::string &rpc, const std::string &model, StatusCode code,
                   double seconds);
  /// A call to worker `worker` ended after `seconds`.
  void workerCall(const std::string &rpc, const std::string &worker, double seconds);
  void inflightAdd(int64_t delta);
  void shed();

  /// Renders the own series plus the router's; `metrics_up` is per worker name.
  std::string render(const RouterMetrics &router, config::SchedulingMode mode,
                     const std::map<std::string, bool> &metrics_up);

private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter> *requests_;
  prometheus::Family<prometheus::Histogram> *latency_;
  prometheus::Family<prometheus::Histogram> *worker_latency_;
  prometheus::Gauge *inflight_;
  prometheus::Counter *shed_;
};

} // namespace rs::gateway
