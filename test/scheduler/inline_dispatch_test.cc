//===- test/scheduler/inline_dispatch_test.cc - Dispatch on the submitter ---===//
//
// SchedulerOptions::inline_dispatch: with the device idle, submit() runs the batch on the
// calling thread; while a batch runs, submit() only queues and the dispatch thread (or
// the running submitter's successor) serves the queue; never two batches at once.
//
//===----------------------------------------------------------------------===//
#include "scheduler/scheduler.h"
#include "scheduler_test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

namespace rs::scheduler {
namespace {

using testing::batching;

Tensor oneRow(int32_t v) {
  Tensor t = Tensor::zeros(DType::kI32, {1, 1});
  t.mutableDataAs<int32_t>()[0] = v;
  return t;
}

SchedulerOptions inlineOptions() {
  SchedulerOptions o;
  o.inline_dispatch = true;
  return o;
}

/// Echoes its input; records the threads it ran on and the most batches running at once.
struct Device {
  std::mutex mu;
  std::vector<std::thread::id> threads;
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  std::shared_future<void> gate; // when valid, every run waits for it

  RunFn runFn() {
    return [this](const std::string &, int64_t,
                  std::vector<Tensor> inputs) -> Result<std::vector<Tensor>> {
      const int now = ++running;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      if (gate.valid())
        gate.wait();
      {
        std::lock_guard<std::mutex> lock(mu);
        threads.push_back(std::this_thread::get_id());
      }
      --running;
      return std::vector<Tensor>{inputs[0]};
    };
  }
};

/// An inline-dispatch scheduler with model "m" (batch size 1) on `dev`, whose runs wait
/// until `open` is set.
struct GatedScheduler {
  Device dev;
  std::promise<void> open;
  Scheduler s;
  GatedScheduler() : s(inlineOptions(), (dev.gate = open.get_future().share(), dev.runFn())) {
    s.addModel("m", batching({1}));
    s.start();
  }
};

TEST(InlineDispatch, IdleDeviceRunsOnTheSubmittingThread) {
  Device dev;
  Scheduler s(inlineOptions(), dev.runFn());
  s.addModel("m", batching({1, 4}));
  s.start();
  std::thread::id done_on;
  bool answered = false;
  s.submit("m", {oneRow(7)}, std::nullopt, [&](Result<std::vector<Tensor>> r) {
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    EXPECT_EQ((*r)[0].dataAs<int32_t>()[0], 7);
    done_on = std::this_thread::get_id();
    answered = true;
  });
  // Answered before submit() returned, on this thread.
  EXPECT_TRUE(answered);
  EXPECT_EQ(done_on, std::this_thread::get_id());
  ASSERT_EQ(dev.threads.size(), 1u);
  EXPECT_EQ(dev.threads[0], std::this_thread::get_id());
}

TEST(InlineDispatch, ABusyDeviceQueuesAndNeverRunsTwoBatchesAtOnce) {
  GatedScheduler g;
  Device &dev = g.dev;
  std::promise<void> &open = g.open;
  Scheduler &s = g.s;
  auto first = std::make_shared<std::promise<int32_t>>();
  std::thread submitter([&] {
    s.submit("m", {oneRow(1)}, std::nullopt, [first](Result<std::vector<Tensor>> r) {
      first->set_value(r.isOk() ? (*r)[0].dataAs<int32_t>()[0] : -1);
    });
  });
  while (dev.running.load() == 0) // the first batch has started on `submitter`
    std::this_thread::yield();
  // The device is busy: these only queue, and submit() returns at once.
  std::vector<std::future<int32_t>> rest;
  for (int32_t v = 2; v <= 4; ++v) {
    auto p = std::make_shared<std::promise<int32_t>>();
    rest.push_back(p->get_future());
    s.submit("m", {oneRow(v)}, std::nullopt, [p](Result<std::vector<Tensor>> r) {
      p->set_value(r.isOk() ? (*r)[0].dataAs<int32_t>()[0] : -1);
    });
  }
  EXPECT_EQ(dev.running.load(), 1);
  open.set_value();
  submitter.join();
  EXPECT_EQ(first->get_future().get(), 1);
  for (int32_t v = 2; v <= 4; ++v)
    EXPECT_EQ(rest[static_cast<size_t>(v - 2)].get(), v);
  EXPECT_EQ(dev.most.load(), 1);
  EXPECT_EQ(dev.threads.size(), 4u);
}

TEST(InlineDispatch, StopDuringAnInlineBatchReturnsOnceItEnds) {
  // stop() while a submitter runs a batch inline: stop's wake-up finds the device busy, so
  // the dispatch thread waits again; the submitter must wake it when its batch ends, or
  // stop() waits for the dispatch thread forever.
  GatedScheduler g;
  Device &dev = g.dev;
  std::promise<void> &open = g.open;
  Scheduler &s = g.s;
  std::promise<int32_t> answer;
  std::thread submitter([&] {
    s.submit("m", {oneRow(5)}, std::nullopt, [&](Result<std::vector<Tensor>> r) {
      answer.set_value(r.isOk() ? (*r)[0].dataAs<int32_t>()[0] : -1);
    });
  });
  while (dev.running.load() == 0) // the batch runs inline on `submitter`
    std::this_thread::yield();
  auto stopped = std::async(std::launch::async, [&] { s.stop(); });
  // Time for stop() to set stopping_ and for the dispatch thread to go back to waiting.
  EXPECT_EQ(stopped.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  open.set_value();
  submitter.join();
  EXPECT_EQ(answer.get_future().get(), 5);
  EXPECT_EQ(stopped.wait_for(std::chrono::seconds(10)), std::future_status::ready);
}

TEST(InlineDispatch, OffByDefault) {
  Device dev;
  Scheduler s(SchedulerOptions{}, dev.runFn());
  s.addModel("m", batching({1}));
  s.start();
  std::promise<std::thread::id> on;
  s.submit("m", {oneRow(3)}, std::nullopt,
           [&](Result<std::vector<Tensor>>) { on.set_value(std::this_thread::get_id()); });
  EXPECT_NE(on.get_future().get(), std::this_thread::get_id());
}

} // namespace
} // namespace rs::scheduler
