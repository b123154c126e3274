//===- gateway/placement.cc - lpt_packing placement (greedy bin packing) ----===//
#include "gateway/placement.h"

#include <algorithm>
#include <set>

namespace rs::gateway {

PlacementResult computeAssignment(const std::vector<PlacementModel> &models,
                                  const std::vector<PlacementWorker> &workers, double hysteresis,
                                  bool forbid_memory_oversubscription) {
  PlacementResult out;
  out.compute_load.assign(workers.size(), 0.0);
  out.memory_bytes.assign(workers.size(), 0);

  std::vector<const PlacementModel *> order;
  for (const PlacementModel &m : models)
    order.push_back(&m);
  std::stable_sort(order.begin(), order.end(),
                   [](const PlacementModel *a, const PlacementModel *b) {
                     if (a->utilization != b->utilization)
                       return a->utilization > b->utilization;
                     if (a->footprint_bytes != b->footprint_bytes)
                       return a->footprint_bytes > b->footprint_bytes;
                     return a->name < b->name;
                   });

  for (const PlacementModel *m : order) {
    if (m->candidates.empty())
      continue;
    const int64_t n = static_cast<int64_t>(m->candidates.size());
    const int64_t k = std::clamp<int64_t>(m->replicas < 0 ? n : m->replicas, 1, n);
    const double share = m->utilization / static_cast<double>(k);
    auto fits = [&](size_t w) {
      const int64_t budget = workers[w].budget_bytes;
      return budget <= 0 || out.memory_bytes[w] + m->footprint_bytes <= budget;
    };
    auto pressure = [&](size_t w) {
      double p = out.compute_load[w] + share;
      const int64_t budget = workers[w].budget_bytes;
      if (budget > 0)
        p = std::max(p, static_cast<double>(out.memory_bytes[w] + m->footprint_bytes) /
                            static_cast<double>(budget));
      return p;
    };
    std::vector<size_t> pool = m->candidates;
    if (forbid_memory_oversubscription) {
      std::vector<size_t> fitting;
      for (size_t w : pool)
        if (fits(w))
          fitting.push_back(w);
      if (fitting.empty())
        out.warnings.push_back("weight footprint exceeds the worker's on-demand budget: model '" +
                               m->name + "' fits on no worker; placed anyway");
      else
        pool = std::move(fitting);
    }
    const std::set<size_t> previous(m->previous.begin(), m->previous.end());
    std::vector<size_t> chosen;
    for (int64_t j = 0; j < k && !pool.empty(); ++j) {
      // Least pressure; previous members, then lower indices, win ties.
      size_t best_i = 0;
      for (size_t i = 1; i < pool.size(); ++i) {
        const double pi = pressure(pool[i]), pb = pressure(pool[best_i]);
        if (pi < pb || (pi == pb && previous.count(pool[i]) && !previous.count(pool[best_i])))
          best_i = i;
      }
      size_t pick = pool[best_i];
      if (k == 1 && m->previous.size() == 1) {
        const size_t prev = m->previous.front();
        auto it = std::find(pool.begin(), pool.end(), prev);
        if (it != pool.end() && prev != pick) {
          const double p_prev = pressure(prev), p_best = pressure(pick);
          const double gain = p_prev > 0 ? (p_prev - p_best) / p_prev : 0.0;
          if (gain <= hysteresis) {
            pick = prev;
            best_i = static_cast<size_t>(it - pool.begin());
            ++out.held_by_hysteresis;
          } else {
            out.max_improvement = std::max(out.max_improvement, gain);
          }
        }
      }
      chosen.push_back(pick);
      out.compute_load[pick] += share;
      out.memory_bytes[pick] += m->footprint_bytes;
      pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(best_i));
    }
    std::vector<size_t> sorted_new = chosen, sorted_old = m->previous;
    std::sort(sorted_new.begin(), sorted_new.end());
    std::sort(sorted_old.begin(), sorted_old.end());
    if (!sorted_old.empty() && sorted_new != sorted_old)
      ++out.models_moved;
    ++out.models_placed;
    out.placement[m->name] = std::move(chosen);
  }
  return out;
}

} // namespace rs::gateway
