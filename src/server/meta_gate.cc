//===- server/meta_gate.cc - At most N runs of one meta model at once ------===//
#include "server/meta_gate.h"

#include <algorithm>
#include <vector>

namespace rs::server {

MetaGate::MetaGate(int64_t capacity)
    : capacity_(std::max<int64_t>(1, capacity)), timer_([this] { timerLoop(); }) {}

MetaGate::~MetaGate() {
  std::deque<Waiter> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    left.swap(waiting_);
  }
  cv_.notify_all();
  timer_.join();
  for (Waiter &w : left)
    w.start(unavailable() << "server is shutting down");
}

Status MetaGate::expired() const {
  return deadlineExceeded() << "deadline exceeded while it waited for one of the meta model's "
                            << capacity_ << " runs at once (hooks.meta_concurrency)";
}

void MetaGate::acquire(std::optional<protocol::Clock::time_point> deadline, Start start) {
  std::unique_lock<std::mutex> lock(mu_);
  if (running_ < capacity_ && waiting_.empty()) {
    ++running_;
    lock.unlock();
    start(Status::ok());
    return;
  }
  if (deadline && *deadline <= protocol::Clock::now()) {
    lock.unlock();
    start(expired());
    return;
  }
  waiting_.push_back({deadline, std::move(start)});
  lock.unlock();
  if (deadline) // the timer's next wake-up may come sooner now
    cv_.notify_all();
}

void MetaGate::release() {
  std::vector<Waiter> late;
  std::optional<Waiter> next;
  {
    std::lock_guard<std::mutex> lock(mu_);
    --running_;
    const protocol::Clock::time_point now = protocol::Clock::now();
    while (!waiting_.empty() && !next) {
      Waiter w = std::move(waiting_.front());
      waiting_.pop_front();
      if (w.deadline && *w.deadline <= now) {
        late.push_back(std::move(w));
        continue;
      }
      ++running_;
      next = std::move(w);
    }
  }
  // Outside the lock: a callback may acquire or release again.
  for (Waiter &w : late)
    w.start(expired());
  if (next)
    next->start(Status::ok());
}

int64_t MetaGate::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_;
}

int64_t MetaGate::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(waiting_.size());
}

void MetaGate::timerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    const protocol::Clock::time_point now = protocol::Clock::now();
    std::vector<Waiter> late;
    std::optional<protocol::Clock::time_point> soonest;
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      if (it->deadline && *it->deadline <= now) {
        late.push_back(std::move(*it));
        it = waiting_.erase(it);
        continue;
      }
      if (it->deadline && (!soonest || *it->deadline < *soonest))
        soonest = it->deadline;
      ++it;
    }
    if (!late.empty()) {
      lock.unlock();
      for (Waiter &w : late)
        w.start(expired());
      lock.lock();
      continue;
    }
    if (soonest)
      cv_.wait_until(lock, *soonest);
    else
      cv_.wait(lock);
  }
}

} // namespace rs::server
