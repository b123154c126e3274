//===- test/scheduler/run_profile_test.cc - A backend's stages reach DispatchStats -===//
//
// The scheduler installs a RunProfile around each RunFn call; what the backend writes into
// it (support/run_profile.h) arrives in the dispatch's DispatchStats, and a backend that
// writes nothing leaves it unfilled.
//
//===----------------------------------------------------------------------===//
#include "scheduler/scheduler.h"
#include "scheduler_test_util.h"
#include "support/run_profile.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <vector>

namespace rs::scheduler {
namespace {

using testing::batching;
using testing::submitAsync;

/// Collects every DispatchStats the scheduler reports.
struct Observed {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<DispatchStats> stats;
  DispatchObserver observer() {
    return [this](const DispatchStats &s) {
      std::lock_guard<std::mutex> lock(mu);
      stats.push_back(s);
      cv.notify_all();
    };
  }
  DispatchStats waitFirst() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return !stats.empty(); });
    return stats.front();
  }
};

Tensor oneRow() { return Tensor::zeros(DType::kI32, {1, 2}); }

/// Runs one request of a model compiled at size 1 on `run` and returns its dispatch's stats.
DispatchStats dispatchOne(RunFn run) {
  Observed observed;
  SchedulerOptions options;
  options.on_dispatch = observed.observer();
  Scheduler s(options, std::move(run));
  s.addModel("m", batching({1}));
  s.start();
  EXPECT_TRUE(submitAsync(s, "m", oneRow()).get().isOk());
  return observed.waitFirst();
}

TEST(RunProfile, BackendStagesReachDispatchStats) {
  const DispatchStats d = dispatchOne(
      [](const std::string &, int64_t, std::vector<Tensor> inputs) -> Result<std::vector<Tensor>> {
        RunProfile *profile = currentRunProfile();
        if (profile == nullptr)
          return internalError() << "no run profile installed around RunFn";
        profile->upload_seconds = 0.25;
        profile->execute_seconds = 0.5;
        profile->readback_seconds = 0.125;
        profile->filled = true;
        return std::vector<Tensor>{std::move(inputs[0])};
      });
  EXPECT_TRUE(d.run_profile.filled);
  EXPECT_EQ(d.run_profile.upload_seconds, 0.25);
  EXPECT_EQ(d.run_profile.execute_seconds, 0.5);
  EXPECT_EQ(d.run_profile.readback_seconds, 0.125);
  // Outside the run no profile is current.
  EXPECT_EQ(currentRunProfile(), nullptr);
}

TEST(RunProfile, BackendWithoutStagesLeavesItUnfilled) {
  const DispatchStats d = dispatchOne(
      [](const std::string &, int64_t, std::vector<Tensor> inputs) -> Result<std::vector<Tensor>> {
        return std::vector<Tensor>{std::move(inputs[0])};
      });
  EXPECT_FALSE(d.run_profile.filled);
  EXPECT_EQ(d.run_profile.upload_seconds, 0);
  EXPECT_EQ(d.run_profile.execute_seconds, 0);
  EXPECT_EQ(d.run_profile.readback_seconds, 0);
}

TEST(RunProfile, StageClockMarksOnlyTheCurrentProfile) {
  StageClock unobserved; // no profile current: marks change nothing
  unobserved.mark(&RunProfile::upload_seconds);
  RunProfile outer, inner;
  {
    RunProfileScope a(&outer);
    {
      RunProfileScope b(&inner);
      EXPECT_EQ(currentRunProfile(), &inner);
      StageClock clock;
      clock.mark(&RunProfile::upload_seconds);
      clock.mark(&RunProfile::readback_seconds);
    }
    EXPECT_EQ(currentRunProfile(), &outer);
  }
  EXPECT_EQ(currentRunProfile(), nullptr);
  EXPECT_TRUE(inner.filled);
  EXPECT_GE(inner.upload_seconds, 0);
  EXPECT_GE(inner.readback_seconds, 0);
  EXPECT_EQ(inner.execute_seconds, 0);
  EXPECT_FALSE(outer.filled);
}

} // namespace
} // namespace rs::scheduler
