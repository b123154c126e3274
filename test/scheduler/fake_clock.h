//===- test/scheduler/fake_clock.h - A SchedulerClock that tests advance ---===//
//
// TensorFlow Serving's FakeClockEnv for the scheduler: time starts at the clock's epoch
// and moves only in advance(); a waitUntil() returns once the clock reaches its time
// (advance() wakes it) or its condition variable is notified. awaitWaiter() lets a test
// see that the dispatch loop is holding, and until when.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "scheduler/clock.h"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

namespace rs::scheduler::testing {

class FakeClock final : public SchedulerClock {
public:
  Clock::time_point now() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }

  void waitUntil(std::condition_variable &cv, std::unique_lock<std::mutex> &lock,
                 Clock::time_point until) override {
    Waiter self{&cv, lock.mutex(), until};
    {
      std::lock_guard<std::mutex> guard(mu_);
      if (now_ >= until)
        return;
      waiters_.push_back(&self);
      changed_.notify_all();
    }
    // advance() takes `lock`'s mutex before notifying, so it cannot notify between the
    // registration above and this wait.
    cv.wait(lock);
    std::lock_guard<std::mutex> guard(mu_);
    waiters_.erase(std::find(waiters_.begin(), waiters_.end(), &self));
  }

  /// Moves the clock forward by `d` and wakes every waiter whose time has come.
  void advance(Clock::duration d) {
    std::vector<Waiter> due;
    {
      std::lock_guard<std::mutex> lock(mu_);
      now_ += d;
      for (const Waiter *w : waiters_)
        if (w->until <= now_)
          due.push_back(*w);
    }
    for (const Waiter &w : due) {
      std::lock_guard<std::mutex> lock(*w.mu);
      w.cv->notify_all();
    }
  }

  /// Moves the clock to `t` (not backwards).
  void advanceTo(Clock::time_point t) { advance(std::max(t - now(), Clock::duration::zero())); }

  /// The time `d` after the clock's epoch.
  static Clock::time_point at(Clock::duration d) { return Clock::time_point(d); }

  /// Blocks until a thread waits in waitUntil() for a time not yet reached; returns the
  /// earliest such time.
  Clock::time_point awaitWaiter() const {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return !waiters_.empty(); });
    Clock::time_point earliest = Clock::time_point::max();
    for (const Waiter *w : waiters_)
      earliest = std::min(earliest, w->until);
    return earliest;
  }

private:
  struct Waiter {
    std::condition_variable *cv;
    std::mutex *mu;
    Clock::time_point until;
  };

  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  Clock::time_point now_{};
  std::vector<const Waiter *> waiters_; // GUARDED_BY(mu_)
};

} // namespace rs::scheduler::testing
