//===- gateway/router.cc - Which worker serves a request --------------------===//
#include "gateway/router.h"

#include "protocol/proto/reactant_control_v1.pb.h"

#include <algorithm>
#include <cmath>

namespace rs::gateway {
namespace {

/// Default compute per item before any is measured: 1 ms.
constexpr double kDefaultComputeNsPerItem = 1e6;

bool contains(const std::vector<size_t> &v, size_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

/// `first`, then the rest of `pool` in rotation order after it, then `extra` not yet listed.
std::vector<size_t> orderFrom(size_t first, const std::vector<size_t> &pool,
                              const std::vector<size_t> &extra) {
  std::vector<size_t> out{first};
  auto at = std::find(pool.begin(), pool.end(), first);
  const size_t start = at == pool.end() ? 0 : static_cast<size_t>(at - pool.begin());
  for (size_t i = 1; i <= pool.size(); ++i) {
    size_t w = pool[(start + i) % pool.size()];
    if (!contains(out, w))
      out.push_back(w);
  }
  for (size_t w : extra)
    if (!contains(out, w))
      out.push_back(w);
  return out;
}

RuntimePolicy policyFrom(const config::SchedulingConfig &c) {
  RuntimePolicy p;
  p.rebalance_compute_seconds = c.rebalance_compute_seconds;
  p.first_rebalance_compute_seconds = c.first_rebalance_compute_seconds;
  p.hysteresis = c.hysteresis;
  p.ema_halflife_compute_seconds = c.ema_halflife_compute_seconds > 0
                                       ? c.ema_halflife_compute_seconds
                                       : c.rebalance_compute_seconds;
  p.default_replicas = c.default_replicas;
  p.routing_policy = c.routing_policy;
  p.routing_fill_factor = c.routing_fill_factor;
  p.routing_fill_mode = c.routing_fill_mode;
  p.compaction_mode = c.compaction_mode;
  p.compaction_interval = c.compaction_interval;
  p.forbid_memory_oversubscription = c.forbid_memory_oversubscription;
  return p;
}

} // namespace
void fillPolicyProto(const RuntimePolicy &p, reactant_control::SchedulingPolicy *out) {
  out->set_rebalance_compute_seconds(p.rebalance_compute_seconds);
  out->set_first_rebalance_compute_seconds(p.first_rebalance_compute_seconds);
  out->set_hysteresis(p.hysteresis);
  out->set_ema_halflife_compute_seconds(p.ema_halflife_compute_seconds);
  out->set_default_replicas(p.default_replicas);
  out->set_routing_policy(std::string(config::routingPolicyName(p.routing_policy)));
  out->set_routing_fill_factor(p.routing_fill_factor);
  out->set_routing_fill_mode(std::string(config::fillModeName(p.routing_fill_mode)));
  out->set_compaction_mode(std::string(config::compactionModeName(p.compaction_mode)));
  out->set_compaction_interval(p.compaction_interval);
  out->set_forbid_memory_oversubscription(p.forbid_memory_oversubscription);
  out->set_generation(p.generation);
}

Router::Router(config::SchedulingConfig config, std::vector<std::string> worker_names)
    : mode_(config.mode), basis_(config.work_basis), names_(std::move(worker_names)),
      config_(std::move(config)), policy_(policyFrom(config_)) {
  workers_.resize(names_.size());
  for (const auto &[name, m] : config_.models) {
    Override o{m.replicas, m.fill_mode, m.fill_factor};
    models_[name].pending = o;
    models_[name].active = o;
  }
}

// ---- Prober side ----------------------------------------------------------------

void Router::updateWorker(size_t worker, WorkerSnapshot snap, Clock::time_point probe_started) {
  std::lock_guard lock(mu_);
  WorkerState &ws = workers_.at(worker);
  if (!snap.answered)
    snap.ready = false;
  if (snap.ready && ws.down && probe_started >= ws.down_at)
    ws.down = false;
  ws.answered_once = ws.answered_once || snap.answered;
  if (snap.has_control) {
    for (const auto &[name, now] : snap.models) {
      ModelState &m = models_[name];
      m.weight_bytes = now.weight_bytes;
      auto prev = ws.last_counters.find(name);
      double dc = 0;
      uint64_t dr = 0;
      if (ws.counters_seeded) {
        if (prev == ws.last_counters.end() ||
            now.total_compute_seconds < prev->second.total_compute_seconds ||
            now.requests_served < prev->second.requests_served) {
          dc = now.total_compute_seconds; // new model or a restarted worker: count from 0
          dr = now.requests_served;
        } else {
          dc = now.total_compute_seconds - prev->second.total_compute_seconds;
          dr = now.requests_served - prev->second.requests_served;
        }
      }
      m.acc_compute += dc;
      m.acc_requests += dr;
      m.tick_compute += dc;
      compute_accumulated_ += dc;
      compute_since_repack_ += dc;
    }
    ws.last_counters = snap.models;
    ws.counters_seeded = true;
  }
  ws.snap = std::move(snap);
}

void Router::markDown(size_t worker, Clock::time_point when) {
  std::lock_guard lock(mu_);
  WorkerState &ws = workers_.at(worker);
  ws.down = true;
  ws.down_at = when;
}

// ---- Data path ------------------------------------------------------------------

bool Router::candidate(size_t w, const std::string &model) const {
  const WorkerState &ws = workers_[w];
  return ws.snap.ready && !ws.down && ws.snap.models.count(model) > 0;
}

std::vector<size_t> Router::candidatesLocked(const std::string &model) const {
  std::vector<size_t> out;
  for (size_t w = 0; w < workers_.size(); ++w)
    if (candidate(w, model))
      out.push_back(w);
  return out;
}

int64_t Router::workLocked(size_t w) const {
  const WorkerState &ws = workers_[w];
  switch (basis_) {
  case config::WorkBasis::kRequests: return ws.inflight_requests;
  case config::WorkBasis::kItems: return ws.inflight_items;
  case config::WorkBasis::kCompute: return ws.inflight_compute_ns;
  }
  return ws.inflight_requests;
}

int64_t Router::maxBatchLocked(const std::string &model) const {
  int64_t out = 0;
  for (const WorkerState &ws : workers_)
    if (auto it = ws.snap.models.find(model); it != ws.snap.models.end())
      out = std::max(out, it->second.max_batch);
  return out;
}

int64_t Router::quantumLocked(const std::string &model, const ModelState &m) const {
  const double factor = m.active.fill_factor.value_or(policy_.routing_fill_factor);
  return std::max<int64_t>(1, std::llround(factor * static_cast<double>(maxBatchLocked(model))));
}

config::FillMode Router::fillModeLocked(const ModelState &m) const {
  return m.active.fill_mode.value_or(policy_.routing_fill_mode);
}

int64_t Router::replicasFor(const ModelState &m) const {
  return m.active.replicas != 0 ? m.active.replicas : policy_.default_replicas;
}

int64_t Router::computeNsLocked(const ModelState &m, int64_t items) const {
  const double per_item =
      m.compute_ns_per_item > 0 ? m.compute_ns_per_item : kDefaultComputeNsPerItem;
  return std::max<int64_t>(1, std::llround(per_item * static_cast<double>(items)));
}

size_t Router::leastLocked(const std::vector<size_t> &pool, uint64_t rotation,
                           const std::function<int64_t(size_t)> &load) const {
  const size_t n = pool.size();
  const size_t start = static_cast<size_t>(rotation % n);
  size_t best = pool[start];
  int64_t best_load = load(best);
  for (size_t i = 1; i < n; ++i) {
    const size_t w = pool[(start + i) % n];
    const int64_t l = load(w);
    if (l < best_load) {
      best = w;
      best_load = l;
    }
  }
  return best;
}

std::vector<size_t> Router::selectLptLocked(const std::string &model, ModelState &m,
                                            int64_t items) {
  const std::vector<size_t> cands = candidatesLocked(model);
  if (!m.placed) // cold: uniform
    return orderFrom(cands[m.rotation++ % cands.size()], cands, {});
  std::vector<size_t> replicas;
  for (size_t w : m.placement)
    if (contains(cands, w))
      replicas.push_back(w);
  if (replicas.empty())
    replicas = cands; // every replica is down: any worker that serves the model
  std::sort(replicas.begin(), replicas.end());
  const int64_t quantum = quantumLocked(model, m);
  auto outstanding = [&](size_t w) {
    auto it = replicas_.find({model, w});
    return it == replicas_.end() ? int64_t{0} : it->second.items;
  };
  auto open = [&]() -> size_t {
    if (policy_.routing_policy == config::RoutingPolicy::kFillRr)
      return replicas[m.rotation++ % replicas.size()];
    return leastLocked(replicas, m.rotation++, [&](size_t w) { return workLocked(w); });
  };
  size_t first = replicas.front();
  switch (fillModeLocked(m)) {
  case config::FillMode::kSpread: first = leastLocked(replicas, m.rotation++, outstanding); break;
  case config::FillMode::kRun: {
    bool keep = m.run_worker >= 0 && contains(replicas, static_cast<size_t>(m.run_worker)) &&
                m.run_spent < quantum && m.inflight_items > 0;
    if (keep) {
      int64_t least = outstanding(replicas.front());
      for (size_t w : replicas)
        least = std::min(least, outstanding(w));
      keep = outstanding(static_cast<size_t>(m.run_worker)) - least < quantum;
    }
    if (!keep) {
      m.run_worker = static_cast<int64_t>(open());
      m.run_spent = 0;
    }
    m.run_spent += items;
    first = static_cast<size_t>(m.run_worker);
    break;
  }
  case config::FillMode::kInflight: {
    bool keep = m.run_worker >= 0 && contains(replicas, static_cast<size_t>(m.run_worker));
    if (keep) {
      auto it = replicas_.find({model, static_cast<size_t>(m.run_worker)});
      keep = (it == replicas_.end() ? 0 : it->second.requests) < quantum;
    }
    if (!keep)
      m.run_worker = static_cast<int64_t>(open());
    first = static_cast<size_t>(m.run_worker);
    break;
  }
  }
  return orderFrom(first, replicas, cands);
}

std::vector<size_t> Router::route(const std::string &model, int64_t items, Charge *charge) {
  std::lock_guard lock(mu_);
  const std::vector<size_t> cands = candidatesLocked(model);
  if (cands.empty())
    return {};
  ModelState &m = models_[model];
  ++m.arrivals;
  ++m.arrivals_since_repack;
  std::vector<size_t> order;
  switch (mode_) {
  case config::SchedulingMode::kRoundRobin:
    order = orderFrom(cands[m.rotation++ % cands.size()], cands, {});
    break;
  case config::SchedulingMode::kLeastOutstanding:
    order = orderFrom(leastLocked(cands, m.rotation++, [&](size_t w) { return workLocked(w); }),
                      cands, {});
    break;
  case config::SchedulingMode::kLptPacking: order = selectLptLocked(model, m, items); break;
  }
  *charge = chargeLocked(model, order.front(), items);
  return order;
}

Charge Router::charge(const std::string &model, size_t worker, int64_t items) {
  std::lock_guard lock(mu_);
  return chargeLocked(model, worker, items);
}

Charge Router::chargeLocked(const std::string &model, size_t worker, int64_t items) {
  ModelState &m = models_[model];
  Charge c{model, worker, items, computeNsLocked(m, items)};
  WorkerState &ws = workers_[worker];
  ++ws.inflight_requests;
  ws.inflight_items += items;
  ws.inflight_compute_ns += c.compute_ns;
  Replica &r = replicas_[{model, worker}];
  r.items += items;
  ++r.requests;
  ++r.routed;
  m.inflight_items += items;
  return c;
}

void Router::release(const Charge &c) {
  std::lock_guard lock(mu_);
  WorkerState &ws = workers_[c.worker];
  --ws.inflight_requests;
  ws.inflight_items -= c.items;
  ws.inflight_compute_ns -= c.compute_ns;
  Replica &r = replicas_[{c.model, c.worker}];
  r.items -= c.items;
  --r.requests;
  ModelState &m = models_[c.model];
  m.inflight_items -= c.items;
  m.items_done += static_cast<uint64_t>(c.items);
}

} // namespace rs::gateway
