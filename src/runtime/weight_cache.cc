//===- runtime/weight_cache.cc - Weight residency and the LRU weight cache --===//
#include "runtime/weight_cache.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace rs::runtime {
namespace {

size_t pageSize() {
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

/// The page-aligned range covering `t`'s bytes: (start, length); length 0 when empty.
std::pair<void *, size_t> pageRange(const Tensor &t) {
  if (!t.data() || t.byteSize() <= 0)
    return {nullptr, 0};
  const size_t page = pageSize();
  const auto begin = reinterpret_cast<uintptr_t>(t.data());
  const uintptr_t start = begin & ~(page - 1);
  const uintptr_t end = (begin + static_cast<uintptr_t>(t.byteSize()) + page - 1) & ~(page - 1);
  return {reinterpret_cast<void *>(start), static_cast<size_t>(end - start)};
}

/// Reads one byte per page of `t` (after a WILLNEED hint), so every page is in memory.
void touch(const Tensor &t) {
  auto [start, length] = pageRange(t);
  if (length == 0)
    return;
  (void)::madvise(start, length, MADV_WILLNEED);
  const size_t page = pageSize();
  const volatile uint8_t *p = t.data();
  uint8_t sum = 0;
  for (int64_t off = 0; off < t.byteSize(); off += static_cast<int64_t>(page))
    sum = static_cast<uint8_t>(sum + p[off]);
  sum = static_cast<uint8_t>(sum + p[t.byteSize() - 1]);
  (void)sum;
}

} // namespace

int64_t weightPoolBytes(int64_t arena_bytes, double fraction, double wiggle_fraction) {
  if (fraction <= 0 || arena_bytes <= 0)
    return 0;
  const double pool = std::min(fraction, 1.0 - wiggle_fraction) * static_cast<double>(arena_bytes);
  return std::max<int64_t>(static_cast<int64_t>(pool), 0);
}

int64_t hostMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0)
    return 0;
  return static_cast<int64_t>(pages) * static_cast<int64_t>(page);
}

WeightCache::WeightCache(WeightCacheOptions options) : options_(options) {
  stats_.pool_bytes = options_.weight_pool_bytes;
}

WeightCache::~WeightCache() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto &[name, e] : entries_)
    release(e);
}

int64_t WeightCache::budgetLocked() const {
  if (options_.weight_pool_bytes <= 0)
    return 0;
  return std::clamp<int64_t>(options_.weight_pool_bytes - stats_.pinned_bytes, 0,
                             options_.weight_pool_bytes);
}

void WeightCache::makeResident(Entry &e, bool lock) {
  for (const Tensor &t : e.weights)
    touch(t);
  if (lock && !e.locked) {
    bool ok = true;
    for (const Tensor &t : e.weights) {
      auto [start, length] = pageRange(t);
      if (length != 0 && ::mlock(start, length) != 0) {
        ok = false;
        if (!mlock_warned_) {
          mlock_warned_ = true;
          spdlog::warn("weight cache: mlock of pinned weights refused ({}); they stay touched "
                       "in but may be paged out (raise RLIMIT_MEMLOCK to lock them)",
                       std::strerror(errno));
        }
        break;
      }
    }
    e.locked = ok; // a partial lock is undone by release()'s munlock, which is harmless
  }
  e.resident = true;
}

void WeightCache::release(Entry &e) {
  for (const Tensor &t : e.weights) {
    auto [start, length] = pageRange(t);
    if (length == 0)
      continue;
    if (e.locked)
      (void)::munlock(start, length);
#ifdef MADV_COLD
    if (e.residency == Residency::kUnpinned)
      (void)::madvise(start, length, MADV_COLD);
#endif
  }
  e.locked = false;
  e.resident = false;
}

void WeightCache::evictLocked(const std::string &name) {
  auto it = entries_.find(name);
  if (it == entries_.end() || !it->second.resident)
    return;
  Entry &e = it->second;
  if (onDemand(e)) {
    lru_.erase(e.lru);
    stats_.resident_bytes -= e.bytes;
    ++stats_.evicts;
  }
  release(e);
  spdlog::debug("residency: model moved name={} to=evicted bytes={}", name, e.bytes);
}

void WeightCache::add(const std::string &name, std::vector<Tensor> weights, Residency residency) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto old = entries_.find(name); old != entries_.end()) {
    if (old->second.resident && onDemand(old->second)) {
      lru_.erase(old->second.lru);
      stats_.resident_bytes -= old->second.bytes;
    }
    if (old->second.residency == Residency::kPinnedDevice)
      stats_.pinned_bytes -= old->second.bytes;
    release(old->second);
    entries_.erase(old);
  }
  Entry &e = entries_[name];
  e.weights = std::move(weights);
  for (const Tensor &t : e.weights)
    e.bytes += t.byteSize();
  e.residency = residency;
  if (residency == Residency::kPinnedDevice)
    stats_.pinned_bytes += e.bytes;
  if (!onDemand(e))
    makeResident(e, residency == Residency::kPinnedDevice);
}

void WeightCache::remove(const std::string &name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(name);
  if (it == entries_.end())
    return;
  Entry &e = it->second;
  if (e.resident && onDemand(e)) {
    lru_.erase(e.lru);
    stats_.resident_bytes -= e.bytes;
  }
  if (e.residency == Residency::kPinnedDevice)
    stats_.pinned_bytes -= e.bytes;
  release(e);
  entries_.erase(it);
}

Status WeightCache::rename(const std::string &from, const std::string &to) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(from);
  if (it == entries_.end())
    return notFound() << "weight cache: rename of unknown model '" << from << "'";
  if (entries_.count(to) != 0)
    return StatusBuilder(StatusCode::kAlreadyExists)
           << "weight cache: rename '" << from << "' -> '" << to << "': '" << to << "' is known";
  auto node = entries_.extract(it);
  node.key() = to;
  auto inserted = entries_.insert(std::move(node));
  Entry &e = inserted.position->second;
  if (e.resident && onDemand(e))
    *e.lru = to;
  return Status::ok();
}

Status WeightCache::setResidency(const std::string &name, Residency residency) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(name);
  if (it == entries_.end())
    return notFound() << "weight cache: unknown model '" << name << "'";
  Entry &e = it->second;
  if (e.residency == residency)
    return Status::ok();
  const bool was_on_demand = onDemand(e);
  if (e.resident && was_on_demand) {
    lru_.erase(e.lru);
    stats_.resident_bytes -= e.bytes;
  }
  if (e.residency == Residency::kPinnedDevice)
    stats_.pinned_bytes -= e.bytes;
  release(e);
  e.residency = residency;
  if (residency == Residency::kPinnedDevice) {
    stats_.pinned_bytes += e.bytes;
    makeResident(e, true);
  } else if (!onDemand(e)) {
    makeResident(e, false);
  }
  // The budget shrank with a new pin: evict least-recently-used models until they fit.
  while (!lru_.empty() && stats_.resident_bytes > budgetLocked())
    evictLocked(lru_.front());
  spdlog::debug("residency: model moved name={} to={}", name, residencyName(residency));
  return Status::ok();
}

Status WeightCache::acquire(const std::string &name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(name);
  if (it == entries_.end())
    return Status::ok();
  Entry &e = it->second;
  if (!onDemand(e))
    return Status::ok();
  if (e.resident) {
    lru_.splice(lru_.end(), lru_, e.lru); // most recently used
    return Status::ok();
  }
  const int64_t budget = budgetLocked();
  while (!lru_.empty() && stats_.resident_bytes + e.bytes > budget)
    evictLocked(lru_.front());
  if (stats_.resident_bytes + e.bytes > budget)
    spdlog::warn("weight cache: model {} needs {} bytes, more than the on-demand budget of {} "
                 "bytes; loaded anyway",
                 name, e.bytes, budget);
  const auto start = std::chrono::steady_clock::now();
  makeResident(e, false);
  stats_.load_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ++stats_.loads;
  e.lru = lru_.insert(lru_.end(), name);
  stats_.resident_bytes += e.bytes;
  stats_.peak_resident_bytes = std::max(stats_.peak_resident_bytes, stats_.resident_bytes);
  return Status::ok();
}

std::optional<Residency> WeightCache::residency(const std::string &name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(name);
  if (it == entries_.end())
    return std::nullopt;
  return it->second.residency;
}

bool WeightCache::resident(const std::string &name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(name);
  return it != entries_.end() && it->second.resident;
}

int64_t WeightCache::weightBytes(const std::string &name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(name);
  return it == entries_.end() ? 0 : it->second.bytes;
}

WeightCacheStats WeightCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  WeightCacheStats s = stats_;
  s.max_bytes = budgetLocked();
  return s;
}

} // namespace rs::runtime
