//===- test/gateway/router_test.cc - Routing decisions without I/O ----------===//
#include "gateway/router.h"

#include "protocol/proto/reactant_control_v1.pb.h"

#include <gtest/gtest.h>

namespace rs::gateway {
namespace {

const std::vector<std::string> kNames = {"w0", "w1", "w2"};

/// A ready worker serving `models` (name -> max batch), with control status.
WorkerSnapshot ready(std::map<std::string, int64_t> models, double compute = 0,
                     uint64_t requests = 0, std::string discipline = "fifo") {
  WorkerSnapshot s;
  s.answered = true;
  s.ready = true;
  s.has_control = true;
  s.discipline = std::move(discipline);
  for (const auto &[name, max_batch] : models) {
    WorkerModel m;
    m.max_batch = max_batch;
    m.total_compute_seconds = compute;
    m.requests_served = requests;
    s.models[name] = m;
  }
  return s;
}

/// A router whose three workers all serve "m" with max batch `max_batch`.
std::unique_ptr<Router> fleet(config::SchedulingConfig config, int64_t max_batch = 8) {
  auto r = std::make_unique<Router>(config, kNames);
  for (size_t w = 0; w < kNames.size(); ++w)
    r->updateWorker(w, ready({{"m", max_batch}}), Clock::now());
  return r;
}

/// Routes one request and returns its first candidate, keeping the charge in `held`.
size_t pick(Router &r, std::vector<Charge> &held, int64_t items = 1,
            const std::string &model = "m") {
  Charge c;
  std::vector<size_t> order = r.route(model, items, &c);
  EXPECT_FALSE(order.empty());
  if (order.empty())
    return 99;
  EXPECT_EQ(c.worker, order.front());
  held.push_back(c);
  return order.front();
}

/// Routes and releases at once (nothing stays in flight).
size_t pickAndRelease(Router &r, int64_t items = 1) {
  std::vector<Charge> held;
  size_t w = pick(r, held, items);
  r.release(held.front());
  return w;
}

TEST(RouterTest, RoundRobinRotatesOverReadyWorkers) {
  config::SchedulingConfig c;
  c.mode = config::SchedulingMode::kRoundRobin;
  auto r = fleet(c);
  std::vector<size_t> seen;
  for (int i = 0; i < 6; ++i)
    seen.push_back(pickAndRelease(*r));
  EXPECT_EQ(seen, (std::vector<size_t>{0, 1, 2, 0, 1, 2}));
  // w1 fails a call: it is skipped until a later probe reports it ready.
  const auto down_at = Clock::now();
  r->markDown(1, down_at);
  seen.clear();
  for (int i = 0; i < 4; ++i)
    seen.push_back(pickAndRelease(*r));
  EXPECT_EQ(seen, (std::vector<size_t>{0, 2, 0, 2}));
  // A probe that started before the failure does not bring it back; a later one does.
  r->updateWorker(1, ready({{"m", 8}}), down_at - std::chrono::seconds(1));
  EXPECT_FALSE(r->workerReady(1));
  r->updateWorker(1, ready({{"m", 8}}), down_at + std::chrono::milliseconds(1));
  EXPECT_TRUE(r->workerReady(1));
  // The failover order lists the other candidates after the choice.
  Charge ch;
  std::vector<size_t> order = r->route("m", 1, &ch);
  EXPECT_EQ(order.size(), 3u);
  r->release(ch);
  // Unknown model: no route.
  EXPECT_TRUE(r->route("nope", 1, &ch).empty());
}

TEST(RouterTest, LeastOutstandingByRequests) {
  config::SchedulingConfig c;
  c.mode = config::SchedulingMode::kLeastOutstanding;
  c.work_basis = config::WorkBasis::kRequests;
  auto r = fleet(c);
  std::vector<Charge> held;
  // Ties rotate: three requests in flight land on three workers.
  EXPECT_EQ(pick(*r, held), 0u);
  EXPECT_EQ(pick(*r, held), 1u);
  EXPECT_EQ(pick(*r, held), 2u);
  // w1's request ends: it is the only idle worker.
  r->release(held[1]);
  EXPECT_EQ(pick(*r, held), 1u);
  for (size_t i : {0, 2, 3})
    r->release(held[i]);
  // Drained: every worker reads exactly 0 again.
  for (const auto &w : r->metrics().workers)
    EXPECT_EQ(w.inflight_work, 0.0) << w.name;
}

TEST(RouterTest, LeastOutstandingByItemsAndCompute) {
  config::SchedulingConfig c;
  c.mode = config::SchedulingMode::kLeastOutstanding;
  c.work_basis = config::WorkBasis::kItems;
  auto r = fleet(c);
  std::vector<Charge> held;
  EXPECT_EQ(pick(*r, held, 8), 0u); // 8 items on w0
  EXPECT_EQ(pick(*r, held, 1), 1u);
  EXPECT_EQ(pick(*r, held, 1), 2u);
  // Loads [8, 1, 1]: the rotation starts at w0 and w1 is the first least-loaded.
  EXPECT_EQ(pick(*r, held, 1), 1u);
  // Loads [8, 2, 1].
  EXPECT_EQ(pick(*r, held, 1), 2u);
  for (const Charge &ch : held)
    r->release(ch);

  // compute: items x measured compute per item. m costs 2 ms per item on every worker
  // (measured from the control counters and the items answered between two ticks).
  c.work_basis = config::WorkBasis::kCompute;
  auto rc = fleet(c);
  held.clear();
  for (int i = 0; i < 3; ++i)
    rc->release(rc->charge("m", static_cast<size_t>(i), 10)); // 30 items answered
  for (size_t w = 0; w < 3; ++w)
    rc->updateWorker(w, ready({{"m", 8}}, 0.02, 10), Clock::now()); // +60 ms in total
  rc->tick(Clock::now());
  EXPECT_EQ(pick(*rc, held, 4), 0u);
  EXPECT_EQ(pick(*rc, held, 1), 1u);
  EXPECT_EQ(pick(*rc, held, 1), 2u);
  RouterMetrics m = rc->metrics();
  EXPECT_EQ(m.basis, "compute");
  EXPECT_DOUBLE_EQ(m.workers[0].inflight_work, 0.008); // 4 items x 2 ms
  EXPECT_DOUBLE_EQ(m.workers[1].inflight_work, 0.002);
  EXPECT_EQ(pick(*rc, held, 1), 1u); // [8, 2, 2] ms: w1 comes first in the rotation
  for (const Charge &ch : held)
    rc->release(ch);
  for (const auto &w : rc->metrics().workers)
    EXPECT_EQ(w.inflight_work, 0.0) << w.name;
}

config::SchedulingConfig lpt(config::FillMode fill, double fill_factor = 0.5) {
  config::SchedulingConfig c;
  c.mode = config::SchedulingMode::kLptPacking;
  c.work_basis = config::WorkBasis::kItems;
  c.default_replicas = config::kAllReplicas;
  c.routing_fill_mode = fill;
  c.routing_fill_factor = fill_factor;
  return c;
}

/// A placed lpt router: startup repack, one request (not cold any more), operator repack.
std::unique_ptr<Router> placedFleet(config::SchedulingConfig c) {
  auto r = fleet(c, 8);
  std::optional<RepackOutcome> startup = r->tick(Clock::now());
  EXPECT_TRUE(startup.has_value());
  EXPECT_EQ(startup->trigger, "startup");
  EXPECT_EQ(startup->models_placed, 0); // nothing requested yet: m is cold
  EXPECT_EQ(pickAndRelease(*r), 0u);    // cold: rotation
  Result<RepackOutcome> placed = r->repackNow(Clock::now());
  EXPECT_TRUE(placed.isOk());
  EXPECT_EQ(placed->models_placed, 1);
  return r;
}

TEST(RouterTest, LptRunFillsOneReplicaByTheQuantum) {
  // Q = round(0.5 x 8) = 4 items.
  auto r = placedFleet(lpt(config::FillMode::kRun));
  std::vector<Charge> held;
  std::vector<size_t> seen;
  for (int i = 0; i < 9; ++i)
    seen.push_back(pick(*r, held));
  // Four on the run's replica, then a new run on the least-loaded one, and so on.
  EXPECT_EQ(seen, (std::vector<size_t>{1, 1, 1, 1, 2, 2, 2, 2, 0}));
  for (const Charge &ch : held)
    r->release(ch);
  // A request that finds nothing in flight ends the run: idle traffic rotates.
  seen.clear();
  for (int i = 0; i < 3; ++i)
    seen.push_back(pickAndRelease(*r));
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_NE(seen[0], seen[1]);
  EXPECT_NE(seen[1], seen[2]);
}

TEST(RouterTest, LptRunEndsWhenItsReplicaFallsAWholeQuantumBehind) {
  // fill_rr opens runs in rotation, so a run can open on a replica still busy with an
  // earlier run's items.
  config::SchedulingConfig c = lpt(config::FillMode::kRun);
  c.routing_policy = config::RoutingPolicy::kFillRr;
  auto r = placedFleet(c);
  std::vector<Charge> a, b, d;
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(pick(*r, a), 1u);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(pick(*r, b), 2u);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(pick(*r, b), 0u);
  for (const Charge &ch : b)
    r->release(ch);
  // The rotation returns to w1, which still holds 4 items; with the new request it is 5
  // items, a whole quantum, ahead of the idle replicas: the run ends after one request.
  EXPECT_EQ(pick(*r, d), 1u);
  EXPECT_EQ(pick(*r, d), 2u);
  for (const auto *held : {&a, &d})
    for (const Charge &ch : *held)
      r->release(ch);
}

TEST(RouterTest, LptSpreadEqualisesInFlightItems) {
  auto r = placedFleet(lpt(config::FillMode::kSpread));
  std::vector<Charge> held;
  std::map<size_t, int> count;
  for (int i = 0; i < 6; ++i)
    ++count[pick(*r, held)];
  EXPECT_EQ(count, (std::map<size_t, int>{{0, 2}, {1, 2}, {2, 2}}));
  for (const Charge &ch : held)
    r->release(ch);
}

TEST(RouterTest, LptInflightParksOnOneReplica) {
  // Q = 4 requests: while the replica has fewer than 4 of the model's requests in flight
  // it keeps them, even though the others are idle.
  auto r = placedFleet(lpt(config::FillMode::kInflight));
  std::vector<Charge> held;
  const size_t first = pick(*r, held);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(pick(*r, held), first);
  EXPECT_NE(pick(*r, held), first); // the 5th: 4 in flight there
  // Requests that keep 2 in flight stay on `first` for ever.
  for (const Charge &ch : held)
    r->release(ch);
  held.clear();
  std::vector<Charge> window;
  for (int i = 0; i < 10; ++i) {
    Charge c;
    std::vector<size_t> order = r->route("m", 1, &c);
    window.push_back(c);
    if (window.size() > 2) {
      r->release(window.front());
      window.erase(window.begin());
    }
    if (i >= 2) {
      EXPECT_EQ(order.front(), window.front().worker);
    }
  }
  for (const Charge &ch : window)
    r->release(ch);
}

TEST(RouterTest, LptReplicaCountsAndDeadWorkers) {
  config::SchedulingConfig c = lpt(config::FillMode::kSpread);
  c.default_replicas = 2;
  auto r = fleet(c);
  r->tick(Clock::now());
  pickAndRelease(*r);
  ASSERT_TRUE(r->repackNow(Clock::now()).isOk());
  reactant_control::GetSchedulingStatusResponse status;
  r->fillStatus(&status);
  ASSERT_EQ(status.models_size(), 1);
  EXPECT_EQ(status.models(0).effective_replicas(), 2);
  EXPECT_TRUE(status.models(0).placed());
  std::set<size_t> used;
  std::vector<Charge> held;
  for (int i = 0; i < 6; ++i)
    used.insert(pick(*r, held));
  EXPECT_EQ(used.size(), 2u); // only its two replicas
  for (const Charge &ch : held)
    r->release(ch);
  // Both replicas down: any worker that serves the model takes it.
  for (size_t w : used)
    r->markDown(w, Clock::now());
  Charge ch;
  std::vector<size_t> order = r->route("m", 1, &ch);
  ASSERT_EQ(order.size(), 1u);
  EXPECT_FALSE(used.count(order.front()));
  r->release(ch);
}

TEST(RouterTest, PlacementIsGreedyByUtilizationWithHysteresis) {
  std::vector<PlacementModel> models = {
      {"c", 1.0, 10, 1, {0, 1}, {}},
      {"a", 3.0, 10, 1, {0, 1}, {}},
      {"b", 2.0, 10, 1, {0, 1}, {}},
      {"d", 1.0, 20, 1, {0, 1}, {}},
  };
  std::vector<PlacementWorker> workers(2);
  PlacementResult p = computeAssignment(models, workers, 0.0, true);
  // a -> w0 (3), b -> w1 (2), d (bigger footprint first among u = 1) -> w1 (3), c -> w0 (4)
  // vs w1 (4): tie, lower index.
  EXPECT_EQ(p.placement.at("a"), std::vector<size_t>{0});
  EXPECT_EQ(p.placement.at("b"), std::vector<size_t>{1});
  EXPECT_EQ(p.placement.at("d"), std::vector<size_t>{1});
  EXPECT_EQ(p.placement.at("c"), std::vector<size_t>{0});
  EXPECT_EQ(p.models_placed, 4);
  EXPECT_EQ(p.compute_load, (std::vector<double>{4.0, 3.0}));

  // c was on w1 before: moving to w0 gains nothing (4 vs 4), it stays.
  models[0].previous = {1};
  p = computeAssignment(models, workers, 0.0, true);
  EXPECT_EQ(p.placement.at("c"), std::vector<size_t>{1});
  // b was on w0 before: w1 is better by (5 - 2) / 5 = 0.6; hysteresis 0.7 holds it on w0.
  models[0].previous = {};
  models[2].previous = {0};
  p = computeAssignment(models, workers, 0.7, true);
  EXPECT_EQ(p.placement.at("b"), std::vector<size_t>{0});
  EXPECT_EQ(p.held_by_hysteresis, 1);
  EXPECT_EQ(p.models_moved, 0);
  p = computeAssignment(models, workers, 0.5, true);
  EXPECT_EQ(p.placement.at("b"), std::vector<size_t>{1});
  EXPECT_EQ(p.models_moved, 1);
  EXPECT_DOUBLE_EQ(p.max_improvement, 0.6);

  // Memory: a budget of 15 bytes per worker fits one 10-byte model each; the others are
  // placed anyway with a warning.
  std::vector<PlacementWorker> small = {{15}, {15}};
  p = computeAssignment({models[1], models[2]}, small, 0.0, true);
  EXPECT_NE(p.placement.at("a"), p.placement.at("b"));
  p = computeAssignment({models[1], models[2], models[3]}, small, 0.0, true);
  EXPECT_EQ(p.warnings.size(), 1u);
}

TEST(RouterTest, ComputeTriggerRepacks) {
  config::SchedulingConfig c = lpt(config::FillMode::kRun);
  c.first_rebalance_compute_seconds = 1.0;
  c.rebalance_compute_seconds = 2.0;
  auto r = fleet(c);
  ASSERT_EQ(r->tick(Clock::now())->trigger, "startup");
  pickAndRelease(*r);
  // 0.3 s per worker per round: 0.9 s after one round (no trigger), 1.8 s after two.
  for (size_t w = 0; w < 3; ++w)
    r->updateWorker(w, ready({{"m", 8}}, 0.3, 1), Clock::now());
  EXPECT_FALSE(r->tick(Clock::now()).has_value());
  for (size_t w = 0; w < 3; ++w)
    r->updateWorker(w, ready({{"m", 8}}, 0.6, 2), Clock::now());
  std::optional<RepackOutcome> o = r->tick(Clock::now());
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->trigger, "compute");
  EXPECT_DOUBLE_EQ(o->compute_seconds, 1.8);
  // The next budget is rebalance_compute_seconds.
  reactant_control::GetSchedulingStatusResponse status;
  r->fillStatus(&status);
  EXPECT_TRUE(status.repack().first_tick_repack_done());
  EXPECT_EQ(status.repack().active_threshold_seconds(), 2.0);
  EXPECT_EQ(status.repack().repack_count(), 2u);
  EXPECT_EQ(status.repack().last_trigger(), "compute");
  // A restarted worker (counters back to 0) counts from zero, never negative.
  r->updateWorker(0, ready({{"m", 8}}, 0.1, 1), Clock::now());
  r->fillStatus(&status);
  EXPECT_DOUBLE_EQ(status.repack().compute_accumulated_seconds(), 0.1);
}

TEST(RouterTest, StartupPreconditionsAndControlRpcs) {
  config::SchedulingConfig c = lpt(config::FillMode::kRun);
  Router r(c, kNames);
  r.updateWorker(0, ready({{"m", 8}}), Clock::now());
  r.updateWorker(1, ready({{"m", 8}}, 0, 0, "fair"), Clock::now());
  EXPECT_TRUE(r.startupErrors().empty()); // w2 has not answered yet
  r.updateWorker(2, ready({{"m", 8}, {"n", 8}}), Clock::now());
  std::vector<std::string> errors = r.startupErrors();
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0], "lpt_packing: worker 'w1' runs scheduler discipline 'fair'; lpt_packing "
                       "needs fifo or edf on every worker");
  EXPECT_EQ(errors[1], "lpt_packing: worker 'w2' serves a different model set than the first "
                       "worker; every worker must serve the same models");

  reactant_control::SchedulingPolicy values;
  values.set_hysteresis(0.2);
  values.set_routing_fill_mode("spread");
  std::vector<std::string> warnings;
  Result<RuntimePolicy> p = r.setPolicy({"hysteresis", "routing_fill_mode"}, values, &warnings);
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  EXPECT_EQ(p->generation, 1u);
  EXPECT_EQ(p->routing_fill_mode, config::FillMode::kSpread);
  // All or nothing: a bad field rejects the request and nothing changes.
  values.set_hysteresis(0.9);
  values.set_routing_fill_factor(-1);
  Result<RuntimePolicy> bad = r.setPolicy({"hysteresis", "routing_fill_factor"}, values, &warnings);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "routing_fill_factor must be > 0, got -1");
  EXPECT_EQ(r.policy().hysteresis, 0.2);
  EXPECT_EQ(r.setPolicy({"mode"}, values, &warnings).status().message(),
            "'mode' is a startup-only setting");
  EXPECT_EQ(r.setPolicy({"colour"}, values, &warnings).status().message(),
            "unknown SchedulingPolicy field 'colour' in update_mask");

  Result<Router::PlacementReply> put = r.setModelPlacement("m", 2, "run", 0.25, false);
  ASSERT_TRUE(put.isOk()) << put.status().toString();
  EXPECT_EQ(put->configured_replicas, 2);
  EXPECT_EQ(put->effective_replicas, 2);
  EXPECT_EQ(put->fill_mode, "run");
  EXPECT_EQ(put->fill_quantum, 2); // round(0.25 x 8)
  EXPECT_EQ(r.setModelPlacement("typo", 1, "", -1, false).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(r.setModelPlacement("later", 1, "", -1, true).isOk());
  EXPECT_EQ(r.setModelPlacement("m", -2, "", -1, false).status().code(),
            StatusCode::kInvalidArgument);

  // Outside lpt_packing the mutators answer FAILED_PRECONDITION.
  config::SchedulingConfig rr;
  Router plain(rr, kNames);
  EXPECT_EQ(plain.setPolicy({"hysteresis"}, values, &warnings).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(plain.repackNow(Clock::now()).status().code(), StatusCode::kFailedPrecondition);
}

TEST(RouterTest, AModelNoWorkerServesKeepsTheFirstWorkersStateAndReason) {
  config::SchedulingConfig rr;
  rr.mode = config::SchedulingMode::kRoundRobin;
  Router r(rr, kNames);
  WorkerSnapshot w0 = ready({{"m", 8}}), w1 = ready({{"m", 8}}), w2 = ready({{"m", 8}});
  w0.unserved["broken"] = {"UNAVAILABLE", "weights.safetensors: truncated"};
  w1.unserved["broken"] = {"UNAVAILABLE", "another reason"};
  w2.unserved["gone"] = {"UNAVAILABLE", "unloaded"};
  r.updateWorker(0, w0, Clock::now());
  r.updateWorker(1, w1, Clock::now());
  r.updateWorker(2, w2, Clock::now());
  EXPECT_EQ(r.knownModels(), (std::vector<std::string>{"broken", "gone", "m"}));
  EXPECT_TRUE(r.knowsModel("broken"));
  EXPECT_FALSE(r.modelReady("broken"));
  Charge c;
  EXPECT_TRUE(r.route("broken", 1, &c).empty());
  std::optional<UnservedModel> u = r.unservedModel("broken");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->state, "UNAVAILABLE");
  EXPECT_EQ(u->reason, "weights.safetensors: truncated");
  EXPECT_EQ(r.unservedModel("gone")->reason, "unloaded");
  EXPECT_FALSE(r.unservedModel("m"));
  EXPECT_FALSE(r.unservedModel("nope"));
  // READY on one worker, even one that is down, is not unserved: that worker comes back.
  w2.models["broken"];
  r.updateWorker(2, w2, Clock::now());
  r.markDown(2, Clock::now());
  EXPECT_FALSE(r.modelReady("broken"));
  EXPECT_FALSE(r.unservedModel("broken"));
  // The models the router routes to stay the READY ones.
  EXPECT_EQ(r.models(), (std::vector<std::string>{"m"}));
}

} // namespace
} // namespace rs::gateway
