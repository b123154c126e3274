//===- test/scheduler/in_flight_test.cc - Several batches in flight --------===//
//
// SchedulerOptions::max_batches_in_flight: how many batches run at once, that every
// request still gets its own rows, that a warmup runs alone and that stop() returns only
// after the running batches have finished. Every wait is on a condition.
//
//===----------------------------------------------------------------------===//
#include "scheduler/scheduler.h"
#include "scheduler_test_util.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

namespace rs::scheduler {
namespace {

using testing::batching;
using testing::submitAsync;

/// A device that doubles input 0 (i32), holds every run until opened, and records how many
/// runs were inside it at once and whether a run of `alone_model` (only warmups run it)
/// ever shared it with another run.
struct GatedDevice {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  int active = 0, peak = 0, entered = 0;
  std::string alone_model;
  bool alone_shared = false;

  RunFn runFn() {
    return [this](const std::string &model, int64_t,
                  std::vector<Tensor> inputs) -> Result<std::vector<Tensor>> {
      {
        std::unique_lock<std::mutex> lock(mu);
        if (active > 0 && (model == alone_model || running_alone_model))
          alone_shared = true;
        running_alone_model = running_alone_model || model == alone_model;
        ++active;
        ++entered;
        peak = std::max(peak, active);
        cv.notify_all();
        cv.wait(lock, [&] { return open; });
      }
      Tensor out = Tensor::copyOf(DType::kI32, inputs[0].shape(), inputs[0].bytes());
      for (int64_t i = 0; i < out.numElements(); ++i)
        out.mutableDataAs<int32_t>()[i] *= 2;
      std::lock_guard<std::mutex> lock(mu);
      --active;
      if (model == alone_model)
        running_alone_model = false;
      return std::vector<Tensor>{out};
    };
  }
  void waitEntered(int n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return entered >= n; });
  }
  void openGate() {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    cv.notify_all();
  }

private:
  bool running_alone_model = false;
};

Tensor row(int32_t base, int64_t rows = 1) {
  Tensor t = Tensor::zeros(DType::kI32, {rows, 2});
  for (int64_t i = 0; i < rows * 2; ++i)
    t.mutableDataAs<int32_t>()[i] = base + static_cast<int32_t>(i);
  return t;
}

std::vector<int32_t> doubled(int32_t base, int64_t rows = 1) {
  std::vector<int32_t> v;
  for (int64_t i = 0; i < rows * 2; ++i)
    v.push_back(2 * (base + static_cast<int32_t>(i)));
  return v;
}

std::vector<int32_t> values(const Tensor &t) {
  return std::vector<int32_t>(t.dataAs<int32_t>(), t.dataAs<int32_t>() + t.numElements());
}

SchedulerOptions inFlight(int n, bool coalescing) {
  SchedulerOptions o;
  o.coalescing = coalescing;
  o.max_batches_in_flight = n;
  o.warmup = false;
  return o;
}

TEST(InFlight, TwoBatchesRunAtOnceAndTheThirdWaits) {
  GatedDevice dev;
  Scheduler s(inFlight(2, false), dev.runFn());
  s.addModel("m", batching({1}));
  s.start();
  auto f0 = submitAsync(s, "m", row(0));
  auto f1 = submitAsync(s, "m", row(10));
  dev.waitEntered(2); // both run before either finishes
  auto f2 = submitAsync(s, "m", row(20));
  EXPECT_EQ(s.queueDepth("m"), 1); // no third batch while two are in flight
  dev.openGate();
  auto r0 = f0.get(), r1 = f1.get(), r2 = f2.get();
  ASSERT_TRUE(r0.isOk() && r1.isOk() && r2.isOk());
  EXPECT_EQ(values((*r0)[0]), doubled(0));
  EXPECT_EQ(values((*r1)[0]), doubled(10));
  EXPECT_EQ(values((*r2)[0]), doubled(20));
  s.stop();
  EXPECT_EQ(dev.peak, 2);
  EXPECT_EQ(dev.entered, 3);
}

TEST(InFlight, OneInFlightRunsOneBatchAtATime) {
  GatedDevice dev;
  Scheduler s(inFlight(1, false), dev.runFn());
  s.addModel("m", batching({1}));
  s.start();
  std::vector<std::future<Result<std::vector<Tensor>>>> futures;
  for (int i = 0; i < 4; ++i)
    futures.push_back(submitAsync(s, "m", row(10 * i)));
  dev.waitEntered(1);
  dev.openGate();
  for (int i = 0; i < 4; ++i) {
    auto r = futures[static_cast<size_t>(i)].get();
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    EXPECT_EQ(values((*r)[0]), doubled(10 * i));
  }
  s.stop();
  EXPECT_EQ(dev.peak, 1);
}

TEST(InFlight, CoalescedBatchesInFlightAnswerEachRequestItsOwnRows) {
  GatedDevice dev;
  Scheduler s(inFlight(3, true), dev.runFn());
  s.addModel("m", batching({1, 2, 4}));
  s.start();
  std::vector<std::future<Result<std::vector<Tensor>>>> futures;
  futures.push_back(submitAsync(s, "m", row(0))); // the first batch: one row, held
  dev.waitEntered(1);
  for (int i = 1; i < 12; ++i)
    futures.push_back(submitAsync(s, "m", row(100 * i, 1 + i % 2)));
  dev.waitEntered(3); // three batches in flight, the rest queued
  dev.openGate();
  for (int i = 0; i < 12; ++i) {
    auto r = futures[static_cast<size_t>(i)].get();
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    EXPECT_EQ(values((*r)[0]), doubled(100 * i, i == 0 ? 1 : 1 + i % 2)) << "request " << i;
  }
  s.stop();
  EXPECT_EQ(dev.peak, 3);
}

TEST(InFlight, SplitRequestPiecesInFlightAreConcatenatedInOrder) {
  GatedDevice dev;
  Scheduler s(inFlight(2, true), dev.runFn());
  s.addModel("m", batching({1, 2}));
  s.start();
  auto f = submitAsync(s, "m", row(0, 5)); // pieces of 2, 2 and 1 rows
  dev.waitEntered(2);
  dev.openGate();
  auto r = f.get();
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(values((*r)[0]), doubled(0, 5));
  s.stop();
  EXPECT_EQ(dev.peak, 2);
}

TEST(InFlight, AWarmupRunsAlone) {
  GatedDevice dev;
  dev.alone_model = "w";
  SchedulerOptions o = inFlight(2, false);
  o.warmup = true;
  o.discipline = Discipline::kFair;
  Scheduler s(o, dev.runFn());
  s.addModel("m", batching({1}));
  s.start();
  auto f0 = submitAsync(s, "m", row(0));
  dev.waitEntered(1); // a batch of m runs
  ModelBatching w = batching({1, 2});
  w.warmup_inputs = [](int64_t size) { return std::vector<Tensor>{row(0, size)}; };
  s.addModel("w", w);                     // its warmup waits for m's batch to finish
  auto f1 = submitAsync(s, "m", row(10)); // no second batch of m while the warmup waits
  dev.openGate();
  ASSERT_TRUE(f0.get().isOk());
  auto r1 = f1.get();
  ASSERT_TRUE(r1.isOk());
  EXPECT_EQ(values((*r1)[0]), doubled(10));
  s.stop();
  EXPECT_FALSE(dev.alone_shared);
}

TEST(InFlight, StopReturnsAfterTheRunningBatchesFinish) {
  GatedDevice dev;
  Scheduler s(inFlight(2, false), dev.runFn());
  s.addModel("m", batching({1}));
  s.start();
  auto f0 = submitAsync(s, "m", row(0));
  auto f1 = submitAsync(s, "m", row(10));
  dev.waitEntered(2);
  std::thread stopper([&] { s.stop(); });
  dev.openGate();
  stopper.join();
  // stop() returned: both batches have answered.
  ASSERT_EQ(f0.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  ASSERT_EQ(f1.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_TRUE(f0.get().isOk());
  EXPECT_TRUE(f1.get().isOk());
}

} // namespace
} // namespace rs::scheduler
