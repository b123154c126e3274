//===- test/scheduler/cancellation_test.cc - Requests whose client has gone ===//
//
// submit()'s Cancellation: a request cancelled while it waits is dropped when its model's
// next batch is formed (never run, answered Cancelled, counted in requests_cancelled); one
// cancelled while its batch runs is answered Cancelled while its batch-mates get their
// rows; a split request cancelled after its first piece is answered once. The device is a
// fake whose runs the test holds and observes; every wait is on a condition.
//
//===----------------------------------------------------------------------===//
#include "scheduler/scheduler.h"
#include "scheduler_test_util.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <vector>

namespace rs::scheduler {
namespace {

using testing::batching;

/// Doubles input 0 (i32, 2 columns); records the first column of every row it runs; holds
/// its first run until opened; calls `during_run(run_index)` inside every run.
struct RecordingDevice {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  int runs = 0;
  std::vector<int32_t> rows_run;
  std::function<void(int)> during_run;

  RunFn runFn() {
    return [this](const std::string &, int64_t,
                  std::vector<Tensor> inputs) -> Result<std::vector<Tensor>> {
      int index = 0;
      {
        std::unique_lock<std::mutex> lock(mu);
        index = runs++;
        const int32_t *v = inputs[0].dataAs<int32_t>();
        for (int64_t r = 0; r < inputs[0].shape()[0]; ++r)
          if (v[r * 2] != 0) // padding rows are zeros
            rows_run.push_back(v[r * 2]);
        cv.notify_all();
        if (index == 0)
          cv.wait(lock, [&] { return open; });
      }
      if (during_run)
        during_run(index);
      Tensor out = Tensor::copyOf(DType::kI32, inputs[0].shape(), inputs[0].bytes());
      for (int64_t i = 0; i < out.numElements(); ++i)
        out.mutableDataAs<int32_t>()[i] *= 2;
      return std::vector<Tensor>{out};
    };
  }
  void waitRuns(int n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return runs >= n; });
  }
  void openGate() {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    cv.notify_all();
  }
  std::vector<int32_t> ran() {
    std::lock_guard<std::mutex> lock(mu);
    return rows_run;
  }
};

/// `rows` rows of 2 columns; row r holds (value + r, -(value + r)).
Tensor rowsOf(int32_t value, int64_t rows = 1) {
  Tensor t = Tensor::zeros(DType::kI32, {rows, 2});
  for (int64_t r = 0; r < rows; ++r) {
    t.mutableDataAs<int32_t>()[r * 2] = value + static_cast<int32_t>(r);
    t.mutableDataAs<int32_t>()[r * 2 + 1] = -(value + static_cast<int32_t>(r));
  }
  return t;
}

/// Submits one request with its own cancellation flag; returns its future.
std::future<Result<std::vector<Tensor>>> submitCancellable(Scheduler &s, Tensor input,
                                                           const CancellationPtr &cancel) {
  auto p = std::make_shared<std::promise<Result<std::vector<Tensor>>>>();
  auto f = p->get_future();
  s.submit(
      "m", {std::move(input)}, std::nullopt,
      [p](Result<std::vector<Tensor>> r) { p->set_value(std::move(r)); }, cancel);
  return f;
}

std::vector<int32_t> values(const Tensor &t) {
  const int32_t *v = t.dataAs<int32_t>();
  return {v, v + t.numElements()};
}

TEST(Cancellation, RequestsCancelledWhileQueuedBehindABlockedBatchNeverRun) {
  RecordingDevice device;
  SchedulerOptions options;
  options.warmup = false;
  Scheduler s(options, device.runFn());
  s.addModel("m", batching({1, 2, 4, 8, 16, 32, 64}));
  s.start();

  auto blocker = submitCancellable(s, rowsOf(1000), nullptr);
  device.waitRuns(1); // the device is busy with the blocker's batch
  std::vector<std::shared_ptr<Cancellation>> flags;
  std::vector<std::future<Result<std::vector<Tensor>>>> cancelled;
  auto keep_a = submitCancellable(s, rowsOf(500), std::make_shared<Cancellation>());
  for (int32_t i = 1; i <= 30; ++i) {
    flags.push_back(std::make_shared<Cancellation>());
    cancelled.push_back(submitCancellable(s, rowsOf(i), flags.back()));
  }
  auto keep_b = submitCancellable(s, rowsOf(600), nullptr);
  EXPECT_EQ(s.queueDepth("m"), 32);
  for (const auto &flag : flags)
    flag->cancel();
  EXPECT_EQ(s.stats("m")->queued_cancelled, 30);
  device.openGate();

  for (auto &f : cancelled) {
    Result<std::vector<Tensor>> r = f.get();
    ASSERT_FALSE(r.isOk());
    EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
    EXPECT_EQ(r.status().message(), "model 'm': the client cancelled the request before it ran");
  }
  Result<std::vector<Tensor>> a = keep_a.get(), b = keep_b.get(), z = blocker.get();
  ASSERT_TRUE(a.isOk() && b.isOk() && z.isOk());
  EXPECT_EQ(values((*a)[0]), (std::vector<int32_t>{1000, -1000}));
  EXPECT_EQ(values((*b)[0]), (std::vector<int32_t>{1200, -1200}));
  EXPECT_EQ(values((*z)[0]), (std::vector<int32_t>{2000, -2000}));
  // The blocker, then the two live requests coalesced into one batch; nothing else ran.
  EXPECT_EQ(device.ran(), (std::vector<int32_t>{1000, 500, 600}));
  std::optional<ModelSchedStats> st = s.stats("m");
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->requests_cancelled, 30);
  EXPECT_EQ(st->requests_served, 3);
  EXPECT_EQ(st->dispatch_count, 2);
  EXPECT_EQ(st->queue_depth, 0);
  EXPECT_EQ(st->queued_cancelled, 0);
}

TEST(Cancellation, ARequestCancelledWhileItRunsIsAnsweredCancelledAndItsBatchMatesServed) {
  RecordingDevice device;
  SchedulerOptions options;
  options.warmup = false;
  Scheduler s(options, device.runFn());
  s.addModel("m", batching({1, 2, 4}));
  s.start();
  auto flag = std::make_shared<Cancellation>();
  device.during_run = [&](int run) {
    if (run == 1) // the batch of the two requests below
      flag->cancel();
  };
  auto blocker = submitCancellable(s, rowsOf(1000), nullptr);
  device.waitRuns(1);
  auto doomed = submitCancellable(s, rowsOf(7), flag);
  auto mate = submitCancellable(s, rowsOf(8), nullptr);
  device.openGate();

  Result<std::vector<Tensor>> d = doomed.get(), m = mate.get();
  ASSERT_FALSE(d.isOk());
  EXPECT_EQ(d.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(d.status().message(),
            "the client cancelled the request while it ran; its answer was dropped");
  ASSERT_TRUE(m.isOk());
  EXPECT_EQ(values((*m)[0]), (std::vector<int32_t>{16, -16}));
  ASSERT_TRUE(blocker.get().isOk());
  EXPECT_EQ(device.ran(), (std::vector<int32_t>{1000, 7, 8}));
  EXPECT_EQ(s.stats("m")->requests_cancelled, 0); // it ran: not dropped from the queue
}

TEST(Cancellation, ACancelledRequestPastItsDeadlineIsDeadlineExceeded) {
  RecordingDevice device;
  SchedulerOptions options;
  options.warmup = false;
  Scheduler s(options, device.runFn());
  s.addModel("m", batching({1, 2}));
  s.start();
  auto blocker = submitCancellable(s, rowsOf(1000), nullptr);
  device.waitRuns(1);
  // gRPC cancels a call when its deadline passes: the client sees DEADLINE_EXCEEDED.
  auto flag = std::make_shared<Cancellation>();
  auto p = std::make_shared<std::promise<Result<std::vector<Tensor>>>>();
  s.submit(
      "m", {rowsOf(3)}, Clock::now() - std::chrono::seconds(1),
      [p](Result<std::vector<Tensor>> r) { p->set_value(std::move(r)); }, flag);
  flag->cancel();
  device.openGate();
  Result<std::vector<Tensor>> r = p->get_future().get();
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  ASSERT_TRUE(blocker.get().isOk());
  EXPECT_EQ(s.stats("m")->requests_cancelled, 0);
  EXPECT_EQ(device.ran(), (std::vector<int32_t>{1000}));
}

TEST(Cancellation, ASplitRequestCancelledAfterItsFirstPieceIsAnsweredOnceAndStops) {
  RecordingDevice device;
  device.open = true;
  SchedulerOptions options;
  options.warmup = false;
  Scheduler s(options, device.runFn());
  s.addModel("m", batching({2}));
  auto flag = std::make_shared<Cancellation>();
  device.during_run = [&](int run) {
    if (run == 0)
      flag->cancel();
  };
  int answers = 0;
  std::promise<Status> answered;
  // 6 rows at a largest size of 2: three pieces, queued before the dispatch thread starts;
  // a request behind them is answered only after the loop has passed them.
  s.submit(
      "m", {rowsOf(10, 6)}, std::nullopt,
      [&](Result<std::vector<Tensor>> r) {
        ++answers;
        answered.set_value(r.status());
      },
      flag);
  auto behind = submitCancellable(s, rowsOf(50), nullptr);
  s.start();
  Status status = answered.get_future().get();
  ASSERT_TRUE(behind.get().isOk());
  EXPECT_EQ(status.code(), StatusCode::kCancelled);
  EXPECT_EQ(answers, 1);
  EXPECT_EQ(device.ran(), (std::vector<int32_t>{10, 11, 50})); // the first piece, then `behind`
  EXPECT_EQ(s.stats("m")->requests_cancelled, 2);              // the other two pieces
}

} // namespace
} // namespace rs::scheduler
