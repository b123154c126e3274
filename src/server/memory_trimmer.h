//===- server/memory_trimmer.h - Gives freed heap memory back to the system ==//
//
// glibc's malloc keeps the memory a program frees in its arenas for later allocations and
// returns to the system only the free space at the top of a heap past M_TRIM_THRESHOLD,
// which grows with the largest block freed (up to 64 MiB). So after large transient buffers
// (request bodies near endpoints.max_request_bytes, refused bombs, inflated gzip bodies) a
// worker's resident memory stays near its peak though nothing holds it.
//
// The trimmer checks every `interval` and calls malloc_trim(0), which returns every whole
// free page of every arena (madvise MADV_DONTNEED), when both hold: the arenas keep more than
// `threshold_bytes` free (mallinfo2's fordblks) and the process's resident memory has grown by
// more than half of that since the last trim (or since the trimmer started). In steady serving
// neither grows, so nothing is trimmed and the serving path is never delayed by a trim.
// Without glibc it does nothing.
//
// Thread safety: one thread of its own, stopped and joined by the destructor; check() may
// be called from any thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace rs::server {

struct MemoryTrimmerOptions {
  /// How often the arenas and the resident memory are read.
  std::chrono::milliseconds interval{1000};
  /// Free bytes the arenas must hold for a trim.
  int64_t threshold_bytes = int64_t{16} << 20;
};

class MemoryTrimmer {
public:
  explicit MemoryTrimmer(MemoryTrimmerOptions options = {});
  ~MemoryTrimmer();
  MemoryTrimmer(const MemoryTrimmer &) = delete;
  MemoryTrimmer &operator=(const MemoryTrimmer &) = delete;

  /// One check (the thread's, or a test's): trims when the rule above holds; whether it did.
  bool check();
  /// Trims done so far.
  int64_t trims() const;

private:
  void run();

  MemoryTrimmerOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;     // GUARDED_BY(mu_)
  int64_t trims_ = 0;         // GUARDED_BY(mu_)
  double resident_after_ = 0; // GUARDED_BY(mu_): resident bytes after the last trim
  std::thread thread_;
};

} // namespace rs::server
