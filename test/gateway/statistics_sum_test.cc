//===- test/gateway/statistics_sum_test.cc - Statistics summed over workers ---===//
#include "gateway/statistics_sum.h"

#include <gtest/gtest.h>

namespace rs::gateway {
namespace {

protocol::ModelStatistics stats(const std::string &name, uint64_t rows, uint64_t ns,
                                uint64_t last_ms, std::vector<uint64_t> batch_sizes) {
  protocol::ModelStatistics m;
  m.name = name;
  m.version = "1";
  m.last_inference_ms = last_ms;
  m.inference_count = rows;
  m.execution_count = rows;
  m.success = {rows, ns};
  m.fail = {1, 7};
  m.queue = {rows, ns / 2};
  m.compute_input = {rows, 1};
  m.compute_infer = {rows, ns / 4};
  m.compute_output = {rows, 2};
  for (uint64_t b : batch_sizes)
    m.batch_stats.push_back({b, {1, b}, {1, 10 * b}, {1, 100 * b}});
  return m;
}

TEST(StatisticsSumTest, AddsCountsAndDurationsPerModelAndBatchSize) {
  const std::vector<protocol::ModelStatistics> sum =
      sumModelStatistics({{stats("b", 3, 1000, 50, {1, 8}), stats("a", 1, 10, 5, {1})},
                          {stats("b", 2, 400, 70, {8, 32})}});
  ASSERT_EQ(sum.size(), 2u);
  // "a" is on one worker only: as it is.
  EXPECT_EQ(sum[0].name, "a");
  EXPECT_EQ(sum[0].inference_count, 1u);
  EXPECT_EQ(sum[0].success.ns, 10u);
  // "b" on both: every count and duration added, the latest last_inference.
  const protocol::ModelStatistics &b = sum[1];
  EXPECT_EQ(b.name, "b");
  EXPECT_EQ(b.version, "1");
  EXPECT_EQ(b.last_inference_ms, 70u);
  EXPECT_EQ(b.inference_count, 5u);
  EXPECT_EQ(b.execution_count, 5u);
  EXPECT_EQ(b.success.count, 5u);
  EXPECT_EQ(b.success.ns, 1400u);
  EXPECT_EQ(b.fail.count, 2u);
  EXPECT_EQ(b.fail.ns, 14u);
  EXPECT_EQ(b.queue.ns, 700u);
  EXPECT_EQ(b.compute_input.ns, 2u);
  EXPECT_EQ(b.compute_infer.ns, 350u);
  EXPECT_EQ(b.compute_output.ns, 4u);
  ASSERT_EQ(b.batch_stats.size(), 3u); // 1, 8 (both workers), 32; ascending
  EXPECT_EQ(b.batch_stats[0].batch_size, 1u);
  EXPECT_EQ(b.batch_stats[1].batch_size, 8u);
  EXPECT_EQ(b.batch_stats[1].compute_input.count, 2u);
  EXPECT_EQ(b.batch_stats[1].compute_infer.ns, 160u);
  EXPECT_EQ(b.batch_stats[1].compute_output.ns, 1600u);
  EXPECT_EQ(b.batch_stats[2].batch_size, 32u);
  EXPECT_EQ(b.batch_stats[2].compute_infer.count, 1u);
}

TEST(StatisticsSumTest, NoWorkersNoModels) {
  EXPECT_TRUE(sumModelStatistics({}).empty());
  EXPECT_TRUE(sumModelStatistics({{}, {}}).empty());
}

} // namespace
} // namespace rs::gateway
