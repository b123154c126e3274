//===- test/lifecycle/orchestrator_test.cc - What orchestrators probe ------===//
//
// The worker as Kubernetes and KServe see it (docs/operations.md "Readiness"): liveness
// on the metrics port before any model loads; a bad new bundle leaves the worker ready
// (the model UNAVAILABLE with a bundle-relative reason, counted and gauged); a failed
// reload keeps the loaded version serving and READY with the failure as its reason; an
// unloaded model stays in the index as UNAVAILABLE and ModelReady answers false.
//
//===----------------------------------------------------------------------===//
#include "bundle_files.h"
#include "live_worker.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

namespace rs {
namespace {

using namespace lifecycle_test;

const char *kExplicit = "  model_control_mode: explicit\n";

/// The status of GET `path` on 127.0.0.1:`port`, 0 when nothing answers.
int httpStatus(int port, const std::string &path) {
  httplib::Client c("127.0.0.1", port);
  auto r = c.Get(path);
  return r ? r->status : 0;
}

/// The HTTP repository index, parsed.
nlohmann::json httpIndex(LiveWorker &w) {
  auto res = w.http()->Post("/v2/repository/index", "", "application/json");
  EXPECT_TRUE(res);
  return res ? nlohmann::json::parse(res->body) : nlohmann::json();
}

/// gRPC ModelReady of `name`: "true", "false" or the error code's number.
std::string grpcModelReady(LiveWorker &w, const std::string &name) {
  inference::ModelReadyRequest req;
  req.set_name(name);
  inference::ModelReadyResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = w.inference->ModelReady(&ctx, req, &resp);
  if (!s.ok())
    return std::to_string(s.error_code());
  return resp.ready() ? "true" : "false";
}

/// The line of `scrape` that starts with `series` (up to the value), or "".
std::string seriesLine(const std::string &scrape, const std::string &series) {
  std::istringstream in(scrape);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(series, 0) == 0)
      return line;
  return "";
}

/// `dir`/weights.safetensors cut to half its size.
void truncateWeights(const fs::path &dir) {
  const fs::path w = dir / "weights.safetensors";
  fs::resize_file(w, fs::file_size(w) / 2);
}

TEST(Orchestrator, LivenessAnswersOnTheMetricsPortBeforeAnyModelLoads) {
  TempRepo tmp;
  tmp.copyBundle("iris_mlp", "iris");
  const std::string yaml = "model_repo: \"" + tmp.root.string() +
                           "\"\nbase_port: 18001\nmetrics_base_port: 18002\nglobal:\n"
                           "  endpoints: {host: 127.0.0.1, http_port: 18000}\n";
  auto cfg = testing::firstWorker(yaml, "<orchestrator>");
  ASSERT_TRUE(cfg.isOk()) << cfg.status().toString();
  server::Worker *started = nullptr;
  int healthz = 0, live = 0, readyz = 0;
  server::WorkerOptions o{.config = *cfg, .ephemeral_ports = true};
  o.before_models_load = [&] {
    const int port = started->metricsPort();
    healthz = httpStatus(port, "/healthz");
    live = httpStatus(port, "/v2/health/live");
    readyz = httpStatus(port, "/readyz");
  };
  server::Worker worker(std::move(o));
  started = &worker;
  ASSERT_TRUE(worker.start().isOk());
  EXPECT_EQ(healthz, 200);
  EXPECT_EQ(live, 200);
  EXPECT_EQ(readyz, 503); // nothing loaded yet
  EXPECT_EQ(httpStatus(worker.metricsPort(), "/readyz"), 200);
  EXPECT_EQ(httpStatus(worker.metricsPort(), "/v2/health/live"), 200);
  worker.shutdown();
}

TEST(Orchestrator, ABadNewBundleLeavesTheWorkerReadyAndIsCountedWithItsReason) {
  TempRepo tmp;
  tmp.copyBundle("iris_mlp", "iris");
  truncateWeights(tmp.copyBundle("iris_mlp", "broken"));
  auto live = LiveWorker::start(tmp.root.string(), "");
  ASSERT_TRUE(live.isOk()) << live.status().toString();
  LiveWorker &w = **live;
  EXPECT_EQ(httpStatus(w.worker->metricsPort(), "/readyz"), 200);
  EXPECT_EQ(w.http()->Get("/v2/health/ready")->status, 200);
  EXPECT_TRUE(w.infer("iris", irisInput()).isOk());
  EXPECT_EQ(grpcModelReady(w, "broken"), "false");
  const nlohmann::json index = httpIndex(w);
  ASSERT_EQ(index.size(), 2u) << index.dump();
  EXPECT_EQ(index[0]["name"], "broken");
  EXPECT_EQ(index[0]["state"], "UNAVAILABLE");
  const std::string reason = index[0]["reason"];
  // The reason names the file inside the bundle, never the server's directory.
  EXPECT_EQ(reason.rfind("weights.safetensors: ", 0), 0u) << reason;
  EXPECT_EQ(reason.find(tmp.root.string()), std::string::npos) << reason;
  EXPECT_EQ(index[1], nlohmann::json::parse(R"({"name":"iris","version":"1","state":"READY"})"));
  const std::string scrape = w.harness->scrape();
  EXPECT_NE(seriesLine(scrape, "worker_model_load_failures_total{gpu=\"\",worker=\"worker0\","
                               "model=\"broken\",reason=\"DATA_LOSS\"} 1"),
            "")
      << scrape;
  EXPECT_NE(seriesLine(scrape, "worker_model_state{gpu=\"\",worker=\"worker0\",model=\"broken\","
                               "state=\"UNAVAILABLE\"} 1"),
            "");
  EXPECT_NE(seriesLine(scrape, "worker_model_state{gpu=\"\",worker=\"worker0\",model=\"iris\","
                               "state=\"READY\"} 1"),
            "");
  EXPECT_NE(seriesLine(scrape, "worker_model_state{gpu=\"\",worker=\"worker0\",model=\"iris\","
                               "state=\"UNAVAILABLE\"} 0"),
            "");
}

TEST(Orchestrator, AFailedReloadKeepsServingAndTheIndexShowsReadyWithTheReason) {
  TempRepo tmp;
  const fs::path dir = tmp.copyBundle("iris_mlp", "iris");
  auto live = LiveWorker::start(tmp.root.string(), kExplicit);
  ASSERT_TRUE(live.isOk()) << live.status().toString();
  LiveWorker &w = **live;
  auto before = w.infer("iris", irisInput());
  ASSERT_TRUE(before.isOk());
  std::ofstream(dir / "manifest.yaml", std::ios::trunc) << "format_version: [not a manifest\n";
  auto res = w.http()->Post("/v2/repository/models/iris/load", "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400) << res->body;
  EXPECT_EQ(res->body.find(tmp.root.string()), std::string::npos) << res->body;
  auto after = w.infer("iris", irisInput());
  ASSERT_TRUE(after.isOk()) << after.status().toString();
  EXPECT_EQ(*after, *before);
  const nlohmann::json index = httpIndex(w);
  ASSERT_EQ(index.size(), 1u);
  EXPECT_EQ(index[0]["state"], "READY");
  EXPECT_EQ(nlohmann::json::parse(res->body)["error"], index[0]["reason"]);
  EXPECT_EQ(grpcModelReady(w, "iris"), "true");
  EXPECT_NE(seriesLine(w.harness->scrape(),
                       "worker_model_load_failures_total{gpu=\"\",worker=\"worker0\","
                       "model=\"iris\",reason=\"INVALID_ARGUMENT\"} 1"),
            "");
}

TEST(Orchestrator, AnUnloadedModelStaysInTheIndexAsUnavailable) {
  TempRepo tmp;
  tmp.copyBundle("iris_mlp", "iris");
  auto live = LiveWorker::start(tmp.root.string(), kExplicit);
  ASSERT_TRUE(live.isOk()) << live.status().toString();
  LiveWorker &w = **live;
  auto res = w.http()->Post("/v2/repository/models/iris/unload", "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(httpIndex(w), nlohmann::json::parse(R"([{"name":"iris","version":"1",
                                                     "state":"UNAVAILABLE","reason":"unloaded"}])"));
  EXPECT_EQ(grpcModelReady(w, "iris"), "false");
  res = w.http()->Get("/v2/models/iris/ready");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  // Unloading again succeeds (Triton); a load brings it back.
  res = w.http()->Post("/v2/repository/models/iris/unload", "", "application/json");
  EXPECT_EQ(res->status, 200) << res->body;
  res = w.http()->Post("/v2/repository/models/iris/load", "", "application/json");
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(grpcModelReady(w, "iris"), "true");
  EXPECT_TRUE(w.infer("iris", irisInput()).isOk());
}

} // namespace
} // namespace rs
