//===- support/cancellation.h - A request's "the client has gone" flag -------===//
//
// One flag per request, shared between the front-end that raises it and the layers that
// read it: the gRPC front-end raises it when the client cancels the call (or its deadline
// ends the call), the HTTP front-end when the request's connection is closed or reset
// while the request waits for its answer. The scheduler drops a queued request whose flag
// is raised instead of running it (scheduler/scheduler.h), and the service answers such a
// request Cancelled and counts it so (server/worker_service.h).
//
// Thread safety: cancel() and cancelled() may be called from any thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <memory>

namespace rs {

/// Raised when the client of a request stops waiting for its answer; never lowered.
class Cancellation {
public:
  /// Raises the flag (idempotent).
  void cancel() { cancelled_.store(true, std::memory_order_release); }
  /// Whether cancel() has been called.
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }

private:
  std::atomic<bool> cancelled_{false};
};

/// What a request carries: null for a request no one can cancel.
using CancellationPtr = std::shared_ptr<const Cancellation>;

/// Whether `c` is set and raised.
inline bool isCancelled(const CancellationPtr &c) { return c && c->cancelled(); }

} // namespace rs
