//===- server/model_statistics.h - Triton ModelStatistics per model ---------===//
//
// Cumulative per-model statistics for Triton's ModelStatistics RPC and
// GET /v2/models/{m}/stats (protocol::ModelStatistics says what each field counts).
// Fed by every dispatch (scheduler::DispatchStats: queue waits and the input, infer and
// output phases) and every answer (success or failure with its arrival-to-answer time).
// A reload keeps a model's statistics, a rename moves them, an unload drops them.
//
// Thread safety: every method may be called concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/service.h"
#include "scheduler/scheduler.h"

#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace rs::server {

class ModelStatisticsTable {
public:
  /// One dispatch of stats.model: execution_count (when ok), inference_count (its rows,
  /// when ok), per request queue and the three compute phases, and the batch size's
  /// phase durations.
  void observeDispatch(const scheduler::DispatchStats &stats);
  /// One answer for `model`: success or fail, `seconds` from arrival; last_inference.
  void requestFinished(const std::string &model, bool ok, double seconds);
  /// Moves `from`'s statistics to `to` (replacing any of `to`).
  void rename(const std::string &from, const std::string &to);
  /// Drops `model`'s statistics.
  void erase(const std::string &model);
  /// `model`'s statistics (zeros when nothing was recorded yet), named `model`.
  protocol::ModelStatistics get(const std::string &model) const;

private:
  struct Entry {
    protocol::ModelStatistics stats;
    std::map<int64_t, protocol::BatchStatistics> batches;
  };
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_; // GUARDED_BY(mu_)
};

} // namespace rs::server
