//===- gateway/router_repack.cc - lpt_packing repacks and their triggers ----===//
#include "gateway/router.h"

#include <cmath>
#include <set>

namespace rs::gateway {
namespace {

double unixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

} // namespace

std::optional<RepackOutcome> Router::tick(Clock::time_point now) {
  std::lock_guard lock(mu_);
  // Compute per item, from the compute reported and the items answered since the last tick.
  for (auto &[name, m] : models_) {
    const uint64_t items = m.items_done - m.items_done_at_tick;
    if (m.tick_compute > 0 && items > 0)
      m.compute_ns_per_item = m.tick_compute * 1e9 / static_cast<double>(items);
    m.tick_compute = 0;
    m.items_done_at_tick = m.items_done;
  }
  if (mode_ != config::SchedulingMode::kLptPacking)
    return std::nullopt;
  last_tick_unix_ = unixNow();
  if (!startup_repack_done_) {
    for (const WorkerState &ws : workers_)
      if (!ws.answered_once)
        return std::nullopt;
    startup_repack_done_ = true;
    return repackLocked("startup", now);
  }
  const double threshold = !first_tick_repack_done_ && policy_.first_rebalance_compute_seconds > 0
                               ? policy_.first_rebalance_compute_seconds
                               : policy_.rebalance_compute_seconds;
  if (compute_accumulated_ < threshold)
    return std::nullopt;
  first_tick_repack_done_ = true;
  return repackLocked("compute", now);
}

Result<RepackOutcome> Router::repackNow(Clock::time_point now) {
  if (mode_ != config::SchedulingMode::kLptPacking)
    return failedPrecondition() << "Repack needs scheduling.mode lpt_packing (the mode is "
                                << config::schedulingModeName(mode_) << ")";
  std::lock_guard lock(mu_);
  ++operator_requested_;
  RepackOutcome out = repackLocked("operator", now);
  ++operator_completed_;
  return out;
}

RepackOutcome Router::repackLocked(const std::string &trigger, Clock::time_point now) {
  RepackOutcome out;
  out.trigger = trigger;
  const bool had_repack = repack_count_ > 0;
  const double wall = had_repack ? std::chrono::duration<double>(now - last_repack_).count() : 0;
  const double compute = compute_since_repack_;
  const double halflife = std::max(policy_.ema_halflife_compute_seconds, 1e-9);
  const double alpha = 1.0 - std::exp2(-compute / halflife);

  // Fold the windows into the EWMAs and activate pending overrides.
  for (auto &[name, m] : models_) {
    const double rate_window = wall > 0 ? static_cast<double>(m.arrivals_since_repack) / wall : 0;
    const bool have_cost = m.acc_requests > 0;
    const double cost_window =
        have_cost ? m.acc_compute / static_cast<double>(m.acc_requests) : m.cost;
    if (!m.stats_seeded) {
      if (m.arrivals_since_repack > 0 || have_cost) {
        m.rate = rate_window;
        m.cost = cost_window;
        m.stats_seeded = true;
      }
    } else {
      m.rate = alpha * rate_window + (1 - alpha) * m.rate;
      if (have_cost)
        m.cost = alpha * cost_window + (1 - alpha) * m.cost;
    }
    m.utilization = m.rate * m.cost;
    m.arrivals_since_repack = 0;
    m.acc_compute = 0;
    m.acc_requests = 0;
    m.active = m.pending;
  }

  // Ready workers and the models they serve.
  std::vector<size_t> ready;
  for (size_t w = 0; w < workers_.size(); ++w)
    if (workers_[w].snap.ready && !workers_[w].down)
      ready.push_back(w);
  std::vector<PlacementModel> inputs;
  for (auto &[name, m] : models_) {
    std::vector<size_t> cands;
    for (size_t w : ready)
      if (workers_[w].snap.models.count(name))
        cands.push_back(w);
    m.drifted = !cands.empty() && cands.size() < ready.size();
    if (m.drifted)
      out.warnings.push_back("model '" + name + "' is served by " + std::to_string(cands.size()) +
                             " of " + std::to_string(ready.size()) +
                             " ready workers; it routes over those");
    if (m.arrivals == 0 || cands.empty())
      continue; // cold, or nowhere to place it
    PlacementModel pm;
    pm.name = name;
    pm.utilization = m.utilization;
    pm.footprint_bytes = m.weight_bytes;
    pm.replicas = replicasFor(m);
    pm.candidates = std::move(cands);
    pm.previous = m.placement;
    inputs.push_back(std::move(pm));
  }
  std::vector<PlacementWorker> budgets(workers_.size());
  for (size_t w = 0; w < workers_.size(); ++w)
    budgets[w].budget_bytes = static_cast<int64_t>(workers_[w].snap.weight_cache_max_bytes);
  PlacementResult result = computeAssignment(inputs, budgets, policy_.hysteresis,
                                             policy_.forbid_memory_oversubscription);

  // Install; note which workers gained or lost a model.
  std::map<size_t, std::vector<std::string>> changed; // worker -> newly assigned models
  for (auto &[name, placement] : result.placement) {
    ModelState &m = models_[name];
    std::set<size_t> before(m.placement.begin(), m.placement.end());
    std::set<size_t> after(placement.begin(), placement.end());
    if (before != after) {
      for (size_t w : after)
        if (!before.count(w))
          changed[w].push_back(name);
      for (size_t w : before)
        if (!after.count(w))
          changed[w];
      m.run_worker = -1;
      m.run_spent = 0;
    }
    m.placement = placement;
    m.placed = true;
  }
  out.models_placed = result.models_placed;
  out.models_moved = result.models_moved;
  out.held_by_hysteresis = result.held_by_hysteresis;
  out.max_improvement = result.max_improvement;
  out.compute_seconds = compute;
  out.wall_seconds = wall;
  for (std::string &w : result.warnings)
    out.warnings.push_back(std::move(w));

  if (!changed.empty() && had_repack) {
    ++repacks_since_compaction_;
    if (policy_.compaction_mode != config::CompactionMode::kOff &&
        policy_.compaction_interval > 0 &&
        repacks_since_compaction_ >= policy_.compaction_interval) {
      for (auto &[w, reload] : changed)
        out.compactions.emplace_back(w,
                                     policy_.compaction_mode == config::CompactionMode::kScheduled
                                         ? reload
                                         : std::vector<std::string>{});
      repacks_since_compaction_ = 0;
    }
  }
  last_repack_ = now;
  last_repack_unix_ = unixNow();
  last_repack_wall_ = wall;
  last_repack_compute_ = compute;
  compute_since_repack_ = 0;
  compute_accumulated_ = 0;
  last_trigger_ = trigger;
  last_placed_ = out.models_placed;
  last_moved_ = out.models_moved;
  ++repack_count_;
  ++repacks_by_trigger_[trigger];
  warnings_ = out.warnings;
  return out;
}

} // namespace rs::gateway
