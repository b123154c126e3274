//===- test/scheduler/committed_test.cc - Committed requests go first -------===//
//
// submitCommitted() (scheduler.h "Committed requests"): a meta model's sub-call enters its
// model's queue ahead of the pieces that are not committed, dispatches before the
// discipline picks, still coalesces with what is queued behind it, and under edf is shed
// only past its deadline. Every test queues its requests before start(); the fake device
// advances the fake clock, so the order is deterministic.
//
//===----------------------------------------------------------------------===//
#include "scheduler/scheduler.h"

#include "fake_clock.h"
#include "scheduler_test_util.h"

#include <gtest/gtest.h>

#include <future>
#include <mutex>

namespace rs::scheduler {
namespace {

/// A fake device: logs the ids (input 0's values, padding rows included) of every dispatch
/// and advances the fake clock by 1 ms per dispatch.
struct IdDevice {
  std::shared_ptr<testing::FakeClock> clock = std::make_shared<testing::FakeClock>();
  std::mutex mu;
  std::vector<std::vector<int32_t>> log;

  RunFn runFn() {
    return [this](const std::string &, int64_t,
                  std::vector<Tensor> inputs) -> Result<std::vector<Tensor>> {
      clock->advance(std::chrono::milliseconds(1));
      std::vector<int32_t> ids;
      for (int64_t i = 0; i < inputs[0].numElements(); ++i)
        ids.push_back(inputs[0].dataAs<int32_t>()[i]);
      std::lock_guard<std::mutex> lock(mu);
      log.push_back(std::move(ids));
      return std::vector<Tensor>{inputs[0]};
    };
  }
  /// `discipline`, coalescing as given, on the fake clock.
  SchedulerOptions options(Discipline discipline, bool coalescing) {
    SchedulerOptions o;
    o.coalescing = coalescing;
    o.discipline = discipline;
    o.clock = clock;
    return o;
  }
};

using testing::idTensor;

using Future = std::future<Result<std::vector<Tensor>>>;

Future submitAs(Scheduler &s, bool committed, const std::string &model, int32_t id,
                std::optional<Clock::time_point> deadline = {}) {
  auto p = std::make_shared<std::promise<Result<std::vector<Tensor>>>>();
  Future f = p->get_future();
  auto done = [p](Result<std::vector<Tensor>> r) { p->set_value(std::move(r)); };
  if (committed)
    s.submitCommitted(model, {idTensor(id)}, deadline, done);
  else
    s.submit(model, {idTensor(id)}, deadline, done);
  return f;
}

TEST(Committed, DispatchBeforeTheDisciplineInTheirOwnOrder) {
  IdDevice dev;
  Scheduler s(dev.options(Discipline::kFifo, false), dev.runFn());
  s.addModel("a", {{1}, {0}, {0}, {}});
  s.addModel("b", {{1}, {0}, {0}, {}});
  std::vector<Future> futures;
  futures.push_back(submitAs(s, false, "a", 1));
  futures.push_back(submitAs(s, false, "a", 2));
  futures.push_back(submitAs(s, false, "b", 3));
  futures.push_back(submitAs(s, true, "b", 10));
  futures.push_back(submitAs(s, true, "b", 11));
  futures.push_back(submitAs(s, true, "a", 12));
  EXPECT_EQ(s.queueDepth("a"), 3);
  EXPECT_EQ(s.queueDepth("b"), 3);
  s.start();
  for (Future &f : futures)
    ASSERT_TRUE(f.get().isOk());
  const std::vector<std::vector<int32_t>> want = {{10}, {11}, {12}, {1}, {2}, {3}};
  EXPECT_EQ(dev.log, want);
}

TEST(Committed, CoalesceWithTheRequestsQueuedBehindThem) {
  IdDevice dev;
  Scheduler s(dev.options(Discipline::kFair, true), dev.runFn());
  s.addModel("m", {{1, 4, 8}, {0}, {0}, {}});
  std::vector<Future> futures;
  futures.push_back(submitAs(s, false, "m", 1));
  futures.push_back(submitAs(s, false, "m", 2));
  futures.push_back(submitAs(s, true, "m", 10));
  s.start();
  for (Future &f : futures)
    ASSERT_TRUE(f.get().isOk());
  // One batch of 4 rows: the committed request first, then the others, one padding row.
  const std::vector<std::vector<int32_t>> want = {{10, 1, 2, 0}};
  EXPECT_EQ(dev.log, want);
}

TEST(Committed, UnderEdfAreShedOnlyPastTheirDeadline) {
  IdDevice dev;
  Scheduler s(dev.options(Discipline::kEdf, false), dev.runFn());
  s.addModel("m", {{1}, {0}, {0}, {}});
  s.addModel("n", {{1}, {0}, {0}, {}});
  // Inside edf's laxity margin (default_cost_seconds, 10 ms, for a model whose cost is not
  // measured yet) but not past.
  const Clock::time_point deadline = dev.clock->now() + std::chrono::milliseconds(5);
  Future plain = submitAs(s, false, "n", 1, deadline);
  Future committed = submitAs(s, true, "m", 2, deadline);
  s.start();
  Result<std::vector<Tensor>> c = committed.get();
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ((*c)[0].dataAs<int32_t>()[0], 2);
  Result<std::vector<Tensor>> p = plain.get();
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), StatusCode::kDeadlineExceeded);
  const std::vector<std::vector<int32_t>> want = {{2}};
  EXPECT_EQ(dev.log, want);
}

} // namespace
} // namespace rs::scheduler
