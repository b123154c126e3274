//===- test/cpu/context_test.cc - The CPU executor's thread team -----------===//
//
// parallelFor() runs every tile exactly once and returns only when all have finished:
// checked with many short jobs in a row (workers spinning between them), jobs after the
// workers fell asleep, jobs from several threads at once, and nested calls from a tile.
//
//===----------------------------------------------------------------------===//
#include "cpu/context.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace rs::cpu {
namespace {

std::shared_ptr<CpuContext> context(int threads) {
  auto c = createCpuContext(CpuOptions{threads}); // a fresh context, not the shared ones
  EXPECT_TRUE(c.isOk()) << c.status().toString();
  return *c;
}

/// Runs a job of `tiles` tiles and checks each ran exactly once before parallelFor returned.
void checkJob(const CpuContext &ctx, int64_t tiles) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(tiles));
  ctx.parallelFor(tiles, [&](int64_t t) { hits[static_cast<size_t>(t)].fetch_add(1); });
  for (int64_t t = 0; t < tiles; ++t)
    ASSERT_EQ(hits[static_cast<size_t>(t)].load(), 1) << "tile " << t << " of " << tiles;
}

TEST(CpuContext, EveryTileRunsOnceInManyBackToBackJobs) {
  auto ctx = context(4);
  for (int job = 0; job < 20000; ++job)
    checkJob(*ctx, 1 + job % 37);
}

TEST(CpuContext, JobsAfterTheWorkersSleep) {
  auto ctx = context(3);
  for (int job = 0; job < 5; ++job) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5)); // past the 50 us spin
    checkJob(*ctx, 64);
  }
}

TEST(CpuContext, ConcurrentCallersAndNestedCalls) {
  auto ctx = context(4);
  std::atomic<int64_t> sum{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int job = 0; job < 2000; ++job)
        ctx->parallelFor(8, [&](int64_t) {
          // A nested call runs inline on the tile's thread.
          ctx->parallelFor(3, [&](int64_t u) { sum.fetch_add(u + 1); });
        });
    });
  for (std::thread &t : callers)
    t.join();
  EXPECT_EQ(sum.load(), int64_t{4} * 2000 * 8 * 6);
}

TEST(CpuContext, DestroysWhileWorkersSpinOrSleep) {
  for (int i = 0; i < 50; ++i) {
    auto ctx = context(4);
    checkJob(*ctx, 16);
    if (i % 2)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

} // namespace
} // namespace rs::cpu
