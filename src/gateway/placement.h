//===- gateway/placement.h - lpt_packing placement (greedy bin packing) -----===//
//
// compute_assignment of the reference's lpt_packing mode (reference-system.md section
// 8.3): models in descending utilization u = rate x cost (memory footprint, then name,
// break ties), each given k = clamp(replicas, 1, candidates) distinct workers that
// minimise pressure = max(compute load, memory load / budget) (a budget of 0 is
// unconstrained). A replica is charged u/k of compute and the full footprint of memory.
// With k = 1, hysteresis keeps the previous worker unless moving lowers its pressure by
// more than `hysteresis` (relative); with k > 1 previous members win ties. With
// forbid_memory_oversubscription, only workers where the model still fits are candidates,
// unless it fits nowhere. A model's candidates are the ready workers that serve it.
//
// Units: utilization in compute-seconds per wall-second, footprints and budgets in bytes.
// Thread safety: a pure function.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rs::gateway {

struct PlacementModel {
  std::string name;
  double utilization = 0;         // u = rate x cost
  int64_t footprint_bytes = 0;    // weight bytes on one replica
  int64_t replicas = 1;           // requested k: > 0, or -1 for every candidate
  std::vector<size_t> candidates; // worker indices that may hold it, ascending
  std::vector<size_t> previous;   // its workers before this repack
};

struct PlacementWorker {
  int64_t budget_bytes = 0; // 0 = unconstrained
};

struct PlacementResult {
  /// Model -> its workers, in the order chosen.
  std::map<std::string, std::vector<size_t>> placement;
  int64_t models_placed = 0;
  int64_t models_moved = 0;          // placed on a different worker set than before
  int64_t held_by_hysteresis = 0;    // k = 1 models kept on their previous worker
  double max_improvement = 0;        // largest relative pressure gain of a move
  std::vector<double> compute_load;  // per worker, compute-seconds per second
  std::vector<int64_t> memory_bytes; // per worker, assigned footprints
  std::vector<std::string> warnings;
};

/// Places `models` on `workers` (rules above). Models without candidates are skipped.
PlacementResult computeAssignment(const std::vector<PlacementModel> &models,
                                  const std::vector<PlacementWorker> &workers, double hysteresis,
                                  bool forbid_memory_oversubscription);

} // namespace rs::gateway
