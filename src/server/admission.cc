//===- server/admission.cc - Concurrency cap and drain for inference --------===//
#include "server/admission.h"

namespace rs::server {

Admission::Admission(int64_t max_concurrent)
    : max_concurrent_(max_concurrent > 0 ? max_concurrent : 0) {}

Status Admission::acquire() {
  std::lock_guard lock(mu_);
  if (draining_)
    return unavailable() << "server is shutting down";
  if (max_concurrent_ > 0 && inflight_ >= max_concurrent_) {
    ++shed_;
    return resourceExhausted() << "server is at its limit of " << max_concurrent_
                               << " concurrent requests (endpoints.max_concurrent_requests)";
  }
  ++inflight_;
  return Status::ok();
}

void Admission::release() {
  bool now_idle = false;
  {
    std::lock_guard lock(mu_);
    if (inflight_ > 0)
      --inflight_;
    now_idle = inflight_ == 0;
  }
  // Notified outside the lock so the waiter does not wake only to block on mu_.
  if (now_idle)
    idle_.notify_all();
}

void Admission::beginDrain() {
  std::lock_guard lock(mu_);
  draining_ = true;
}

bool Admission::draining() const {
  std::lock_guard lock(mu_);
  return draining_;
}

bool Admission::waitIdle(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  return idle_.wait_until(lock, deadline, [&] { return inflight_ == 0; });
}

int64_t Admission::inflight() const {
  std::lock_guard lock(mu_);
  return inflight_;
}

uint64_t Admission::shed() const {
  std::lock_guard lock(mu_);
  return shed_;
}

} // namespace rs::server
