//===- test/gateway/metrics_merge_test.cc - One exposition from many --------===//
#include "gateway/metrics_merge.h"

#include <gtest/gtest.h>

namespace rs::gateway {
namespace {

TEST(MetricsMergeTest, GroupsFamiliesAndLabelsWorkers) {
  const std::string own =
      "# HELP gateway_requests_total Calls\n"
      "# TYPE gateway_requests_total counter\n"
      "gateway_requests_total{rpc=\"ModelInfer\",model=\"m\",status=\"OK\"} 3\n";
  const std::string w0 = "# HELP worker_requests_total Requests\n"
                         "# TYPE worker_requests_total counter\n"
                         "worker_requests_total{model=\"m\",status=\"OK\"} 2\n"
                         "# HELP worker_request_latency_seconds Latency\n"
                         "# TYPE worker_request_latency_seconds histogram\n"
                         "worker_request_latency_seconds_bucket{model=\"m\",le=\"0.001\"} 1\n"
                         "worker_request_latency_seconds_sum{model=\"m\"} 0.5\n"
                         "worker_request_latency_seconds_count{model=\"m\"} 2\n"
                         "worker_inflight_requests 0\n";
  // w1 already labels its series with its own name, which is kept; "old" is renamed.
  const std::string w1 = "# HELP worker_requests_total Requests (other text)\n"
                         "# TYPE worker_requests_total counter\n"
                         "worker_requests_total{model=\"m\",status=\"OK\",worker=\"w1\"} 1\n"
                         "# a comment\n"
                         "worker_inflight_requests{} 4\n"
                         "worker_models_loaded{worker=\"old\",x=\"1\"} 1\n";
  const std::string merged = mergeExpositions(own, {{"w0", w0}, {"w1", w1}});
  EXPECT_EQ(merged,
            "# HELP gateway_requests_total Calls\n"
            "# TYPE gateway_requests_total counter\n"
            "gateway_requests_total{rpc=\"ModelInfer\",model=\"m\",status=\"OK\"} 3\n"
            "# HELP worker_requests_total Requests\n"
            "# TYPE worker_requests_total counter\n"
            "worker_requests_total{worker=\"w0\",model=\"m\",status=\"OK\"} 2\n"
            "worker_requests_total{model=\"m\",status=\"OK\",worker=\"w1\"} 1\n"
            "# HELP worker_request_latency_seconds Latency\n"
            "# TYPE worker_request_latency_seconds histogram\n"
            "worker_request_latency_seconds_bucket{worker=\"w0\",model=\"m\",le=\"0.001\"} 1\n"
            "worker_request_latency_seconds_sum{worker=\"w0\",model=\"m\"} 0.5\n"
            "worker_request_latency_seconds_count{worker=\"w0\",model=\"m\"} 2\n"
            "worker_inflight_requests{worker=\"w0\"} 0\n"
            "worker_inflight_requests{worker=\"w1\"} 4\n"
            "worker_models_loaded{worker=\"w1\",exported_worker=\"old\",x=\"1\"} 1\n");
}

TEST(MetricsMergeTest, QuotedLabelValuesAreNotLabelNames) {
  // A label value containing ',worker=' must not count as a worker label.
  const std::string w = "x{path=\"a,worker=b\"} 1\n";
  EXPECT_EQ(mergeExpositions("", {{"w\"q", w}}), "x{worker=\"w\\\"q\",path=\"a,worker=b\"} 1\n");
}

} // namespace
} // namespace rs::gateway
