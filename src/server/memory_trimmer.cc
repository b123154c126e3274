//===- server/memory_trimmer.cc - Gives freed heap memory back to the system =//
#include "server/memory_trimmer.h"

#include "server/process_stats.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace rs::server {

namespace {

/// Free bytes the malloc arenas hold; 0 when unknown.
int64_t arenaFreeBytes() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
  return static_cast<int64_t>(::mallinfo2().fordblks);
#else
  return 0;
#endif
}

} // namespace

MemoryTrimmer::MemoryTrimmer(MemoryTrimmerOptions options)
    : options_(options), resident_after_(readProcessStats().resident_bytes),
      thread_([this] { run(); }) {}

MemoryTrimmer::~MemoryTrimmer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool MemoryTrimmer::check() {
  const int64_t free_bytes = arenaFreeBytes();
  const double resident = readProcessStats().resident_bytes;
  std::lock_guard<std::mutex> lock(mu_);
  if (free_bytes <= options_.threshold_bytes ||
      resident <= resident_after_ + static_cast<double>(options_.threshold_bytes) / 2) {
    resident_after_ = std::min(resident_after_, resident);
    return false;
  }
#if defined(__GLIBC__)
  ::malloc_trim(0);
#endif
  resident_after_ = readProcessStats().resident_bytes;
  ++trims_;
  spdlog::debug("malloc arenas trimmed free_bytes={} resident_bytes_before={} after={}", free_bytes,
                resident, resident_after_);
  return true;
}

int64_t MemoryTrimmer::trims() const {
  std::lock_guard<std::mutex> lock(mu_);
  return trims_;
}

void MemoryTrimmer::run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, options_.interval, [this] { return stopping_; })) {
    lock.unlock();
    (void)check();
    lock.lock();
  }
}

} // namespace rs::server
