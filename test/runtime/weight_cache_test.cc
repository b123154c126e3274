//===- test/runtime/weight_cache_test.cc - residency floors and the LRU budget ===//
#include "runtime/weight_cache.h"

#include <gtest/gtest.h>

namespace rs::runtime {
namespace {

/// One f32 weight of `floats` elements (4 * floats bytes).
std::vector<Tensor> weightsOf(int64_t floats) { return {Tensor::zeros(DType::kF32, {floats})}; }

TEST(WeightCache, PoolIsTheFractionCappedByTheWiggle) {
  EXPECT_EQ(weightPoolBytes(1000, 1.0, 0.1), 900);
  EXPECT_EQ(weightPoolBytes(1000, 0.5, 0.1), 500);
  EXPECT_EQ(weightPoolBytes(1000, 0.0, 0.1), 0);
  EXPECT_EQ(weightPoolBytes(0, 1.0, 0.1), 0);
  EXPECT_GT(hostMemoryBytes(), 0);
}

TEST(WeightCache, LeastRecentlyUsedIsEvictedFirst) {
  WeightCache cache({1000});
  cache.add("a", weightsOf(100), Residency::kUnpinned); // 400 bytes
  cache.add("b", weightsOf(100), Residency::kPinnedSystem);
  cache.add("c", weightsOf(100), Residency::kUnpinned);
  EXPECT_FALSE(cache.resident("a")); // on demand: resident at first acquire
  ASSERT_TRUE(cache.acquire("a").isOk());
  ASSERT_TRUE(cache.acquire("b").isOk());
  ASSERT_TRUE(cache.acquire("a").isOk()); // a is now the most recent
  ASSERT_TRUE(cache.acquire("c").isOk()); // evicts b, the least recent
  EXPECT_TRUE(cache.resident("a"));
  EXPECT_FALSE(cache.resident("b"));
  EXPECT_TRUE(cache.resident("c"));
  WeightCacheStats s = cache.stats();
  EXPECT_EQ(s.loads, 3);
  EXPECT_EQ(s.evicts, 1);
  EXPECT_EQ(s.resident_bytes, 800);
  EXPECT_EQ(s.peak_resident_bytes, 800);
  EXPECT_EQ(s.max_bytes, 1000);
  EXPECT_TRUE(cache.acquire("unknown").isOk()); // ignored
}

TEST(WeightCache, PinnedDeviceIsResidentAtOnceAndShrinksTheBudget) {
  WeightCache cache({1000});
  cache.add("p", weightsOf(100), Residency::kPinnedDevice);
  EXPECT_TRUE(cache.resident("p"));
  WeightCacheStats s = cache.stats();
  EXPECT_EQ(s.pinned_bytes, 400);
  EXPECT_EQ(s.max_bytes, 600);
  cache.add("a", weightsOf(100), Residency::kUnpinned);
  cache.add("b", weightsOf(100), Residency::kUnpinned);
  ASSERT_TRUE(cache.acquire("a").isOk());
  ASSERT_TRUE(cache.acquire("b").isOk()); // 800 > 600: a goes
  EXPECT_FALSE(cache.resident("a"));
  EXPECT_TRUE(cache.resident("p"));
  // Pinning b as well leaves no on-demand room (1000 - 800 = 200 < 400): nothing to evict
  // but b itself moved out of the LRU.
  ASSERT_TRUE(cache.setResidency("b", Residency::kPinnedDevice).isOk());
  s = cache.stats();
  EXPECT_EQ(s.pinned_bytes, 800);
  EXPECT_EQ(s.max_bytes, 200);
  EXPECT_EQ(s.resident_bytes, 0);
  ASSERT_TRUE(cache.acquire("a").isOk()); // bigger than the budget: loaded anyway
  EXPECT_TRUE(cache.resident("a"));
  EXPECT_EQ(cache.stats().resident_bytes, 400);
  ASSERT_TRUE(cache.setResidency("b", Residency::kUnpinned).isOk());
  EXPECT_EQ(cache.stats().pinned_bytes, 400);
  EXPECT_FALSE(cache.resident("b"));
  EXPECT_EQ(cache.setResidency("zz", Residency::kUnpinned).code(), StatusCode::kNotFound);
}

TEST(WeightCache, RenameKeepsResidencyAndLruPlace) {
  WeightCache cache({900});
  cache.add("a", weightsOf(100), Residency::kUnpinned);
  cache.add("b", weightsOf(100), Residency::kUnpinned);
  ASSERT_TRUE(cache.acquire("a").isOk());
  ASSERT_TRUE(cache.acquire("b").isOk());
  ASSERT_TRUE(cache.rename("a", "z").isOk());
  EXPECT_TRUE(cache.resident("z"));
  EXPECT_FALSE(cache.residency("a").has_value());
  cache.add("c", weightsOf(100), Residency::kUnpinned);
  ASSERT_TRUE(cache.acquire("c").isOk()); // z (was a) is the least recent
  EXPECT_FALSE(cache.resident("z"));
  EXPECT_TRUE(cache.resident("b"));
  EXPECT_EQ(cache.rename("missing", "y").code(), StatusCode::kNotFound);
  EXPECT_EQ(cache.rename("b", "c").code(), StatusCode::kAlreadyExists);
  cache.remove("b");
  EXPECT_EQ(cache.stats().resident_bytes, 400);
  EXPECT_EQ(cache.weightBytes("c"), 400);
}

TEST(WeightCache, NoBudgetKeepsEveryModelResident) {
  WeightCache cache({0});
  cache.add("a", weightsOf(100), Residency::kUnpinned);
  cache.add("b", weightsOf(100), Residency::kPinnedSystem);
  EXPECT_TRUE(cache.resident("a"));
  EXPECT_TRUE(cache.resident("b"));
  ASSERT_TRUE(cache.acquire("a").isOk());
  WeightCacheStats s = cache.stats();
  EXPECT_EQ(s.loads, 0);
  EXPECT_EQ(s.evicts, 0);
  EXPECT_EQ(s.max_bytes, 0);
}

} // namespace
} // namespace rs::runtime
