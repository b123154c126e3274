//===- test/scheduler/scheduler_test.cc - Batching and the dispatch loop ---===//
#include "scheduler/batching.h"
#include "scheduler/scheduler.h"
#include "scheduler_test_util.h"

#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <set>

namespace rs::scheduler {
namespace {

using testing::batching;
using testing::FakeDevice;
using testing::submitAsync;

/// An i32 tensor of `rows` rows of width 2 whose values are base + i.
Tensor rowsTensor(int64_t rows, int32_t base) {
  Tensor t = Tensor::zeros(DType::kI32, {rows, 2});
  for (int64_t i = 0; i < rows * 2; ++i)
    t.mutableDataAs<int32_t>()[i] = base + static_cast<int32_t>(i);
  return t;
}

std::vector<int32_t> values(const Tensor &t) {
  return std::vector<int32_t>(t.dataAs<int32_t>(), t.dataAs<int32_t>() + t.numElements());
}

SchedulerOptions opts(bool coalescing, BatchSizePolicy sizes = BatchSizePolicy::kAll,
                      int64_t max_queue_depth = 1024) {
  SchedulerOptions o;
  o.coalescing = coalescing;
  o.batch_sizes = sizes;
  o.max_queue_depth = max_queue_depth;
  return o;
}

TEST(Batching, ChooseBatchSize) {
  std::vector<int64_t> sizes{1, 4, 8};
  EXPECT_EQ(chooseBatchSize(sizes, 1, BatchSizePolicy::kAll), 1);
  EXPECT_EQ(chooseBatchSize(sizes, 2, BatchSizePolicy::kAll), 4);
  EXPECT_EQ(chooseBatchSize(sizes, 5, BatchSizePolicy::kAll), 8);
  EXPECT_EQ(chooseBatchSize(sizes, 1, BatchSizePolicy::kLargest), 8);
}

TEST(Batching, SplitRowsIsFixedByShape) {
  auto pieces = splitRows(19, 8);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].begin, 0);
  EXPECT_EQ(pieces[1].begin, 8);
  EXPECT_EQ(pieces[2].begin, 16);
  EXPECT_EQ(pieces[2].count, 3);
}

TEST(Batching, GatherAndSliceRowsAlongInnerAxis) {
  // Shape [2, 3] with the batch on axis 1.
  Tensor a = Tensor::zeros(DType::kI32, {2, 1});
  a.mutableDataAs<int32_t>()[0] = 1;
  a.mutableDataAs<int32_t>()[1] = 2;
  Tensor b = Tensor::zeros(DType::kI32, {2, 1});
  b.mutableDataAs<int32_t>()[0] = 3;
  b.mutableDataAs<int32_t>()[1] = 4;
  std::vector<BatchPart> parts{{&a, {0, 1}}, {&b, {0, 1}}};
  Tensor g = gatherRows(parts, 1, 3);
  EXPECT_EQ(g.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(g), (std::vector<int32_t>{1, 3, 0, 2, 4, 0}));
  Tensor s = sliceRows(g, 1, {1, 1});
  EXPECT_EQ(values(s), (std::vector<int32_t>{3, 4}));
}

TEST(Batching, SliceRowsAlongTheFirstAxisIsAViewOfTheBatch) {
  Tensor g = Tensor::zeros(DType::kI32, {4, 2});
  for (int i = 0; i < 8; ++i)
    g.mutableDataAs<int32_t>()[i] = i;
  Tensor s = sliceRows(g, 0, {1, 2});
  EXPECT_EQ(s.shape(), (Shape{2, 2}));
  EXPECT_EQ(s.data(), g.data() + 2 * 4); // no copy
  EXPECT_EQ(values(s), (std::vector<int32_t>{2, 3, 4, 5}));
  // Unit dims before the batch axis keep the rows contiguous: a view too.
  Tensor u = g.reshaped({1, 4, 2});
  Tensor su = sliceRows(u, 1, {3, 1});
  EXPECT_EQ(su.data(), g.data() + 6 * 4);
  EXPECT_EQ(values(su), (std::vector<int32_t>{6, 7}));
}

TEST(Scheduler, CoalescesQueuedRequestsIntoSmallestSize) {
  FakeDevice dev;
  dev.hold = true;
  Scheduler s(opts(true), dev.runFn());
  s.addModel("m", batching({1, 4, 8}));
  s.start();
  auto f0 = submitAsync(s, "m", rowsTensor(1, 0)); // runs alone, held at the gate
  while (s.queueDepth("m") != 0)
    std::this_thread::yield();
  auto f1 = submitAsync(s, "m", rowsTensor(1, 100));
  auto f2 = submitAsync(s, "m", rowsTensor(2, 200));
  dev.gate.set_value();
  auto r0 = f0.get(), r1 = f1.get(), r2 = f2.get();
  ASSERT_TRUE(r0.isOk());
  ASSERT_TRUE(r1.isOk()) << r1.status().toString();
  EXPECT_EQ(values((*r1)[0]), (std::vector<int32_t>{200, 202}));
  EXPECT_EQ(values((*r2)[0]), (std::vector<int32_t>{400, 402, 404, 406}));
  EXPECT_EQ(dev.batch_sizes, (std::vector<int64_t>{1, 4}));
}

TEST(Scheduler, AnswerThreadsDeliverEveryAnswerOfACoalescedBatch) {
  FakeDevice dev;
  dev.hold = true;
  SchedulerOptions o = opts(true);
  o.answer_threads = 3;
  Scheduler s(o, dev.runFn());
  s.addModel("m", batching({1, 16}));
  s.start();
  auto first = submitAsync(s, "m", rowsTensor(1, 0)); // runs alone, held at the gate
  while (s.queueDepth("m") != 0)
    std::this_thread::yield();
  // 16 one-row requests queue meanwhile: one b16 batch whose answers go out on 4 threads.
  std::mutex mu;
  std::set<std::thread::id> threads;
  std::vector<std::future<Result<std::vector<Tensor>>>> answers;
  for (int32_t i = 0; i < 16; ++i) {
    auto p = std::make_shared<std::promise<Result<std::vector<Tensor>>>>();
    answers.push_back(p->get_future());
    s.submit("m", {rowsTensor(1, 10 * i)}, std::nullopt, [p, &mu, &threads](auto r) {
      {
        std::lock_guard<std::mutex> lock(mu);
        threads.insert(std::this_thread::get_id());
      }
      p->set_value(std::move(r));
    });
  }
  dev.gate.set_value();
  ASSERT_TRUE(first.get().isOk());
  for (int32_t i = 0; i < 16; ++i) {
    auto r = answers[static_cast<size_t>(i)].get();
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    EXPECT_EQ(values((*r)[0]), (std::vector<int32_t>{20 * i, 20 * i + 2})) << "request " << i;
  }
  EXPECT_EQ(dev.batch_sizes, (std::vector<int64_t>{1, 16}));
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_GE(threads.size(), 2u); // the dispatch thread and at least one answer thread
}

TEST(Scheduler, NoCoalescingServesOneRequestPerDispatch) {
  FakeDevice dev;
  dev.hold = true;
  Scheduler s(opts(false), dev.runFn());
  s.addModel("m", batching({1, 4, 8}));
  s.start();
  auto f0 = submitAsync(s, "m", rowsTensor(1, 0));
  while (s.queueDepth("m") != 0)
    std::this_thread::yield();
  auto f1 = submitAsync(s, "m", rowsTensor(1, 100));
  auto f2 = submitAsync(s, "m", rowsTensor(2, 200));
  dev.gate.set_value();
  EXPECT_TRUE(f0.get().isOk());
  EXPECT_TRUE(f1.get().isOk());
  EXPECT_TRUE(f2.get().isOk());
  EXPECT_EQ(dev.batch_sizes, (std::vector<int64_t>{1, 1, 4}));
}

TEST(Scheduler, LargestPolicyAlwaysRunsLargestProgram) {
  FakeDevice dev;
  Scheduler s(opts(false, BatchSizePolicy::kLargest), dev.runFn());
  s.addModel("m", batching({1, 4, 8}));
  s.start();
  auto r = submitAsync(s, "m", rowsTensor(3, 10)).get();
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ((*r)[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(values((*r)[0]), (std::vector<int32_t>{20, 22, 24, 26, 28, 30}));
  EXPECT_EQ(dev.batch_sizes, (std::vector<int64_t>{8}));
}

TEST(Scheduler, SplitsLargeRequestsTheSameWayEveryTime) {
  FakeDevice dev;
  Scheduler s(opts(true), dev.runFn());
  s.addModel("m", batching({1, 4, 8}));
  s.start();
  Tensor in = rowsTensor(19, 0);
  auto r = submitAsync(s, "m", in).get();
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  ASSERT_EQ((*r)[0].shape(), (Shape{19, 2}));
  auto v = values((*r)[0]);
  for (int32_t i = 0; i < 38; ++i)
    ASSERT_EQ(v[static_cast<size_t>(i)], 2 * i);
  EXPECT_EQ(dev.batch_sizes, (std::vector<int64_t>{8, 8, 4}));
}

TEST(Scheduler, FullQueueIsResourceExhausted) {
  FakeDevice dev;
  dev.hold = true;
  Scheduler s(opts(false, BatchSizePolicy::kAll, 1), dev.runFn());
  s.addModel("m", batching({1}));
  s.start();
  auto f0 = submitAsync(s, "m", rowsTensor(1, 0));
  while (s.queueDepth("m") != 0)
    std::this_thread::yield();
  auto f1 = submitAsync(s, "m", rowsTensor(1, 0));
  auto r2 = submitAsync(s, "m", rowsTensor(1, 0)).get();
  EXPECT_EQ(r2.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(r2.status().message(), "model 'm': queue is full (1 requests)");
  dev.gate.set_value();
  EXPECT_TRUE(f0.get().isOk());
  EXPECT_TRUE(f1.get().isOk());
  // Recovered once the load drops: the queue takes and serves requests again.
  EXPECT_EQ(s.queueDepth("m"), 0u);
  EXPECT_TRUE(submitAsync(s, "m", rowsTensor(1, 0)).get().isOk());
  EXPECT_TRUE(submitAsync(s, "m", rowsTensor(1, 0)).get().isOk());
}

TEST(Scheduler, ExpiredRequestsAreDroppedBeforeExecution) {
  FakeDevice dev;
  Scheduler s({}, dev.runFn());
  s.addModel("m", batching({1}));
  s.start();
  auto r = submitAsync(s, "m", rowsTensor(1, 0), Clock::now() - std::chrono::seconds(1)).get();
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(dev.batch_sizes.empty());
}

TEST(Scheduler, UnknownAndRemovedModelsAreNotFound) {
  FakeDevice dev;
  dev.hold = true;
  Scheduler s(opts(false), dev.runFn());
  s.addModel("m", batching({1}));
  s.start();
  EXPECT_EQ(submitAsync(s, "x", rowsTensor(1, 0)).get().status().code(), StatusCode::kNotFound);
  auto f0 = submitAsync(s, "m", rowsTensor(1, 0));
  while (s.queueDepth("m") != 0)
    std::this_thread::yield();
  auto f1 = submitAsync(s, "m", rowsTensor(1, 0));
  s.removeModel("m");
  EXPECT_EQ(f1.get().status().code(), StatusCode::kNotFound);
  dev.gate.set_value();
  EXPECT_TRUE(f0.get().isOk());
}

TEST(Scheduler, StopFailsQueuedRequests) {
  FakeDevice dev;
  Scheduler s({}, dev.runFn());
  s.addModel("m", batching({1}));
  // Not started: the request stays queued until stop().
  auto f = submitAsync(s, "m", rowsTensor(1, 0));
  s.stop();
  EXPECT_EQ(f.get().status().code(), StatusCode::kUnavailable);
}

} // namespace
} // namespace rs::scheduler
