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
  std::unique_ptr<char[]> keeper;
  {
    std::vector<std::unique_ptr<char[]>> blocks;
    for (int i = 0; i < kBlocks; ++i) {
      blocks.push_back(std::make_unique<char[]>(kBlock));
      std::memset(blocks.back().get(), 1, kBlock);
    }
    // A block above the others keeps the freed space from the top of the heap, which
    // free() would return by itself: what is left is what the arenas retain.
    keeper = std::make_unique<char[]>(64);
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
