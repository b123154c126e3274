//===- scheduler/clock.h - The scheduler's time source and timed waits ----===//
//
// Every read of time and every timed wait of the scheduler goes through one SchedulerClock
// (SchedulerOptions::clock), so tests replace both with a fake clock they advance by hand
// (TensorFlow Serving's FakeClockEnv): a coalescing hold then ends exactly when the test
// moves the clock past it, with no real time spent and no margins in the assertions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace rs::scheduler {

using Clock = std::chrono::steady_clock;

/// A time source with a timed wait on a condition variable.
class SchedulerClock {
public:
  virtual ~SchedulerClock() = default;

  /// The current time.
  virtual Clock::time_point now() const = 0;

  /// Waits on `cv` (with `lock` held, as std::condition_variable::wait does) until `cv` is
  /// notified or the clock reaches `until`, whichever comes first; may return spuriously,
  /// so the caller rechecks its condition. Returns at once when `until` has passed.
  virtual void waitUntil(std::condition_variable &cv, std::unique_lock<std::mutex> &lock,
                         Clock::time_point until) = 0;
};

/// The real clock: std::chrono::steady_clock and condition_variable::wait_until.
class SteadyClock final : public SchedulerClock {
public:
  Clock::time_point now() const override { return Clock::now(); }
  void waitUntil(std::condition_variable &cv, std::unique_lock<std::mutex> &lock,
                 Clock::time_point until) override {
    cv.wait_until(lock, until);
  }
};

} // namespace rs::scheduler
