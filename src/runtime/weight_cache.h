//===- runtime/weight_cache.h - Weight residency and the LRU weight cache ---===//
//
// Which models' weights are resident, under a byte budget (reference-system.md §3.3,
// WeightCache: max_bytes plus an LRU list, `acquire` before each dispatch).
//
// Residency floors (runtime::Residency):
// - kPinnedDevice: made resident when added and never evicted; its bytes are pinned and
//   come off the on-demand budget (on_demand = clamp(weight_pool - pinned, 0, pool)).
// - kPinnedSystem, kUnpinned: on demand. acquire() of a model that is not resident evicts
//   least-recently-used on-demand models until it fits, then makes it resident; a resident
//   model is moved to the most-recently-used end. A model larger than the whole budget is
//   made resident anyway (with a warning), as the reference does.
//
// What resident means on the CPU backend, where weights are zero-copy views of the bundle's
// mmaped weights.safetensors (the program reads them in place): the pages are touched in
// (madvise WILLNEED and one read per page); kPinnedDevice pages are also mlocked (best
// effort: a refused mlock is logged once and the pages stay touched only). Eviction
// unlocks, and for kUnpinned marks the pages cold (MADV_COLD) so the kernel reclaims them
// first: they are left to the page cache. An evicted kPinnedSystem model keeps its pages
// (the host floor). Execution never depends on residency: a non-resident mapping still
// reads correctly, only slower (page faults).
//
// Budget 0 (runtime.weight_cache_fraction 0): no on-demand cache; every model is made
// resident when added and never evicted. Counters: loads, evicts, load seconds, resident
// bytes (on demand, now and peak), pinned bytes.
//
// Thread safety: every method may be called concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"
#include "support/tensor.h"

#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace rs::runtime {

/// A model's weight residency floor (reference-system.md §3.3; the values are
/// reactant_control.Residency's). kPinnedDevice keeps the weights touched in and mlocked
/// for the model's lifetime; kPinnedSystem and kUnpinned are managed by the weight cache, an
/// evicted kUnpinned model's pages also being marked cold (left to the page cache).
enum class Residency : uint8_t { kUnpinned = 1, kPinnedSystem = 2, kPinnedDevice = 3 };

/// "unpinned", "system" or "device".
inline const char *residencyName(Residency r) {
  switch (r) {
  case Residency::kUnpinned: return "unpinned";
  case Residency::kPinnedSystem: return "system";
  case Residency::kPinnedDevice: return "device";
  }
  return "unknown";
}

struct WeightCacheOptions {
  /// On-demand budget in bytes (before pinned models are subtracted); 0 = no cache.
  int64_t weight_pool_bytes = 0;
};

/// The cache's counters (the worker_weight_* series).
struct WeightCacheStats {
  int64_t max_bytes = 0;           // on-demand budget now (pool minus pinned; 0 = no cache)
  int64_t pool_bytes = 0;          // the weight pool
  int64_t resident_bytes = 0;      // on-demand bytes resident now
  int64_t peak_resident_bytes = 0; // most on-demand bytes ever resident at once
  int64_t pinned_bytes = 0;        // kPinnedDevice bytes
  int64_t loads = 0;               // on-demand loads (acquire of a non-resident model)
  int64_t evicts = 0;              // on-demand evictions
  double load_seconds = 0;         // time spent making weights resident on demand
};

/// `runtime.weight_cache_fraction` of `arena_bytes`, capped by (1 - wiggle) of it: the
/// weight pool (reference-system.md §3.3 with max_scratch 0: the CPU backend has no
/// isolation probe). 0 when the fraction is 0.
int64_t weightPoolBytes(int64_t arena_bytes, double fraction, double wiggle_fraction);

/// Physical memory of the host in bytes (the CPU backend's arena); 0 if unknown.
int64_t hostMemoryBytes();

class WeightCache {
public:
  explicit WeightCache(WeightCacheOptions options = {});
  ~WeightCache();
  WeightCache(const WeightCache &) = delete;
  WeightCache &operator=(const WeightCache &) = delete;

  /// Registers `name`'s weights (replacing an earlier version, which is released) with
  /// floor `residency`. kPinnedDevice, or any model when there is no budget, is made
  /// resident now; an on-demand model becomes resident at its first acquire().
  void add(const std::string &name, std::vector<Tensor> weights, Residency residency);
  /// Forgets `name` (releasing its pages as an eviction would). Unknown: ignored.
  void remove(const std::string &name);
  /// Moves `from`'s entry (residency, LRU position) to `to`. NotFound if `from` is unknown.
  Status rename(const std::string &from, const std::string &to);
  /// Changes `name`'s floor: to kPinnedDevice makes it resident and pinned; from it, the
  /// model joins the on-demand LRU as most recently used. NotFound for an unknown model.
  Status setResidency(const std::string &name, Residency residency);
  /// Makes `name`'s weights resident before a dispatch (see the file comment). Unknown
  /// models are ignored (OK): the dispatch then fails on its own.
  Status acquire(const std::string &name);

  std::optional<Residency> residency(const std::string &name) const;
  /// Whether `name`'s weights are resident now (false for an unknown model).
  bool resident(const std::string &name) const;
  /// Bytes of `name`'s weights (0 for an unknown model).
  int64_t weightBytes(const std::string &name) const;
  WeightCacheStats stats() const;

private:
  struct Entry {
    std::vector<Tensor> weights;
    int64_t bytes = 0;
    Residency residency = Residency::kUnpinned;
    bool resident = false;
    bool locked = false;
    std::list<std::string>::iterator lru; // valid while resident and on demand
  };
  bool onDemand(const Entry &e) const {
    return options_.weight_pool_bytes > 0 && e.residency != Residency::kPinnedDevice;
  }
  int64_t budgetLocked() const;
  void makeResident(Entry &e, bool lock);
  void release(Entry &e);
  void evictLocked(const std::string &name);

  WeightCacheOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_; // GUARDED_BY(mu_)
  std::list<std::string> lru_;           // resident on-demand models, LRU at the front
  WeightCacheStats stats_;               // counters (max_bytes computed on read)
  bool mlock_warned_ = false;
};

} // namespace rs::runtime
