//===- server/meta_gate.h - At most N runs of one meta model at once -------===//
//
// The reference's MetaGate (reference-system.md §4.5): a meta model's `run` holds its hook
// process and, through its sub-calls, slots of other models' queues for as long as it runs,
// so at most `hooks.meta_concurrency` runs of one meta model go at once. A request past
// them waits in arrival order for a slot, at most until its deadline: then it is shed with
// DeadlineExceeded, as a request whose deadline passes in a queue is.
//
// The gate never blocks the caller: acquire() hands the slot to a callback, at once when
// one is free, else on the thread whose release() frees it; a waiter whose deadline passes
// first is answered on the gate's own timer thread, which sleeps until the earliest waiting
// deadline (no polling).
//
// Thread safety: every method may be called from any thread. The destructor answers the
// waiters Unavailable; it must not run in a callback of the gate (the worker owns its gates
// and destroys them after its dispatch has stopped).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/inference.h"
#include "support/status.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace rs::server {

class MetaGate {
public:
  /// Receives OK with a slot (the caller then owes one release()), or the reason it got
  /// none: DeadlineExceeded (the deadline passed while it waited) or Unavailable (the gate
  /// was destroyed).
  using Start = std::function<void(Status)>;

  /// A gate of `capacity` slots (>= 1; smaller values count as 1).
  explicit MetaGate(int64_t capacity);
  ~MetaGate();
  MetaGate(const MetaGate &) = delete;
  MetaGate &operator=(const MetaGate &) = delete;

  /// Calls `start` once: with OK when a slot is free (on this thread if one is free now
  /// and nobody waits, else on the thread of the release() that frees it, in arrival
  /// order), or with DeadlineExceeded when `deadline` (none: wait without limit) passes
  /// first (on this thread if it has passed already, else on the timer thread).
  void acquire(std::optional<protocol::Clock::time_point> deadline, Start start);
  /// Gives back the slot of an acquire() that got OK; the first waiter whose deadline has
  /// not passed takes it.
  void release();

  int64_t capacity() const { return capacity_; }
  /// Slots held now.
  int64_t running() const;
  /// acquire() calls waiting for a slot now.
  int64_t waiting() const;

private:
  struct Waiter {
    std::optional<protocol::Clock::time_point> deadline;
    Start start;
  };
  /// The error of a waiter whose deadline passed.
  Status expired() const;
  /// Answers the waiters whose deadline has passed; sleeps until the next one's.
  void timerLoop();

  const int64_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Waiter> waiting_; // GUARDED_BY(mu_)
  int64_t running_ = 0;        // GUARDED_BY(mu_)
  bool stopping_ = false;      // GUARDED_BY(mu_)
  std::thread timer_;
};

} // namespace rs::server
