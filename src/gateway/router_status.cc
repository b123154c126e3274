//===- gateway/router_status.cc - Router queries, metrics and control RPCs --===//
#include "gateway/router.h"

#include "protocol/proto/reactant_control_v1.pb.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace rs::gateway {

// ---- Queries ----------------------------------------------------------------------

bool Router::anyReady() const {
  std::lock_guard lock(mu_);
  for (const WorkerState &ws : workers_)
    if (ws.snap.ready && !ws.down)
      return true;
  return false;
}

bool Router::workerReady(size_t worker) const {
  std::lock_guard lock(mu_);
  const WorkerState &ws = workers_.at(worker);
  return ws.snap.ready && !ws.down;
}

bool Router::modelReady(const std::string &model) const {
  std::lock_guard lock(mu_);
  return !candidatesLocked(model).empty();
}

std::vector<std::string> Router::models() const {
  std::lock_guard lock(mu_);
  std::set<std::string> out;
  for (size_t w = 0; w < workers_.size(); ++w)
    if (workers_[w].snap.ready && !workers_[w].down)
      for (const auto &[name, info] : workers_[w].snap.models)
        out.insert(name);
  return {out.begin(), out.end()};
}

std::vector<size_t> Router::workersFor(const std::string &model) const {
  std::lock_guard lock(mu_);
  return candidatesLocked(model);
}

bool Router::knowsModel(const std::string &model) const {
  std::lock_guard lock(mu_);
  for (const WorkerState &ws : workers_)
    if (ws.snap.models.count(model) || ws.snap.unserved.count(model))
      return true;
  return false;
}

std::vector<std::string> Router::knownModels() const {
  std::lock_guard lock(mu_);
  std::set<std::string> out;
  for (const WorkerState &ws : workers_) {
    for (const auto &[name, info] : ws.snap.models)
      out.insert(name);
    for (const auto &[name, info] : ws.snap.unserved)
      out.insert(name);
  }
  return {out.begin(), out.end()};
}

std::optional<UnservedModel> Router::unservedModel(const std::string &model) const {
  std::lock_guard lock(mu_);
  std::optional<UnservedModel> first;
  for (const WorkerState &ws : workers_) {
    if (ws.snap.models.count(model))
      return std::nullopt;
    if (auto it = ws.snap.unserved.find(model); it != ws.snap.unserved.end() && !first)
      first = it->second;
  }
  return first;
}

std::vector<std::string> Router::startupErrors() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> errors;
  if (mode_ != config::SchedulingMode::kLptPacking)
    return errors;
  for (const WorkerState &ws : workers_)
    if (!ws.answered_once)
      return errors; // checked once every worker answered
  std::set<std::string> first_set;
  bool have_first = false;
  for (size_t w = 0; w < workers_.size(); ++w) {
    const WorkerSnapshot &s = workers_[w].snap;
    if (!s.answered)
      continue;
    if (!s.has_control) {
      errors.push_back("lpt_packing: worker '" + names_[w] +
                       "' does not answer reactant_control.ControlService/ModelControlStatus");
      continue;
    }
    if (s.discipline != "fifo" && s.discipline != "edf")
      errors.push_back("lpt_packing: worker '" + names_[w] + "' runs scheduler discipline '" +
                       s.discipline + "'; lpt_packing needs fifo or edf on every worker");
    std::set<std::string> set;
    for (const auto &[name, info] : s.models)
      set.insert(name);
    if (!have_first) {
      first_set = set;
      have_first = true;
    } else if (set != first_set) {
      errors.push_back("lpt_packing: worker '" + names_[w] +
                       "' serves a different model set than the first worker; every worker "
                       "must serve the same models");
    }
  }
  return errors;
}

RouterMetrics Router::metrics() const {
  std::lock_guard lock(mu_);
  RouterMetrics out;
  out.basis = std::string(config::workBasisName(basis_));
  for (const auto &[key, r] : replicas_)
    out.replicas.push_back({key.first, names_[key.second], r.items, r.routed});
  for (size_t w = 0; w < workers_.size(); ++w) {
    const WorkerState &ws = workers_[w];
    double work = static_cast<double>(workLocked(w));
    if (basis_ == config::WorkBasis::kCompute)
      work /= 1e9;
    out.workers.push_back({names_[w], ws.snap.ready && !ws.down, work});
  }
  std::set<std::string> routable;
  for (size_t w = 0; w < workers_.size(); ++w)
    if (workers_[w].snap.ready && !workers_[w].down)
      for (const auto &[name, info] : workers_[w].snap.models)
        routable.insert(name);
  out.routing_table_size = static_cast<int64_t>(routable.size());
  for (const auto &[name, m] : models_) {
    if (!routable.count(name) && !m.placed)
      continue;
    RouterMetrics::Model mm;
    mm.name = name;
    mm.utilization = m.utilization;
    mm.fill_quantum = quantumLocked(name, m);
    if (m.placed) {
      mm.replicas = static_cast<int64_t>(m.placement.size());
      for (size_t w : m.placement)
        mm.placement_weights.emplace_back(names_[w], 1.0 / static_cast<double>(m.placement.size()));
    } else {
      mm.replicas = static_cast<int64_t>(candidatesLocked(name).size());
    }
    out.models.push_back(std::move(mm));
  }
  out.repacks = repacks_by_trigger_;
  return out;
}

// ---- GatewayControlService ----------------------------------------------------------

RuntimePolicy Router::policy() const {
  std::lock_guard lock(mu_);
  return policy_;
}

void Router::fillStatus(reactant_control::GetSchedulingStatusResponse *out) const {
  std::lock_guard lock(mu_);
  out->set_mode(std::string(config::schedulingModeName(mode_)));
  const bool lpt = mode_ == config::SchedulingMode::kLptPacking;
  if (lpt) {
    fillPolicyProto(policy_, out->mutable_policy());
    reactant_control::RepackStatus *r = out->mutable_repack();
    r->set_last_repack_unix_seconds(last_repack_unix_);
    r->set_last_repack_wall_elapsed_seconds(last_repack_wall_);
    r->set_last_repack_compute_seconds(last_repack_compute_);
    r->set_last_trigger(last_trigger_);
    r->set_last_models_placed(last_placed_);
    r->set_last_models_moved(last_moved_);
    r->set_repack_count(repack_count_);
    r->set_compute_accumulated_seconds(compute_accumulated_);
    r->set_active_threshold_seconds(!first_tick_repack_done_ &&
                                            policy_.first_rebalance_compute_seconds > 0
                                        ? policy_.first_rebalance_compute_seconds
                                        : policy_.rebalance_compute_seconds);
    r->set_first_tick_repack_done(first_tick_repack_done_);
    r->set_last_tick_unix_seconds(last_tick_unix_);
    r->set_repacks_since_compaction(repacks_since_compaction_);
    r->set_operator_repacks_requested(operator_requested_);
    r->set_operator_repacks_completed(operator_completed_);
  }
  std::set<std::string> names;
  for (const WorkerState &ws : workers_)
    for (const auto &[name, info] : ws.snap.models)
      names.insert(name);
  for (const auto &[name, m] : models_)
    if (m.placed || m.arrivals > 0)
      names.insert(name);
  std::vector<int64_t> placed_count(workers_.size(), 0), assigned(workers_.size(), 0);
  for (const std::string &name : names) {
    auto it = models_.find(name);
    static const ModelState kEmpty;
    const ModelState &m = it == models_.end() ? kEmpty : it->second;
    reactant_control::ModelSchedulingStatus *ms = out->add_models();
    ms->set_name(name);
    ms->set_configured_replicas(m.pending.replicas);
    std::vector<size_t> reps = m.placed ? m.placement : candidatesLocked(name);
    ms->set_effective_replicas(static_cast<int64_t>(reps.size()));
    for (size_t w : reps) {
      reactant_control::ReplicaPlacement *rp = ms->add_replicas();
      rp->set_worker(names_[w]);
      rp->set_weight(1.0 / static_cast<double>(reps.size()));
      if (auto r = replicas_.find({name, w}); r != replicas_.end()) {
        rp->set_outstanding(r->second.items);
        rp->set_routed_total(static_cast<int64_t>(r->second.routed));
      }
      if (m.placed) {
        ++placed_count[w];
        assigned[w] += m.weight_bytes;
      }
    }
    ms->set_utilization(m.utilization);
    ms->set_arrival_rate(m.rate);
    ms->set_cost_seconds(m.cost);
    ms->set_max_batch(maxBatchLocked(name));
    ms->set_fill_mode(std::string(config::fillModeName(fillModeLocked(m))));
    ms->set_fill_quantum(quantumLocked(name, m));
    ms->set_weight_nbytes(m.weight_bytes);
    ms->set_placed(m.placed);
    ms->set_drifted(m.drifted);
  }
  for (size_t w = 0; w < workers_.size(); ++w) {
    const WorkerState &ws = workers_[w];
    reactant_control::WorkerSchedulingStatus *s = out->add_workers();
    s->set_worker(names_[w]);
    s->set_ready(ws.snap.ready && !ws.down);
    s->set_models_placed(placed_count[w]);
    s->set_inflight_compute(static_cast<double>(ws.inflight_compute_ns) / 1e9);
    s->set_assigned_weight_bytes(assigned[w]);
    const int64_t budget = static_cast<int64_t>(ws.snap.weight_cache_max_bytes);
    s->set_weight_budget_bytes(budget);
    s->set_oversubscribed(budget > 0 && assigned[w] > budget);
  }
  for (const std::string &w : warnings_)
    out->add_warnings(w);
  if (lpt && policy_.routing_fill_mode == config::FillMode::kInflight)
    out->add_warnings("routing_fill_mode inflight can serve a model from one replica for ever; "
                      "prefer run, or spread");
}

Result<RuntimePolicy> Router::setPolicy(const std::vector<std::string> &mask,
                                        const reactant_control::SchedulingPolicy &v,
                                        std::vector<std::string> *warnings) {
  if (mode_ != config::SchedulingMode::kLptPacking)
    return failedPrecondition() << "SetSchedulingPolicy needs scheduling.mode lpt_packing (the "
                                   "mode is "
                                << config::schedulingModeName(mode_) << ")";
  if (mask.empty())
    return invalidArgument() << "update_mask is empty: name the SchedulingPolicy fields to set";
  std::lock_guard lock(mu_);
  RuntimePolicy p = policy_;
  for (const std::string &field : mask) {
    if (field == "mode" || field == "scheduling_mode" || field == "max_worker_share" ||
        field == "endpoints" || field == "listen")
      return invalidArgument() << "'" << field << "' is a startup-only setting";
    if (field == "rebalance_compute_seconds") {
      if (!(v.rebalance_compute_seconds() > 0))
        return invalidArgument() << "rebalance_compute_seconds must be > 0, got "
                                 << v.rebalance_compute_seconds();
      p.rebalance_compute_seconds = v.rebalance_compute_seconds();
    } else if (field == "first_rebalance_compute_seconds") {
      if (!(v.first_rebalance_compute_seconds() >= 0))
        return invalidArgument() << "first_rebalance_compute_seconds must be >= 0, got "
                                 << v.first_rebalance_compute_seconds();
      p.first_rebalance_compute_seconds = v.first_rebalance_compute_seconds();
    } else if (field == "hysteresis") {
      if (!(v.hysteresis() >= 0 && v.hysteresis() < 1))
        return invalidArgument() << "hysteresis must be in [0, 1), got " << v.hysteresis();
      p.hysteresis = v.hysteresis();
    } else if (field == "ema_halflife_compute_seconds") {
      if (!(v.ema_halflife_compute_seconds() > 0))
        return invalidArgument() << "ema_halflife_compute_seconds must be > 0, got "
                                 << v.ema_halflife_compute_seconds();
      p.ema_halflife_compute_seconds = v.ema_halflife_compute_seconds();
    } else if (field == "default_replicas") {
      if (v.default_replicas() < 1 && v.default_replicas() != config::kAllReplicas)
        return invalidArgument() << "default_replicas must be >= 1 or -1 (all), got "
                                 << v.default_replicas();
      p.default_replicas = v.default_replicas();
    } else if (field == "routing_policy") {
      RS_ASSIGN_OR_RETURN(p.routing_policy, config::parseRoutingPolicy(v.routing_policy()));
    } else if (field == "routing_fill_factor") {
      if (!(v.routing_fill_factor() > 0))
        return invalidArgument() << "routing_fill_factor must be > 0, got "
                                 << v.routing_fill_factor();
      p.routing_fill_factor = v.routing_fill_factor();
    } else if (field == "routing_fill_mode") {
      RS_ASSIGN_OR_RETURN(p.routing_fill_mode, config::parseFillMode(v.routing_fill_mode()));
      if (p.routing_fill_mode == config::FillMode::kInflight)
        warnings->push_back("routing_fill_mode inflight can serve a model from one replica for "
                            "ever; prefer run, or spread");
    } else if (field == "compaction_mode") {
      RS_ASSIGN_OR_RETURN(p.compaction_mode, config::parseCompactionMode(v.compaction_mode()));
    } else if (field == "compaction_interval") {
      if (v.compaction_interval() < 0)
        return invalidArgument() << "compaction_interval must be >= 0, got "
                                 << v.compaction_interval();
      p.compaction_interval = v.compaction_interval();
    } else if (field == "forbid_memory_oversubscription") {
      p.forbid_memory_oversubscription = v.forbid_memory_oversubscription();
    } else {
      return invalidArgument() << "unknown SchedulingPolicy field '" << field << "' in update_mask";
    }
  }
  ++p.generation;
  policy_ = p;
  return p;
}

Result<Router::PlacementReply> Router::setModelPlacement(const std::string &model, int64_t replicas,
                                                         const std::string &fill_mode,
                                                         double fill_factor,
                                                         bool allow_unknown_model) {
  if (mode_ != config::SchedulingMode::kLptPacking)
    return failedPrecondition() << "SetModelPlacement needs scheduling.mode lpt_packing (the "
                                   "mode is "
                                << config::schedulingModeName(mode_) << ")";
  if (model.empty())
    return invalidArgument() << "model name is empty";
  if (replicas < config::kAllReplicas)
    return invalidArgument() << "replicas must be > 0, -1 (all) or 0 (clear), got " << replicas;
  std::optional<config::FillMode> mode;
  if (!fill_mode.empty() && fill_mode != "inherit") {
    RS_ASSIGN_OR_RETURN(mode, config::parseFillMode(fill_mode));
  }
  std::lock_guard lock(mu_);
  bool known = false;
  for (const WorkerState &ws : workers_)
    known = known || ws.snap.models.count(model) > 0;
  if (!known && !allow_unknown_model)
    return notFound() << "model '" << model
                      << "' is not served by any worker (set allow_unknown_model to pre-seed it)";
  ModelState &m = models_[model];
  m.pending.replicas = replicas;
  if (fill_mode == "inherit")
    m.pending.fill_mode.reset();
  else if (mode)
    m.pending.fill_mode = mode;
  if (fill_factor == 0)
    m.pending.fill_factor.reset();
  else if (fill_factor > 0)
    m.pending.fill_factor = fill_factor;
  PlacementReply reply;
  reply.configured_replicas = m.pending.replicas;
  const int64_t serving = static_cast<int64_t>(candidatesLocked(model).size());
  const int64_t want = m.pending.replicas != 0 ? m.pending.replicas : policy_.default_replicas;
  reply.effective_replicas =
      serving == 0 ? 0 : std::clamp<int64_t>(want < 0 ? serving : want, 1, serving);
  const config::FillMode resolved = m.pending.fill_mode.value_or(policy_.routing_fill_mode);
  reply.fill_mode = std::string(config::fillModeName(resolved));
  const double factor = m.pending.fill_factor.value_or(policy_.routing_fill_factor);
  reply.fill_quantum =
      std::max<int64_t>(1, std::llround(factor * static_cast<double>(maxBatchLocked(model))));
  if (resolved == config::FillMode::kInflight)
    reply.warnings.push_back("fill_mode inflight can serve a model from one replica for ever");
  reply.warnings.push_back("takes effect at the next repack");
  return reply;
}

} // namespace rs::gateway
