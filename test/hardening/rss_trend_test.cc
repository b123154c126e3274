//===- test/hardening/rss_trend_test.cc - Resident memory per minute of a run ===//
#include "client/rss_trend.h"

#include <gtest/gtest.h>

namespace rs::client {
namespace {

constexpr int64_t MiB = int64_t{1} << 20;

TEST(RssTrend, GrowthIsTheLastMinutesLowestOverTheSecondMinutesLowest) {
  // Samples every 10 s for 3 minutes: warm-up, then 50 MiB with one in-flight spike of
  // 120 MiB in each later minute, then 55 MiB in the last.
  std::vector<std::pair<double, int64_t>> s;
  for (int i = 0; i < 6; ++i)
    s.emplace_back(i * 10.0, (20 + i * 5) * MiB);
  for (int i = 6; i < 12; ++i)
    s.emplace_back(i * 10.0, (i == 8 ? 120 : 50) * MiB);
  for (int i = 12; i < 18; ++i)
    s.emplace_back(i * 10.0, (i == 15 ? 120 : 55) * MiB);
  RssTrend t = rssTrend(s);
  ASSERT_EQ(t.minutes.size(), 3u);
  EXPECT_EQ(t.minutes[1].minute, 1);
  EXPECT_EQ(t.minutes[1].samples, 6);
  EXPECT_EQ(t.minutes[1].lowest, 50 * MiB);
  EXPECT_EQ(t.minutes[1].median, 50 * MiB);
  EXPECT_EQ(t.minutes[1].highest, 120 * MiB);
  EXPECT_EQ(t.minutes[0].median, 30 * MiB); // lower middle of 20..45
  ASSERT_TRUE(t.growth);
  EXPECT_DOUBLE_EQ(*t.growth, 55.0 / 50.0 - 1);
  ASSERT_TRUE(t.peak_over_floor);
  EXPECT_DOUBLE_EQ(*t.peak_over_floor, 120.0 / 50.0 - 1);
  EXPECT_EQ(rssTrendText(t), "minute 0: 20.0/30.0/45.0, minute 1: 50.0/50.0/120.0, "
                             "minute 2: 55.0/55.0/120.0 MiB (lowest/median/highest)");
}

TEST(RssTrend, ASteadyLeakShowsInTheLowestSamples) {
  std::vector<std::pair<double, int64_t>> s;
  for (int i = 0; i < 30; ++i)
    s.emplace_back(i * 10.0, (40 + i) * MiB); // 1 MiB more every sample
  RssTrend t = rssTrend(s);
  ASSERT_TRUE(t.growth);
  // The last 60 s are 240..290 s (after 290 - 60): lowest 64 MiB; minute 1's lowest 46 MiB.
  EXPECT_DOUBLE_EQ(*t.growth, (40.0 + 24) / (40.0 + 6) - 1);
}

TEST(RssTrend, LargeRequestsInFlightAtHalfTheSamplesDoNotReadAsGrowth) {
  // A 300 s run sampled every 10 s: 62 MiB between requests, 120 MiB whenever a large request
  // is in flight. Minute 1 catches one at four of its six samples, the last 60 s at three:
  // their medians are 120 and 62 MiB by chance; the lowest samples are both 62 MiB.
  std::vector<std::pair<double, int64_t>> s;
  for (int i = 0; i <= 30; ++i) {
    const bool in_flight = (i >= 6 && i < 12) ? i % 3 != 0 : i % 2 == 0;
    s.emplace_back(i * 10.0, (in_flight ? 120 : 62) * MiB);
  }
  RssTrend t = rssTrend(s);
  EXPECT_EQ(t.minutes[1].median, 120 * MiB);
  ASSERT_EQ(t.minutes.back().minute, 5);
  EXPECT_EQ(t.minutes.back().samples, 1);
  ASSERT_TRUE(t.growth);
  EXPECT_DOUBLE_EQ(*t.growth, 0);
  EXPECT_DOUBLE_EQ(*t.peak_over_floor, 120.0 / 62.0 - 1);
}

TEST(RssTrend, RetainedMemoryUnderBombsShowsInTheFloor) {
  // The same spikes over a floor that rises from 50 to 60 MiB: 20% growth.
  std::vector<std::pair<double, int64_t>> s;
  for (int i = 0; i <= 30; ++i) {
    const int64_t floor = i < 12 ? 50 : 60;
    s.emplace_back(i * 10.0, (i % 2 == 0 ? 120 : floor) * MiB);
  }
  RssTrend t = rssTrend(s);
  ASSERT_TRUE(t.growth);
  EXPECT_DOUBLE_EQ(*t.growth, 60.0 / 50.0 - 1);
}

TEST(RssTrend, RunsWithoutASecondMinuteHaveNoGrowth) {
  EXPECT_FALSE(rssTrend({}).growth);
  EXPECT_FALSE(rssTrend({{0, MiB}, {30, MiB}}).growth);
  EXPECT_FALSE(rssTrend({{0, MiB}, {70, MiB}}).growth); // minute 1 but nothing after it
  EXPECT_TRUE(rssTrend({{0, MiB}, {70, MiB}, {130, MiB}}).growth);
}

} // namespace
} // namespace rs::client
