//===- gateway/router.h - Which worker serves a request ---------------------===//
//
// The gateway's routing state and decisions (reference-system.md section 8.3), with no
// I/O: the prober feeds it worker snapshots, the data path asks it for a worker and
// reports when a call ends. Modes:
//
// - round_robin: rotate over the workers that report the model ready.
// - least_outstanding: the worker with the least in-flight work across all models, by
//   `work_basis`: `requests` (a count), `items` (rows along the batch axis) or `compute`
//   (items x the model's measured compute per item, in whole nanoseconds). Exact ties
//   rotate; the counters are integers, so a drained worker reads exactly 0.
// - lpt_packing: models are placed on k replicas (placement.h) at repacks: at startup
//   (once every worker answered), when the fleet's accumulated compute reaches
//   first_rebalance_compute_seconds (first time) or rebalance_compute_seconds, and on the
//   operator's Repack. A model never requested (cold) is not placed and rotates over its
//   workers. Within a model's replicas, with the quantum Q = max(1, round(fill_factor x
//   max_batch)) items (max_batch as the workers report it; 0 when unknown):
//     run      a run spends Q items on one replica, then a new run opens; a run also ends
//              when the model has nothing in flight, or when its replica is a whole Q
//              behind the least-loaded replica;
//     spread   the replica with the fewest in-flight items of the model;
//     inflight (legacy) stay on the replica while it has fewer than Q of the model's
//              requests in flight; it can park a model on one replica for ever.
//   A run opens on the replica with the least in-flight work across all models
//   (routing_policy fill_least, by work_basis) or by rotation (fill_rr); ties rotate.
//
// The data path: route() returns the candidate workers best first (the rest are failover
// targets, used only when a call was never delivered) and charges the first; charge()
// charges a failover target; release() undoes a charge when the call ends. A worker is
// a candidate while its last probe said ready and no call has failed to reach it since.
//
// Thread safety: every method may be called concurrently (one internal mutex).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "config/gateway_config.h"
#include "gateway/placement.h"
#include "support/status.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace reactant_control {
class GetSchedulingStatusResponse;
class SchedulingPolicy;
} // namespace reactant_control

namespace rs::gateway {

using Clock = std::chrono::steady_clock;

/// One model as a worker reported it.
struct WorkerModel {
  int64_t max_batch = 0;            // ModelControlStatus max_batch_size; 0 unknown
  double total_compute_seconds = 0; // cumulative
  uint64_t requests_served = 0;     // cumulative
  int64_t weight_bytes = 0;
};

/// A model a worker lists in its repository index but does not serve (a load that
/// failed, an unloaded model): the index's state and reason.
struct UnservedModel {
  std::string state;  // "UNAVAILABLE"
  std::string reason; // the worker's, e.g. the load failure
};

/// What one probe round learned about one worker.
struct WorkerSnapshot {
  bool answered = false; // ServerReady answered
  bool ready = false;    // ServerReady true
  /// Models the worker reports READY in its repository index (the ones it routes to).
  std::map<std::string, WorkerModel> models;
  /// The other models of its index, by name.
  std::map<std::string, UnservedModel> unserved;
  bool has_control = false; // answered ModelControlStatus
  std::string discipline;
  uint64_t weight_cache_max_bytes = 0;
};

/// The runtime-mutable knobs (GatewayControlService SchedulingPolicy).
struct RuntimePolicy {
  double rebalance_compute_seconds = 300;
  double first_rebalance_compute_seconds = 60;
  double hysteresis = 0;
  double ema_halflife_compute_seconds = 300; // resolved, never 0
  int64_t default_replicas = 1;              // > 0 or config::kAllReplicas
  config::RoutingPolicy routing_policy = config::RoutingPolicy::kFillLeast;
  double routing_fill_factor = 1.0;
  config::FillMode routing_fill_mode = config::FillMode::kRun;
  config::CompactionMode compaction_mode = config::CompactionMode::kEager;
  int64_t compaction_interval = 1;
  bool forbid_memory_oversubscription = true;
  uint64_t generation = 0;
};

/// What one forwarded call holds on a worker; release() takes the same amounts back.
struct Charge {
  std::string model;
  size_t worker = 0;
  int64_t items = 1;
  int64_t compute_ns = 0;
};

/// A repack's outcome, for logging and the compaction fan-out.
struct RepackOutcome {
  std::string trigger; // startup | compute | operator
  int64_t models_placed = 0, models_moved = 0, held_by_hysteresis = 0;
  double max_improvement = 0, compute_seconds = 0, wall_seconds = 0;
  /// Workers to send CompactMemory, with the models to reload (empty under eager).
  std::vector<std::pair<size_t, std::vector<std::string>>> compactions;
  std::vector<std::string> warnings;
};

/// Series for the gateway's /metrics (reference-system.md section 6).
struct RouterMetrics {
  struct Replica {
    std::string model, worker;
    int64_t outstanding_items = 0;
    uint64_t routed_total = 0;
  };
  struct Worker {
    std::string name;
    bool ready = false;
    double inflight_work = 0; // by work_basis (compute in seconds)
  };
  struct Model {
    std::string name;
    double utilization = 0;
    int64_t replicas = 0;
    int64_t fill_quantum = 1;
    std::vector<std::pair<std::string, double>> placement_weights; // worker -> 1/k
  };
  std::vector<Replica> replicas;
  std::vector<Worker> workers;
  std::vector<Model> models;
  std::map<std::string, uint64_t> repacks; // trigger -> count
  int64_t routing_table_size = 0;          // models with at least one ready worker
  std::string basis;                       // work_basis name
};

/// Fills the wire form of `policy`.
void fillPolicyProto(const RuntimePolicy &policy, reactant_control::SchedulingPolicy *out);

class Router {
public:
  Router(config::SchedulingConfig config, std::vector<std::string> worker_names);

  // ---- Prober side ------------------------------------------------------------

  /// Installs worker `worker`'s probe result. A probe started before the worker was
  /// marked down (`probe_started`) does not bring it back.
  void updateWorker(size_t worker, WorkerSnapshot snapshot, Clock::time_point probe_started);
  /// Takes `worker` out of routing until a later probe reports it ready.
  void markDown(size_t worker, Clock::time_point when);
  /// After a probe round: folds the compute counters and repacks when a trigger fires
  /// (lpt_packing only).
  std::optional<RepackOutcome> tick(Clock::time_point now);
  /// The operator's repack (lpt_packing only; FailedPrecondition otherwise).
  Result<RepackOutcome> repackNow(Clock::time_point now);

  // ---- Data path ----------------------------------------------------------------

  /// Candidate workers for `items` items of `model`, best first, and the charge on the
  /// first in `charge`; empty when no ready worker serves the model.
  std::vector<size_t> route(const std::string &model, int64_t items, Charge *charge);
  /// Charges a failover target.
  Charge charge(const std::string &model, size_t worker, int64_t items);
  /// Ends a call.
  void release(const Charge &charge);

  // ---- Queries --------------------------------------------------------------------

  const std::vector<std::string> &workerNames() const { return names_; }
  config::SchedulingMode mode() const { return mode_; }
  bool anyReady() const;
  bool workerReady(size_t worker) const;
  /// True when some ready worker serves `model`.
  bool modelReady(const std::string &model) const;
  /// Models served by ready workers, sorted.
  std::vector<std::string> models() const;
  /// Ready workers serving `model`, in index order.
  std::vector<size_t> workersFor(const std::string &model) const;
  /// True when some worker listed `model` at its last probe, served or not.
  bool knowsModel(const std::string &model) const;
  /// Models any worker listed at its last probe, served or not, sorted.
  std::vector<std::string> knownModels() const;
  /// For a model that some worker lists but none reports READY: the state and reason of
  /// the first such worker (index order). nullopt when some worker reports it READY (even
  /// one that is not ready or down) or none lists it.
  std::optional<UnservedModel> unservedModel(const std::string &model) const;
  RouterMetrics metrics() const;
  std::vector<std::string> startupErrors() const;

  // ---- GatewayControlService ------------------------------------------------------

  void fillStatus(reactant_control::GetSchedulingStatusResponse *out) const;
  RuntimePolicy policy() const;
  /// All-or-nothing update of the named knobs; InvalidArgument for an unknown or
  /// startup-only name or a bad value; FailedPrecondition outside lpt_packing.
  Result<RuntimePolicy> setPolicy(const std::vector<std::string> &mask,
                                  const reactant_control::SchedulingPolicy &values,
                                  std::vector<std::string> *warnings);
  /// SetModelPlacement; takes effect at the next repack. Returns (configured replicas,
  /// effective replicas, resolved fill mode, quantum).
  struct PlacementReply {
    int64_t configured_replicas = 0, effective_replicas = 0, fill_quantum = 1;
    std::string fill_mode;
    std::vector<std::string> warnings;
  };
  Result<PlacementReply> setModelPlacement(const std::string &model, int64_t replicas,
                                           const std::string &fill_mode, double fill_factor,
                                           bool allow_unknown_model);

private:
  struct Replica { // (model, worker) accounting
    int64_t items = 0, requests = 0;
    uint64_t routed = 0;
  };
  struct WorkerState {
    WorkerSnapshot snap;
    bool answered_once = false;
    bool down = false;
    Clock::time_point down_at{};
    int64_t inflight_requests = 0, inflight_items = 0, inflight_compute_ns = 0;
    std::map<std::string, WorkerModel> last_counters; // for compute deltas
    bool counters_seeded = false;
  };
  struct Override {
    int64_t replicas = 0; // 0 none
    std::optional<config::FillMode> fill_mode;
    std::optional<double> fill_factor;
  };
  struct ModelState {
    uint64_t rotation = 0;
    int64_t run_worker = -1, run_spent = 0;
    int64_t inflight_items = 0;
    uint64_t arrivals = 0, arrivals_since_repack = 0;
    uint64_t items_done = 0, items_done_at_tick = 0;
    double tick_compute = 0;   // compute seconds reported since the last tick
    double acc_compute = 0;    // since the last repack
    uint64_t acc_requests = 0; // since the last repack
    double rate = 0, cost = 0, utilization = 0;
    double compute_ns_per_item = 0; // 0 unknown
    bool placed = false, drifted = false, stats_seeded = false;
    std::vector<size_t> placement;
    Override pending, active; // pending applies at the next repack
    int64_t weight_bytes = 0;
  };

  bool candidate(size_t w, const std::string &model) const;
  std::vector<size_t> candidatesLocked(const std::string &model) const;
  int64_t workLocked(size_t w) const;
  int64_t quantumLocked(const std::string &model, const ModelState &m) const;
  config::FillMode fillModeLocked(const ModelState &m) const;
  int64_t maxBatchLocked(const std::string &model) const;
  int64_t computeNsLocked(const ModelState &m, int64_t items) const;
  size_t leastLocked(const std::vector<size_t> &pool, uint64_t rotation,
                     const std::function<int64_t(size_t)> &load) const;
  std::vector<size_t> selectLptLocked(const std::string &model, ModelState &m, int64_t items);
  Charge chargeLocked(const std::string &model, size_t worker, int64_t items);
  RepackOutcome repackLocked(const std::string &trigger, Clock::time_point now);
  int64_t replicasFor(const ModelState &m) const;

  const config::SchedulingMode mode_;
  const config::WorkBasis basis_;
  const std::vector<std::string> names_;
  const config::SchedulingConfig config_;

  mutable std::mutex mu_;
  RuntimePolicy policy_;                                       // GUARDED_BY(mu_)
  std::vector<WorkerState> workers_;                           // GUARDED_BY(mu_)
  std::map<std::string, ModelState> models_;                   // GUARDED_BY(mu_)
  std::map<std::pair<std::string, size_t>, Replica> replicas_; // GUARDED_BY(mu_)
  // Repack bookkeeping (lpt_packing).
  bool startup_repack_done_ = false, first_tick_repack_done_ = false;
  double compute_accumulated_ = 0, compute_since_repack_ = 0;
  Clock::time_point last_repack_{};
  double last_repack_unix_ = 0, last_repack_wall_ = 0, last_repack_compute_ = 0,
         last_tick_unix_ = 0;
  std::string last_trigger_;
  int64_t last_placed_ = 0, last_moved_ = 0, repacks_since_compaction_ = 0;
  uint64_t repack_count_ = 0, operator_requested_ = 0, operator_completed_ = 0;
  std::map<std::string, uint64_t> repacks_by_trigger_;
  std::vector<std::string> warnings_;
};

} // namespace rs::gateway
