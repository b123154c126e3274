//===- test/server/worker_metrics_test.cc - Per-model series and forgetting -===//
//
// WorkerMetrics caches each model's per-request series; forgetModel() must drop the cache
// with the series, so a model loaded again under the same name counts from zero, and a
// series appears only once it has been used (as without the cache).
//
//===----------------------------------------------------------------------===//
#include "server/worker_metrics.h"

#include <gtest/gtest.h>

#include <string>

namespace rs::server {
namespace {

/// Renders `metrics` with no models loaded.
std::string render(WorkerMetrics &metrics) {
  runtime::ModelRepository repository(nullptr, runtime::ModelRepositoryOptions{});
  scheduler::Scheduler scheduler(scheduler::SchedulerOptions{}, nullptr);
  return metrics.render(repository, scheduler, MetricsSnapshot{});
}

/// The value of the series line starting with `series` followed by a space, or "" if none.
std::string valueOf(const std::string &text, const std::string &series) {
  size_t at = 0;
  while ((at = text.find(series, at)) != std::string::npos) {
    const bool line_start = at == 0 || text[at - 1] == '\n';
    const size_t end = at + series.size();
    if (line_start && end < text.size() && text[end] == ' ')
      return text.substr(end + 1, text.find('\n', end) - end - 1);
    at = end;
  }
  return "";
}

TEST(WorkerMetrics, ForgetModelDropsCachedSeries) {
  WorkerMetrics metrics("w0");
  const std::string ok = R"(worker_requests_total{gpu="",worker="w0",model="m",status="OK"})";
  metrics.requestFinished("m", StatusCode::kOk, 0.001);
  metrics.requestFinished("m", StatusCode::kOk, 0.002);
  scheduler::DispatchStats d;
  d.model = "m";
  d.rows = 2;
  d.queue_wait_seconds = {0.0001, 0.0002};
  metrics.observeDispatch(d);
  std::string text = render(metrics);
  EXPECT_EQ(valueOf(text, ok), "2") << text;
  EXPECT_EQ(valueOf(text, R"(worker_dispatch_total{gpu="",worker="w0",model="m"})"), "1") << text;

  metrics.forgetModel("m");
  text = render(metrics);
  EXPECT_EQ(text.find(R"(model="m")"), std::string::npos) << text;

  metrics.requestFinished("m", StatusCode::kOk, 0.001);
  text = render(metrics);
  EXPECT_EQ(valueOf(text, ok), "1") << text;
  // Only what was used since: no dispatch series yet.
  EXPECT_EQ(valueOf(text, R"(worker_dispatch_total{gpu="",worker="w0",model="m"})"), "") << text;
}

TEST(WorkerMetrics, SeriesAppearOnlyOnUse) {
  WorkerMetrics metrics("w0");
  metrics.requestRejected("x", StatusCode::kInvalidArgument);
  const std::string text = render(metrics);
  EXPECT_EQ(
      valueOf(text,
              R"(worker_requests_total{gpu="",worker="w0",model="x",status="INVALID_ARGUMENT"})"),
      "1")
      << text;
  EXPECT_EQ(text.find(R"(worker_requests_served_total{gpu="",worker="w0",model="x"})"),
            std::string::npos)
      << text;
}

/// `worker_request_stage_seconds_total` of model "m" and `stage` in `text`.
std::string stageOf(const std::string &text, const std::string &stage) {
  return valueOf(text,
                 R"(worker_request_stage_seconds_total{gpu="",worker="w0",model="m",stage=")" +
                     stage + R"("})");
}

TEST(WorkerMetrics, StagesSumOverTheRequestsOfADispatch) {
  WorkerMetrics metrics("w0");
  scheduler::DispatchStats d;
  d.model = "m";
  d.rows = 2;
  d.queue_wait_seconds = {0.25, 0.5};
  d.input_seconds = 0.125;
  d.compute_seconds = 1.0;
  d.output_seconds = 0.0625;
  d.run_profile.upload_seconds = 0.25;
  d.run_profile.execute_seconds = 0.5;
  d.run_profile.readback_seconds = 0.125;
  d.run_profile.filled = true;
  metrics.observeDispatch(d);
  metrics.observeRequestStages("m", 0.5, 0.25);
  metrics.observeRequestStages("m", 0.25, 0.125);
  std::string text = render(metrics);
  EXPECT_EQ(stageOf(text, "decode"), "0.75") << text;
  EXPECT_EQ(stageOf(text, "queue"), "0.75") << text;
  EXPECT_EQ(stageOf(text, "gather"), "0.25") << text;
  EXPECT_EQ(stageOf(text, "upload"), "0.5") << text;
  // What the backend's split leaves of the run (1 - 0.25 - 0.125) counts as execute.
  EXPECT_EQ(stageOf(text, "execute"), "1.25") << text;
  EXPECT_EQ(stageOf(text, "readback"), "0.25") << text;
  EXPECT_EQ(stageOf(text, "scatter"), "0.125") << text;
  EXPECT_EQ(stageOf(text, "encode"), "0.375") << text;

  metrics.forgetModel("m");
  text = render(metrics);
  EXPECT_EQ(text.find("worker_request_stage_seconds_total{"), std::string::npos) << text;
}

TEST(WorkerMetrics, WithoutTheBackendsSplitTheRunIsExecute) {
  WorkerMetrics metrics("w0");
  scheduler::DispatchStats d;
  d.model = "m";
  d.rows = 1;
  d.queue_wait_seconds = {0.5};
  d.compute_seconds = 0.75;
  metrics.observeDispatch(d);
  const std::string text = render(metrics);
  EXPECT_EQ(stageOf(text, "execute"), "0.75") << text;
  EXPECT_EQ(stageOf(text, "queue"), "0.5") << text;
  // Stages that took no time are not exported.
  EXPECT_EQ(stageOf(text, "upload"), "") << text;
  EXPECT_EQ(stageOf(text, "readback"), "") << text;
}

} // namespace
} // namespace rs::server
