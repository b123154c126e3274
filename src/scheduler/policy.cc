//===- scheduler/policy.cc - Costs, the coalescing wait, the disciplines --===//
//
// What the dispatch loop decides before a batch runs: the cost estimate and recent-compute
// EMA of a model, the batch size its queue would run at, whether the coalescing wait holds
// it, and which model the discipline (fifo, edf, fair) runs next (scheduler.h).
//
//===----------------------------------------------------------------------===//
#include "scheduler/scheduler_impl.h"

#include <algorithm>
#include <cmath>

namespace rs::scheduler {

void Scheduler::decayEma(ModelState &state, Clock::time_point t) const {
  const double dt = std::chrono::duration<double>(t - state.ema_at).count();
  if (dt > 0) {
    state.ema *= std::exp(-dt * std::log(2.0) / options_.ema_halflife_seconds);
    state.ema_at = t;
  }
}

void Scheduler::foldCost(ModelState &state, int64_t batch_size, double seconds) const {
  auto [it, inserted] = state.cost.try_emplace(batch_size, seconds);
  if (!inserted)
    it->second = options_.cost_ema_alpha * seconds + (1 - options_.cost_ema_alpha) * it->second;
}

double Scheduler::costOf(const ModelState &state, int64_t batch_size) const {
  auto it = state.cost.find(batch_size);
  return it == state.cost.end() ? options_.default_cost_seconds : it->second;
}

int64_t Scheduler::rowCap(const ModelState &state) {
  const std::vector<int64_t> &sizes = state.batching.compiled_batch_sizes;
  int64_t cap = sizes.empty() ? 0 : sizes.back();
  if (state.policy.max_batch_size > 0)
    cap = std::min(cap, state.policy.max_batch_size);
  return cap;
}

bool Scheduler::sameShapes(const ModelBatching &batching, const QueuedPiece &front,
                           const QueuedPiece &next) {
  if (front.request == next.request)
    return true;
  const std::vector<Tensor> &a = front.request->inputs;
  const std::vector<Tensor> &b = next.request->inputs;
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const int64_t axis = i < batching.input_batch_axes.size() ? batching.input_batch_axes[i] : -1;
    if (!sameRowShape(a[i], b[i], axis))
      return false;
  }
  return true;
}

int64_t Scheduler::plannedBatchSize(const ModelState &state) const {
  const std::vector<int64_t> &sizes = state.batching.compiled_batch_sizes;
  if (sizes.empty())
    return 0;
  const int64_t cap = rowCap(state);
  int64_t rows = 0;
  for (const QueuedPiece &item : state.queue) {
    if (rows > 0 && (!item.coalescable || rows + item.rows.count > cap ||
                     !sameShapes(state.batching, state.queue.front(), item)))
      break;
    rows += item.rows.count;
    if (!item.coalescable)
      break;
  }
  if (rows <= 0)
    return sizes.front();
  return chooseBatchSize(sizes, std::min(rows, sizes.back()), options_.batch_sizes);
}

std::optional<Clock::time_point> Scheduler::holdUntil(const ModelState &state,
                                                      Clock::time_point t) const {
  const std::vector<int64_t> &sizes = state.batching.compiled_batch_sizes;
  if (options_.max_queue_delay_us.count() <= 0 || sizes.empty() || state.queue.empty() ||
      !state.queue.front().coalescable || state.queue.front().committed ||
      stopping_) // draining: send what is queued at once
    return std::nullopt;
  const int64_t cap = rowCap(state);
  int64_t rows = 0;
  for (const QueuedPiece &item : state.queue) {
    if (!item.coalescable || rows + item.rows.count > cap ||
        !sameShapes(state.batching, state.queue.front(), item))
      return std::nullopt; // the batch cannot grow any further
    rows += item.rows.count;
  }
  if (rows >= cap)
    return std::nullopt;
  // The wait runs from the later of the oldest request's arrival and the end of the model's
  // last batch: rows that queued while a batch ran still wait for the clients that batch
  // answered. Measured from arrival alone (Triton's rule), closed-loop clients split into
  // groups that alternate in half-full batches, each finding its rows already "old".
  Clock::time_point until =
      std::max(state.queue.front().enqueued, state.last_finished) +
      std::chrono::duration_cast<Clock::duration>(options_.max_queue_delay_us);
  // Leave each deadline the time the largest batch is expected to take (twice under edf,
  // whose dispatch sheds a request within that margin of its deadline).
  const double cost_s = costOf(state, chooseBatchSize(sizes, cap, options_.batch_sizes)) *
                        (options_.discipline == Discipline::kEdf ? 2 : 1);
  const auto cost =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(cost_s));
  for (const QueuedPiece &item : state.queue)
    if (item.deadline)
      until = std::min(until, *item.deadline - cost);
  if (t >= until)
    return std::nullopt;
  return until;
}

Scheduler::ModelMap::iterator Scheduler::pick(Clock::time_point t) {
  if (ModelMap::iterator committed = pickCommitted(); committed != models_.end())
    return committed;
  switch (options_.discipline) {
  case Discipline::kFifo: return pickFifo();
  case Discipline::kEdf: return pickEdf();
  case Discipline::kFair: return pickFair(t);
  }
  return models_.end();
}

namespace {

/// Whether the model's front request arrived before the other's (the tie-break of every
/// discipline); both queues are non-empty.
template <typename State> bool olderFront(const State &a, const State &b) {
  return a.queue.front().seq < b.queue.front().seq;
}

} // namespace

Scheduler::ModelMap::iterator Scheduler::pickCommitted() {
  ModelMap::iterator chosen = models_.end();
  for (auto it = models_.begin(); it != models_.end(); ++it)
    if (!it->second.queue.empty() && it->second.queue.front().committed &&
        (chosen == models_.end() || olderFront(it->second, chosen->second)))
      chosen = it;
  return chosen;
}

Scheduler::ModelMap::iterator Scheduler::pickFifo() {
  ModelMap::iterator chosen = models_.end();
  for (auto it = models_.begin(); it != models_.end(); ++it)
    if (!it->second.queue.empty() && !it->second.held &&
        (chosen == models_.end() || olderFront(it->second, chosen->second)))
      chosen = it;
  return chosen;
}

Scheduler::ModelMap::iterator Scheduler::pickEdf() {
  ModelMap::iterator chosen = models_.end();
  constexpr Clock::time_point kNever = Clock::time_point::max();
  Clock::time_point best = kNever;
  for (auto it = models_.begin(); it != models_.end(); ++it) {
    if (it->second.queue.empty() || it->second.held)
      continue;
    Clock::time_point soonest = kNever;
    for (const QueuedPiece &item : it->second.queue)
      if (item.deadline && *item.deadline < soonest)
        soonest = *item.deadline;
    if (chosen == models_.end() || soonest < best ||
        (soonest == best && olderFront(it->second, chosen->second))) {
      chosen = it;
      best = soonest;
    }
  }
  return chosen;
}

Scheduler::ModelMap::iterator Scheduler::pickFair(Clock::time_point t) {
  ModelMap::iterator chosen = models_.end();
  double weight_sum = 0, ema_sum = 0;
  for (auto &[name, state] : models_) {
    if (state.queue.empty() || state.held)
      continue;
    decayEma(state, t);
    weight_sum += state.policy.weight;
    ema_sum += state.ema;
  }
  double best = 0;
  const double cap = options_.recency_penalty_cap;
  for (auto it = models_.begin(); it != models_.end(); ++it) {
    ModelState &state = it->second;
    if (state.queue.empty() || state.held)
      continue;
    const double share = state.policy.weight / weight_sum;
    const double nema = ema_sum > 0 ? state.ema / ema_sum : 0;
    const double eff_cost =
        costOf(state, plannedBatchSize(state)) * (1 - options_.coalescing_discount);
    const double priority = std::clamp(share - nema, -cap, cap) / eff_cost;
    if (chosen == models_.end() || priority > best ||
        (priority == best && olderFront(state, chosen->second))) {
      chosen = it;
      best = priority;
    }
  }
  return chosen;
}

} // namespace rs::scheduler
