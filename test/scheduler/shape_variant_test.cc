//===- test/scheduler/shape_variant_test.cc - No coalescing across shapes --===//
//
// A multi-shape model's requests differ from one variant to another on a variable axis:
// the scheduler packs only the leading run of requests whose inputs have the front
// request's dims besides the batch axis, so requests of different variants never share a
// batch (reference-system.md §4.3), and the coalescing wait does not hold a batch that a
// request of another variant behind it ends.
//
//===----------------------------------------------------------------------===//
#include "scheduler/batching.h"
#include "scheduler/scheduler.h"
#include "scheduler_test_util.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

namespace rs::scheduler {
namespace {

using testing::batching;
using testing::FakeDevice;
using testing::submitAsync;

/// `rows` rows of sequence length `seq` (an i32 [rows, seq] tensor) valued base + i.
Tensor sequences(int64_t rows, int64_t seq, int32_t base) {
  Tensor t = Tensor::zeros(DType::kI32, {rows, seq});
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.mutableDataAs<int32_t>()[i] = base + static_cast<int32_t>(i);
  return t;
}

std::vector<int32_t> values(const Tensor &t) {
  return std::vector<int32_t>(t.dataAs<int32_t>(), t.dataAs<int32_t>() + t.numElements());
}

/// Starts `s` with model "m" compiled at batch sizes 1 and 4, and submits `first`, which
/// runs at once and holds the device (closed) until dev.gate is set.
std::future<Result<std::vector<Tensor>>> startHeld(Scheduler &s, FakeDevice &dev, Tensor first) {
  dev.hold = true;
  s.addModel("m", batching({1, 4}));
  s.start();
  auto f = submitAsync(s, "m", std::move(first));
  while (s.queueDepth("m") != 0)
    std::this_thread::yield();
  return f;
}

TEST(Batching, SameRowShapeIgnoresOnlyTheBatchAxis) {
  const Tensor a = Tensor::zeros(DType::kI32, {3, 8});
  EXPECT_TRUE(sameRowShape(a, Tensor::zeros(DType::kI32, {1, 8}), 0));
  EXPECT_FALSE(sameRowShape(a, Tensor::zeros(DType::kI32, {3, 16}), 0));
  EXPECT_FALSE(sameRowShape(a, Tensor::zeros(DType::kI32, {1, 8}), -1));
  EXPECT_FALSE(sameRowShape(a, Tensor::zeros(DType::kI32, {3, 8, 1}), 0));
  EXPECT_TRUE(sameRowShape(a, Tensor::zeros(DType::kI32, {3, 2}), 1));
}

TEST(ShapeVariants, RequestsOfDifferentVariantsAreNeverBatchedTogether) {
  FakeDevice dev;
  SchedulerOptions o;
  o.discipline = Discipline::kFifo;
  Scheduler s(o, dev.runFn());
  auto first = startHeld(s, dev, sequences(1, 8, 0));
  // Queued meanwhile: two s=8 requests, two s=16 requests, then one s=8 request.
  auto a = submitAsync(s, "m", sequences(1, 8, 100));
  auto b = submitAsync(s, "m", sequences(2, 8, 200));
  auto c = submitAsync(s, "m", sequences(1, 16, 300));
  auto d = submitAsync(s, "m", sequences(1, 16, 400));
  auto e = submitAsync(s, "m", sequences(1, 8, 500));
  dev.gate.set_value();
  for (auto *f : {&first, &a, &b, &c, &d, &e}) {
    auto r = f->get();
    ASSERT_TRUE(r.isOk()) << r.status().toString();
  }
  // Each batch is the leading run of one shape, padded to a compiled size; e's s=8 row does
  // not join a and b across the s=16 requests between them.
  EXPECT_EQ(dev.shapes, (std::vector<Shape>{{1, 8}, {4, 8}, {4, 16}, {1, 8}}));
}

TEST(ShapeVariants, EveryRequestGetsItsOwnRowsBack) {
  FakeDevice dev;
  Scheduler s(SchedulerOptions{}, dev.runFn());
  auto first = startHeld(s, dev, sequences(1, 8, 0));
  auto a = submitAsync(s, "m", sequences(1, 16, 10));
  auto b = submitAsync(s, "m", sequences(1, 8, 20));
  auto c = submitAsync(s, "m", sequences(1, 16, 30));
  dev.gate.set_value();
  ASSERT_TRUE(first.get().isOk());
  auto ra = a.get(), rb = b.get(), rc = c.get();
  ASSERT_TRUE(ra.isOk() && rb.isOk() && rc.isOk());
  std::vector<int32_t> want;
  for (int32_t i = 0; i < 16; ++i)
    want.push_back(2 * (10 + i));
  EXPECT_EQ(values((*ra)[0]), want);
  EXPECT_EQ((*rb)[0].shape(), (Shape{1, 8}));
  EXPECT_EQ(values((*rb)[0])[7], 54);
  EXPECT_EQ((*rc)[0].shape(), (Shape{1, 16}));
  EXPECT_EQ(values((*rc)[0])[0], 60);
  EXPECT_EQ(dev.shapes, (std::vector<Shape>{{1, 8}, {1, 16}, {1, 8}, {1, 16}}));
}

TEST(ShapeVariants, CoalescingWaitEndsAtARequestOfAnotherVariant) {
  // With a long coalescing wait, an s=8 row followed by an s=16 row cannot grow into a
  // fuller s=8 batch: it dispatches without waiting out the delay. The s=16 row alone can
  // still grow, so it waits (until stop() fails it).
  FakeDevice dev;
  SchedulerOptions o;
  o.max_queue_delay_us = std::chrono::microseconds(3600LL * 1000 * 1000);
  Scheduler s(o, dev.runFn());
  // A full batch of 4 rows dispatches at once and holds the device.
  auto full = startHeld(s, dev, sequences(4, 8, 0));
  auto a = submitAsync(s, "m", sequences(1, 8, 100));
  auto b = submitAsync(s, "m", sequences(1, 16, 200));
  dev.gate.set_value();
  ASSERT_TRUE(full.get().isOk());
  ASSERT_TRUE(a.get().isOk()); // held for the hour if the wait ignored the shapes
  s.stop();
  EXPECT_EQ(b.get().status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(dev.shapes, (std::vector<Shape>{{4, 8}, {1, 8}}));
}

} // namespace
} // namespace rs::scheduler
