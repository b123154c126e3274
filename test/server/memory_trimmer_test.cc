//===- test/server/memory_trimmer_test.cc - Freed heap memory goes back -----===//
#include "server/memory_trimmer.h"
#include "server/process_stats.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

namespace rs::server {
namespace {

constexpr size_t kBlock = 64 << 10; // below glibc's mmap threshold: served by the arena
constexpr int kBlocks = 2048;       // 128 MiB

TEST(MemoryTrimmer, FreedArenaMemoryIsReturnedOnceAndSteadyServingIsLeftAlone) {
  MemoryTrimmer trimmer({.interval = std::chrono::hours(1), .threshold_bytes = 64 << 20});
  EXPECT_FALSE(trimmer.check()); // nothing large freed yet
  // Each block is followed by a small one that stays: no freed block can merge into the
  // top of the heap, which free() would return by itself, so what is freed stays in the arena.
  std::vector<std::unique_ptr<char[]>> pins;
  {
    std::vector<std::unique_ptr<char[]>> blocks;
    blocks.reserve(kBlocks);
    pins.reserve(kBlocks);
    for (int i = 0; i < kBlocks; ++i) {
      blocks.push_back(std::make_unique<char[]>(kBlock));
      std::memset(blocks.back().get(), 1, kBlock);
      pins.push_back(std::make_unique<char[]>(64));
    }
  }
  const double before = readProcessStats().resident_bytes;
  EXPECT_TRUE(trimmer.check());
  const double after = readProcessStats().resident_bytes;
  EXPECT_LT(after, before - 100.0 * (1 << 20)) << "before " << before << " after " << after;
  EXPECT_FALSE(trimmer.check()); // resident memory has not grown since the trim
  EXPECT_EQ(trimmer.trims(), 1);
}

} // namespace
} // namespace rs::server
