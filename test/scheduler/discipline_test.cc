//===- test/scheduler/discipline_test.cc - fair, fifo and edf on a fake clock ===//
//
// Every test queues all its requests before start(), and the fake device advances the
// fake clock by a fixed cost per dispatch, so the dispatch order is deterministic and
// the tests take no real time beyond the tensor copies.
//
//===----------------------------------------------------------------------===//
#include "scheduler/scheduler.h"

#include "fake_clock.h"
#include "scheduler_test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <map>
#include <mutex>

namespace rs::scheduler {
namespace {

using std::chrono::milliseconds;

/// One executed dispatch: model, fake start and end, the request ids (input values) it held.
struct Dispatch {
  std::string model;
  Clock::time_point start, end;
  std::vector<int32_t> ids;
};

/// A fake device: each dispatch of model m costs cost[m] of fake time (the clock moves only
/// when it runs), echoes its input.
struct FakeDevice {
  std::shared_ptr<testing::FakeClock> clock = std::make_shared<testing::FakeClock>();
  std::map<std::string, Clock::duration> cost;
  std::mutex mu;
  std::vector<Dispatch> log;

  RunFn runFn() {
    return [this](const std::string &model, int64_t,
                  std::vector<Tensor> inputs) -> Result<std::vector<Tensor>> {
      Dispatch d;
      d.model = model;
      d.start = clock->now();
      clock->advance(cost.at(model));
      d.end = clock->now();
      const Tensor &in = inputs[0];
      for (int64_t i = 0; i < in.numElements(); ++i)
        d.ids.push_back(in.dataAs<int32_t>()[i]);
      {
        std::lock_guard<std::mutex> lock(mu);
        log.push_back(std::move(d));
      }
      return std::vector<Tensor>{in};
    };
  }
  SchedulerOptions options(Discipline discipline) {
    SchedulerOptions o;
    o.coalescing = false;
    o.max_queue_depth = 1 << 20;
    o.discipline = discipline;
    o.clock = clock;
    return o;
  }
};

using testing::idTensor;

ModelBatching oneRow() { return {{1}, {0}, {0}, {}}; }

using Future = std::future<Result<std::vector<Tensor>>>;

Future submitAsync(Scheduler &s, const std::string &model, int32_t id,
                   std::optional<Clock::time_point> deadline = {}) {
  auto p = std::make_shared<std::promise<Result<std::vector<Tensor>>>>();
  Future f = p->get_future();
  s.submit(model, {idTensor(id)}, deadline,
           [p](Result<std::vector<Tensor>> r) { p->set_value(std::move(r)); });
  return f;
}

/// Execute time of `model` inside [0, window) of fake time.
double busySeconds(const std::vector<Dispatch> &log, const std::string &model,
                   Clock::duration window) {
  const Clock::time_point end(window);
  double total = 0;
  for (const Dispatch &d : log)
    if (d.model == model && d.start < end)
      total += std::chrono::duration<double>(std::min(d.end, end) - d.start).count();
  return total;
}

TEST(Fair, WeightsOneAndThreeGetOneToThreeOfExecuteTime) {
  FakeDevice dev;
  // Different per-dispatch costs: fairness is in time, not in dispatches.
  dev.cost = {{"a", milliseconds(20)}, {"b", milliseconds(7)}};
  Scheduler s(dev.options(Discipline::kFair), dev.runFn());
  s.addModel("a", oneRow(), ModelPolicy{.weight = 1, .max_batch_size = 0});
  s.addModel("b", oneRow(), ModelPolicy{.weight = 3, .max_batch_size = 0});
  // Saturating: both queues stay non-empty for well past the 10 s window
  // (a alone would need 12 s, b alone 14 s).
  std::vector<Future> futures;
  for (int32_t i = 0; i < 2000; ++i) {
    if (i < 600)
      futures.push_back(submitAsync(s, "a", i));
    futures.push_back(submitAsync(s, "b", i));
  }
  s.start();
  for (Future &f : futures)
    ASSERT_TRUE(f.get().isOk());
  const auto window = std::chrono::seconds(10);
  const double a = busySeconds(dev.log, "a", window);
  const double b = busySeconds(dev.log, "b", window);
  const double ratio = b / a;
  std::printf("fair: a %.3f s, b %.3f s of 10 s, ratio %.4f (target 3)\n", a, b, ratio);
  EXPECT_NEAR(a + b, 10.0, 1e-9);
  EXPECT_GT(ratio, 3.0 * 0.9);
  EXPECT_LT(ratio, 3.0 * 1.1);
  // The cost estimate learned the fake device's exact cost.
  auto stats = s.stats("a");
  ASSERT_TRUE(stats.has_value());
  EXPECT_NEAR(stats->cost_estimate.at(1), 0.020, 1e-9);
  EXPECT_EQ(stats->requests_served, 600);
}

TEST(Fair, SetWeightChangesTheShare) {
  FakeDevice dev;
  dev.cost = {{"a", milliseconds(10)}, {"b", milliseconds(10)}};
  Scheduler s(dev.options(Discipline::kFair), dev.runFn());
  s.addModel("a", oneRow());
  s.addModel("b", oneRow());
  ASSERT_TRUE(s.setWeight("b", 4).isOk());
  EXPECT_EQ(s.setWeight("x", 1).code(), StatusCode::kNotFound);
  EXPECT_EQ(s.setWeight("a", 0).code(), StatusCode::kInvalidArgument);
  std::vector<Future> futures;
  for (int32_t i = 0; i < 1000; ++i) {
    futures.push_back(submitAsync(s, "a", i));
    futures.push_back(submitAsync(s, "b", i));
  }
  s.start();
  for (Future &f : futures)
    ASSERT_TRUE(f.get().isOk());
  const double ratio = busySeconds(dev.log, "b", std::chrono::seconds(5)) /
                       busySeconds(dev.log, "a", std::chrono::seconds(5));
  EXPECT_GT(ratio, 4.0 * 0.9);
  EXPECT_LT(ratio, 4.0 * 1.1);
}

TEST(Fifo, ServesInArrivalOrderAcrossModelsWhateverTheWeights) {
  FakeDevice dev;
  dev.cost = {{"a", milliseconds(10)}, {"b", milliseconds(1)}};
  Scheduler s(dev.options(Discipline::kFifo), dev.runFn());
  s.addModel("a", oneRow(), ModelPolicy{.weight = 1, .max_batch_size = 0});
  s.addModel("b", oneRow(), ModelPolicy{.weight = 9, .max_batch_size = 0});
  std::vector<Future> futures;
  std::vector<int32_t> expected;
  for (int32_t i = 0; i < 60; ++i) {
    // An irregular interleaving: a, b, b, a, b, b, b, a, ...
    futures.push_back(submitAsync(s, (i * 7 % 5) < 2 ? "a" : "b", i));
    expected.push_back(i);
  }
  s.start();
  for (Future &f : futures)
    ASSERT_TRUE(f.get().isOk());
  std::vector<int32_t> order;
  for (const Dispatch &d : dev.log)
    order.insert(order.end(), d.ids.begin(), d.ids.end());
  EXPECT_EQ(order, expected);
}

TEST(Edf, NeverExecutesARequestPastItsDeadlineUnderOverload) {
  FakeDevice dev;
  dev.cost = {{"a", milliseconds(10)}, {"b", milliseconds(10)}};
  Scheduler s(dev.options(Discipline::kEdf), dev.runFn());
  s.addModel("a", oneRow());
  s.addModel("b", oneRow());
  // 200 requests of 10 ms each with deadlines spread over 0.05..1.0 s: at most ~100 fit.
  std::map<int32_t, Clock::time_point> deadline;
  std::vector<Future> futures;
  for (int32_t i = 0; i < 200; ++i) {
    deadline[i] = dev.clock->at(milliseconds(50 + (i * 37 % 191) * 5));
    futures.push_back(submitAsync(s, i % 2 ? "a" : "b", i, deadline[i]));
  }
  // Requests without deadline run once every deadline-bearing one is served or shed.
  futures.push_back(submitAsync(s, "a", 1000));
  s.start();
  int ok = 0, shed = 0;
  for (Future &f : futures) {
    auto r = f.get();
    if (r.isOk()) {
      ++ok;
    } else {
      ASSERT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status().toString();
      ++shed;
    }
  }
  std::printf("edf: %d executed, %d shed\n", ok, shed);
  EXPECT_GT(ok, 50);
  EXPECT_GT(shed, 50);
  for (const Dispatch &d : dev.log) {
    for (int32_t id : d.ids) {
      if (id != 1000) {
        EXPECT_LE(d.end, deadline.at(id)) << "request " << id << " finished after its deadline";
      }
    }
  }
  // The request without a deadline (deadline +inf) runs after every other.
  EXPECT_EQ(dev.log.back().ids, (std::vector<int32_t>{1000}));
}

TEST(Edf, ServesTheModelWithTheSoonestDeadlineFirst) {
  FakeDevice dev;
  dev.cost = {{"a", milliseconds(1)}, {"b", milliseconds(1)}};
  Scheduler s(dev.options(Discipline::kEdf), dev.runFn());
  s.addModel("a", oneRow());
  s.addModel("b", oneRow());
  std::vector<Future> futures;
  for (int32_t i = 0; i < 5; ++i) // a arrives first with late deadlines
    futures.push_back(submitAsync(s, "a", i, dev.clock->at(std::chrono::seconds(10 + i))));
  for (int32_t i = 5; i < 10; ++i) // b with early ones
    futures.push_back(submitAsync(s, "b", i, dev.clock->at(std::chrono::seconds(i - 4))));
  s.start();
  for (Future &f : futures)
    ASSERT_TRUE(f.get().isOk());
  std::vector<int32_t> order;
  for (const Dispatch &d : dev.log)
    order.push_back(d.ids[0]);
  EXPECT_EQ(order, (std::vector<int32_t>{5, 6, 7, 8, 9, 0, 1, 2, 3, 4}));
}

TEST(Edf, ExpiredRequestsAreDeadlineExceededUnderEveryDiscipline) {
  for (Discipline d : {Discipline::kFair, Discipline::kFifo, Discipline::kEdf}) {
    FakeDevice dev;
    dev.cost = {{"a", milliseconds(10)}};
    Scheduler s(dev.options(d), dev.runFn());
    s.addModel("a", oneRow());
    auto first = submitAsync(s, "a", 1);
    auto late = submitAsync(s, "a", 2, dev.clock->at(milliseconds(5)));
    s.start();
    EXPECT_TRUE(first.get().isOk());
    EXPECT_EQ(late.get().status().code(), StatusCode::kDeadlineExceeded);
    EXPECT_EQ(dev.log.size(), 1u);
  }
}

TEST(Policy, MaxBatchSizeCapsCoalescedRows) {
  FakeDevice dev;
  dev.cost = {{"a", milliseconds(1)}};
  SchedulerOptions o = dev.options(Discipline::kFair);
  o.coalescing = true;
  Scheduler s(o, dev.runFn());
  s.addModel("a", {{1, 4, 8}, {0}, {0}, {}}, ModelPolicy{.weight = 1, .max_batch_size = 3});
  std::vector<Future> futures;
  for (int32_t i = 0; i < 7; ++i)
    futures.push_back(submitAsync(s, "a", i));
  s.start();
  for (Future &f : futures)
    ASSERT_TRUE(f.get().isOk());
  std::vector<size_t> sizes;
  for (const Dispatch &d : dev.log)
    sizes.push_back(d.ids.size());
  // 3 rows padded to the compiled size 4, twice, then 1 row at size 1.
  EXPECT_EQ(sizes, (std::vector<size_t>{4, 4, 1}));
  EXPECT_EQ(s.stats("a")->rows_served, 7);
}

TEST(Policy, RenameKeepsQueueAndCounters) {
  FakeDevice dev;
  dev.cost = {{"b", milliseconds(1)}};
  Scheduler s(dev.options(Discipline::kFifo), dev.runFn());
  s.addModel("a", oneRow(), ModelPolicy{.weight = 2, .max_batch_size = 0});
  s.addModel("c", oneRow());
  auto f = submitAsync(s, "a", 7);
  s.recordCost("a", 1, 0.5);
  EXPECT_EQ(s.renameModel("a", "c").code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(s.renameModel("x", "y").code(), StatusCode::kNotFound);
  ASSERT_TRUE(s.renameModel("a", "b").isOk());
  EXPECT_FALSE(s.stats("a").has_value());
  auto st = s.stats("b");
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->weight, 2);
  EXPECT_EQ(st->queue_depth, 1);
  EXPECT_EQ(st->cost_estimate.at(1), 0.5);
  s.start();
  ASSERT_TRUE(f.get().isOk());
  EXPECT_EQ(dev.log.at(0).model, "b");
}

TEST(Fair, WarmupAtAddSeedsTheCostOfEveryCompiledSize) {
  FakeDevice dev;
  dev.cost = {{"a", milliseconds(4)}};
  SchedulerOptions o = dev.options(Discipline::kFair);
  o.model_policies["a"] = {.weight = 5, .max_batch_size = 2};
  Scheduler s(o, dev.runFn());
  ModelBatching b{{1, 4}, {0}, {0}, {}};
  std::vector<int64_t> warmed;
  b.warmup_inputs = [&warmed](int64_t size) {
    warmed.push_back(size);
    return std::vector<Tensor>{Tensor::zeros(DType::kI32, {size, 1})};
  };
  s.addModel("a", b);
  auto f = submitAsync(s, "a", 9);
  s.start();
  ASSERT_TRUE(f.get().isOk());
  EXPECT_EQ(warmed, (std::vector<int64_t>{1, 4}));
  // Two warmup dispatches, then the request.
  ASSERT_EQ(dev.log.size(), 3u);
  EXPECT_EQ(dev.log.back().ids, (std::vector<int32_t>{9}));
  auto st = s.stats("a");
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->weight, 5);
  EXPECT_EQ(st->max_batch_size, 2);
  EXPECT_NEAR(st->cost_estimate.at(1), 0.004, 1e-12);
  EXPECT_NEAR(st->cost_estimate.at(4), 0.004, 1e-12);
  // Warmups are not served requests and do not count as recent compute.
  EXPECT_EQ(st->dispatch_count, 1);
  EXPECT_EQ(st->requests_served, 1);
  EXPECT_NEAR(st->total_compute_seconds, 0.004, 1e-12);
}

TEST(Fifo, NoWarmupOutsideFair) {
  FakeDevice dev;
  dev.cost = {{"a", milliseconds(4)}};
  Scheduler s(dev.options(Discipline::kFifo), dev.runFn());
  ModelBatching b{{1}, {0}, {0}, {}};
  b.warmup_inputs = [](int64_t size) {
    return std::vector<Tensor>{Tensor::zeros(DType::kI32, {size, 1})};
  };
  s.addModel("a", b);
  auto f = submitAsync(s, "a", 9);
  s.start();
  ASSERT_TRUE(f.get().isOk());
  EXPECT_EQ(dev.log.size(), 1u);
}

} // namespace
} // namespace rs::scheduler
