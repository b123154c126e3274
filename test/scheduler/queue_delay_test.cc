//===- test/scheduler/queue_delay_test.cc - The coalescing wait -------------===//
//
// scheduler.max_queue_delay_microseconds: a partial batch waits for more rows until it
// is full or its oldest request has waited the delay, never past a deadline, and never
// holds another model's dispatch. Everything runs on a fake clock (fake_clock.h) that the
// tests advance, so each batch's dispatch time is checked exactly and no test waits for
// real time to pass.
//
//===----------------------------------------------------------------------===//
#include "fake_clock.h"
#include "scheduler/scheduler.h"
#include "scheduler_test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <thread>

namespace rs::scheduler {
namespace {

using testing::batching;
using testing::FakeClock;
using testing::submitAsync;

using namespace std::chrono_literals;

/// An i32 tensor of `rows` rows of width 1 whose values are base + i.
Tensor rowsTensor(int64_t rows, int32_t base) {
  Tensor t = Tensor::zeros(DType::kI32, {rows, 1});
  for (int64_t i = 0; i < rows; ++i)
    t.mutableDataAs<int32_t>()[i] = base + static_cast<int32_t>(i);
  return t;
}

/// One dispatch the fake device saw.
struct Dispatch {
  std::string model;
  int64_t batch_size = 0;
  std::vector<int32_t> values; // the batch's input rows, padding included
  Clock::time_point at;        // on the fake clock
};

/// A fake device that records every dispatch and returns its input unchanged, and the fake
/// clock the scheduler runs on.
struct Recorder {
  std::shared_ptr<FakeClock> clock = std::make_shared<FakeClock>();
  std::mutex mu;
  std::vector<Dispatch> dispatches;

  RunFn runFn() {
    return [this](const std::string &model, int64_t batch_size,
                  std::vector<Tensor> inputs) -> Result<std::vector<Tensor>> {
      const Tensor &in = inputs[0];
      std::lock_guard<std::mutex> lock(mu);
      dispatches.push_back(
          {model, batch_size,
           std::vector<int32_t>(in.dataAs<int32_t>(), in.dataAs<int32_t>() + in.numElements()),
           clock->now()});
      return std::vector<Tensor>{in};
    };
  }
  SchedulerOptions options(std::chrono::microseconds delay) {
    SchedulerOptions o;
    o.max_queue_delay_us = delay;
    o.clock = clock;
    return o;
  }
  std::vector<Dispatch> seen() {
    std::lock_guard<std::mutex> lock(mu);
    return dispatches;
  }
};

int32_t onlyValue(std::future<Result<std::vector<Tensor>>> &f) {
  Result<std::vector<Tensor>> r = f.get();
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  if (!r.isOk())
    return -1;
  EXPECT_EQ((*r)[0].numElements(), 1);
  return (*r)[0].dataAs<int32_t>()[0];
}

/// Expects exactly one dispatch, of `batch_size` rows holding `values`.
void expectOneDispatch(Recorder &dev, int64_t batch_size, const std::vector<int32_t> &values) {
  const std::vector<Dispatch> seen = dev.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].batch_size, batch_size);
  EXPECT_EQ(seen[0].values, values);
}

TEST(QueueDelay, PartialBatchWaitsForLaterRequestsThenRunsOnce) {
  Recorder dev;
  Scheduler s(dev.options(2s), dev.runFn());
  s.addModel("m", batching({1, 4}));
  s.start();
  const Clock::time_point begin = dev.clock->now();
  auto a = submitAsync(s, "m", rowsTensor(1, 10));
  EXPECT_EQ(dev.clock->awaitWaiter(), begin + 2s);
  dev.clock->advance(10ms);
  auto b = submitAsync(s, "m", rowsTensor(1, 20));
  dev.clock->advance(10ms);
  auto c = submitAsync(s, "m", rowsTensor(1, 30));
  dev.clock->advanceTo(begin + 2s);
  EXPECT_EQ(onlyValue(a), 10);
  EXPECT_EQ(onlyValue(b), 20);
  EXPECT_EQ(onlyValue(c), 30);
  // Three rows never fill size 4: the batch left when the oldest had waited 2 s.
  expectOneDispatch(dev, 4, {10, 20, 30, 0});
  EXPECT_EQ(dev.seen()[0].at, begin + 2s);
}

TEST(QueueDelay, FullBatchDispatchesWithoutWaitingForTheDelay) {
  Recorder dev;
  Scheduler s(dev.options(600s), dev.runFn());
  s.addModel("m", batching({1, 4}));
  s.start();
  const Clock::time_point begin = dev.clock->now();
  std::vector<std::future<Result<std::vector<Tensor>>>> futures;
  for (int32_t i = 0; i < 4; ++i)
    futures.push_back(submitAsync(s, "m", rowsTensor(1, i + 1)));
  for (int32_t i = 0; i < 4; ++i)
    EXPECT_EQ(onlyValue(futures[static_cast<size_t>(i)]), i + 1);
  expectOneDispatch(dev, 4, {1, 2, 3, 4});
  EXPECT_EQ(dev.seen()[0].at, begin); // the clock never moved
}

TEST(QueueDelay, MaxBatchSizeCapsTheTarget) {
  Recorder dev;
  Scheduler s(dev.options(600s), dev.runFn());
  s.addModel("m", batching({1, 4}), ModelPolicy{.weight = 1.0, .max_batch_size = 2});
  s.start();
  auto a = submitAsync(s, "m", rowsTensor(1, 5));
  auto b = submitAsync(s, "m", rowsTensor(1, 6));
  // Two rows reach the cap: the batch leaves at once (the fake clock never reaches 600 s).
  EXPECT_EQ(onlyValue(a), 5);
  EXPECT_EQ(onlyValue(b), 6);
  expectOneDispatch(dev, 4, {5, 6, 0, 0});
  EXPECT_EQ(dev.seen()[0].at, FakeClock::at(0s));
}

TEST(QueueDelay, ARequestLargerThanTheRoomLeftClosesTheBatch) {
  Recorder dev;
  Scheduler s(dev.options(600s), dev.runFn());
  s.addModel("m", batching({1, 4}));
  s.start();
  auto a = submitAsync(s, "m", rowsTensor(3, 1));
  auto b = submitAsync(s, "m", rowsTensor(2, 7));
  auto c = submitAsync(s, "m", rowsTensor(2, 9));
  // 3 + 2 rows exceed size 4, so the first batch cannot grow and leaves without the
  // delay; the next two requests fill size 4 exactly.
  for (auto *f : {&a, &b, &c}) {
    Result<std::vector<Tensor>> r = f->get();
    ASSERT_TRUE(r.isOk()) << r.status().toString();
  }
  const std::vector<Dispatch> seen = dev.seen();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].values, (std::vector<int32_t>{1, 2, 3, 0}));
  EXPECT_EQ(seen[1].values, (std::vector<int32_t>{7, 8, 9, 10}));
  EXPECT_EQ(seen[0].at, FakeClock::at(0s));
  EXPECT_EQ(seen[1].at, FakeClock::at(0s));
}

TEST(QueueDelay, NeverWaitsPastADeadline) {
  for (Discipline d : {Discipline::kFair, Discipline::kEdf}) {
    SCOPED_TRACE(d == Discipline::kFair ? "fair" : "edf");
    Recorder dev;
    SchedulerOptions o = dev.options(600s);
    o.discipline = d;
    o.default_cost_seconds = 0.2;
    Scheduler s(o, dev.runFn());
    s.addModel("m", batching({1, 4}));
    s.start();
    const Clock::time_point begin = dev.clock->now();
    auto a = submitAsync(s, "m", rowsTensor(1, 42), begin + 2s);
    // Held until deadline - cost (fair) or deadline - 2 cost (edf), then served in time.
    const Clock::time_point release = begin + (d == Discipline::kFair ? 1800ms : 1600ms);
    EXPECT_EQ(dev.clock->awaitWaiter(), release);
    dev.clock->advanceTo(release);
    EXPECT_EQ(onlyValue(a), 42);
    ASSERT_EQ(dev.seen().size(), 1u);
    EXPECT_EQ(dev.seen()[0].at, release);
  }
}

TEST(QueueDelay, AHeldModelDoesNotBlockOtherModels) {
  Recorder dev;
  Scheduler s(dev.options(600s), dev.runFn());
  s.addModel("held", batching({1, 4}));
  s.addModel("free", batching({1}));
  s.start();
  auto h1 = submitAsync(s, "held", rowsTensor(1, 1));
  auto f = submitAsync(s, "free", rowsTensor(1, 9));
  EXPECT_EQ(onlyValue(f), 9); // would wait for 600 s if the held model blocked the loop
  EXPECT_EQ(h1.wait_for(0s), std::future_status::timeout);
  EXPECT_EQ(dev.clock->awaitWaiter(), FakeClock::at(600s));
  std::vector<std::future<Result<std::vector<Tensor>>>> rest;
  for (int32_t i = 2; i <= 4; ++i)
    rest.push_back(submitAsync(s, "held", rowsTensor(1, i)));
  EXPECT_EQ(onlyValue(h1), 1);
  for (int32_t i = 2; i <= 4; ++i)
    EXPECT_EQ(onlyValue(rest[static_cast<size_t>(i - 2)]), i);
  const std::vector<Dispatch> seen = dev.seen();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].model, "free");
  EXPECT_EQ(seen[1].model, "held");
  EXPECT_EQ(seen[1].values, (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(seen[1].at, FakeClock::at(0s));
}

TEST(QueueDelay, StopFailsAHeldRequestPromptly) {
  Recorder dev;
  Scheduler s(dev.options(600s), dev.runFn());
  s.addModel("m", batching({1, 4}));
  s.start();
  auto a = submitAsync(s, "m", rowsTensor(1, 1));
  EXPECT_EQ(dev.clock->awaitWaiter(), FakeClock::at(600s));
  s.stop();
  Result<std::vector<Tensor>> r = a.get();
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(dev.seen().empty());
}

TEST(QueueDelay, RowsQueuedDuringABatchStillWaitAfterItEnds) {
  // a is held 300 ms (it cannot fill size 4), then runs 400 ms; b arrives during that run,
  // c 100 ms after it ends. The wait counts from the end of a's batch, not from b's arrival
  // (which would send b alone the moment the device frees up): b and c go together.
  Recorder dev;
  RunFn record = dev.runFn();
  std::atomic<int> calls{0};
  std::promise<void> running, b_queued;
  Scheduler s(dev.options(300ms),
              [&](const std::string &model, int64_t batch_size, std::vector<Tensor> inputs) {
                Result<std::vector<Tensor>> out = record(model, batch_size, std::move(inputs));
                if (calls.fetch_add(1) == 0) {
                  dev.clock->advance(100ms);
                  running.set_value();
                  b_queued.get_future().wait();
                  dev.clock->advance(300ms);
                }
                return out;
              });
  s.addModel("m", batching({1, 4}));
  s.start();
  auto a = submitAsync(s, "m", rowsTensor(1, 10));
  EXPECT_EQ(dev.clock->awaitWaiter(), FakeClock::at(300ms));
  dev.clock->advanceTo(FakeClock::at(300ms));
  running.get_future().wait();
  auto b = submitAsync(s, "m", rowsTensor(1, 20)); // at 400 ms, while a runs
  b_queued.set_value();
  EXPECT_EQ(onlyValue(a), 10);
  // a's batch ended at 700 ms: b is held until 700 + 300 ms, not 400 + 300 ms.
  EXPECT_EQ(dev.clock->awaitWaiter(), FakeClock::at(1000ms));
  dev.clock->advanceTo(FakeClock::at(800ms));
  auto c = submitAsync(s, "m", rowsTensor(1, 30));
  dev.clock->advanceTo(FakeClock::at(1000ms));
  EXPECT_EQ(onlyValue(b), 20);
  EXPECT_EQ(onlyValue(c), 30);
  const std::vector<Dispatch> seen = dev.seen();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].values, (std::vector<int32_t>{10})); // alone: the b1 program
  EXPECT_EQ(seen[1].values, (std::vector<int32_t>{20, 30, 0, 0}));
  EXPECT_EQ(seen[0].at, FakeClock::at(300ms));
  EXPECT_EQ(seen[1].at, FakeClock::at(1000ms));
}

TEST(QueueDelay, ZeroDelayDispatchesAtOnce) {
  Recorder dev;
  Scheduler s(dev.options(0us), dev.runFn());
  s.addModel("m", batching({1, 4}));
  s.start();
  auto a = submitAsync(s, "m", rowsTensor(1, 3));
  EXPECT_EQ(onlyValue(a), 3);
  const std::vector<Dispatch> seen = dev.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].batch_size, 1);
}

} // namespace
} // namespace rs::scheduler
