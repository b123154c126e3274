//===- server/admission.h - Concurrency cap and drain for inference ---------===//
//
// Admission control of one worker (reference-system.md §6 "Admission",
// `endpoints.max_concurrent_requests`): at most `max_concurrent` inference requests are in
// flight (accepted and not yet answered) across both protocols; one more is shed at once
// with ResourceExhausted (gRPC RESOURCE_EXHAUSTED, HTTP 429) instead of queueing behind
// the others. 0 means uncapped.
//
// Graceful shutdown: beginDrain() makes every later acquire() fail with
// Unavailable (gRPC UNAVAILABLE, HTTP 503) while requests already admitted run to the end;
// waitIdle() returns once none is left or the deadline passes.
//
// Counters feed worker_inflight_requests, worker_requests_shed_total and
// worker_max_concurrent_requests.
// Thread safety: every method may be called concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace rs::server {

class Admission {
public:
  /// `max_concurrent` requests at once; 0 = uncapped.
  explicit Admission(int64_t max_concurrent);

  /// Admits one request: OK (call release() exactly once when it is answered),
  /// ResourceExhausted when `max_concurrent` are in flight (counted as shed), Unavailable
  /// after beginDrain().
  Status acquire();
  /// Ends an admitted request.
  void release();

  /// From now on acquire() answers Unavailable. Idempotent.
  void beginDrain();
  bool draining() const;
  /// Blocks until no admitted request is in flight (true) or `deadline` passes (false).
  bool waitIdle(std::chrono::steady_clock::time_point deadline);

  int64_t inflight() const;
  uint64_t shed() const;
  int64_t maxConcurrent() const { return max_concurrent_; }

private:
  const int64_t max_concurrent_;
  mutable std::mutex mu_;
  std::condition_variable idle_;
  int64_t inflight_ = 0;  // GUARDED_BY(mu_)
  uint64_t shed_ = 0;     // GUARDED_BY(mu_)
  bool draining_ = false; // GUARDED_BY(mu_)
};

} // namespace rs::server
