//===- test/lifecycle/repository_control_test.cc - control over a live worker ===//
//
// A real worker on a temporary repository, driven over gRPC and HTTP: the KServe
// repository extension under model_control_mode explicit (and its refusal otherwise),
// Triton ModelStatistics, the control service's SetModelPolicy and SetModelResidency, and
// the LRU weight cache under a budget smaller than the models' weights.
//
//===----------------------------------------------------------------------===//
#include "bundle_files.h"
#include "client/load_generator.h"
#include "live_worker.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <thread>

namespace rs {
namespace {

using namespace lifecycle_test;

const char *kExplicit = "  model_control_mode: explicit\n"
                        "  scheduler: {coalescing: false, discipline: fifo}\n";

/// The gRPC RepositoryIndex as "name:STATE" entries.
std::vector<std::string> grpcIndex(LiveWorker &w) {
  inference::RepositoryIndexRequest req;
  inference::RepositoryIndexResponse resp;
  grpc::ClientContext ctx;
  EXPECT_TRUE(w.inference->RepositoryIndex(&ctx, req, &resp).ok());
  std::vector<std::string> out;
  for (const auto &m : resp.models())
    out.push_back(m.name() + ":" + m.state());
  return out;
}

grpc::Status grpcLoad(LiveWorker &w, const std::string &name, bool load) {
  grpc::ClientContext ctx;
  if (load) {
    inference::RepositoryModelLoadRequest req;
    inference::RepositoryModelLoadResponse resp;
    req.set_model_name(name);
    return w.inference->RepositoryModelLoad(&ctx, req, &resp);
  }
  inference::RepositoryModelUnloadRequest req;
  inference::RepositoryModelUnloadResponse resp;
  req.set_model_name(name);
  return w.inference->RepositoryModelUnload(&ctx, req, &resp);
}

TEST(RepositoryControl, ExplicitModeLoadsAndUnloadsOverGrpcAndHttp) {
  TempRepo tmp;
  tmp.copyBundle("iris_mlp", "a");
  tmp.copyBundle("iris_mlp", "b");
  auto live = LiveWorker::start(tmp.root.string(), kExplicit);
  ASSERT_TRUE(live.isOk()) << live.status().toString();
  LiveWorker &w = **live;
  auto reference = w.infer("a", irisInput());
  ASSERT_TRUE(reference.isOk()) << reference.status().toString();
  EXPECT_EQ(grpcIndex(w), (std::vector<std::string>{"a:READY", "b:READY"}));

  // gRPC unload, HTTP load.
  ASSERT_TRUE(grpcLoad(w, "a", false).ok());
  // An unloaded model stays in the index (Triton's semantics).
  EXPECT_EQ(grpcIndex(w), (std::vector<std::string>{"a:UNAVAILABLE", "b:READY"}));
  EXPECT_EQ(w.infer("a", irisInput()).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(w.infer("b", irisInput()).isOk());
  auto http = w.http();
  auto res = http->Post("/v2/repository/models/a/load", "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  auto again = w.infer("a", irisInput());
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  EXPECT_EQ(*again, *reference);
  res = http->Post("/v2/repository/index", "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(nlohmann::json::parse(res->body),
            nlohmann::json::parse(R"([{"name":"a","version":"1","state":"READY"},
                                      {"name":"b","version":"1","state":"READY"}])"));

  // HTTP unload, gRPC load.
  res = http->Post("/v2/repository/models/b/unload", "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  res = http->Post("/v2/repository/index", R"({"ready": true})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(nlohmann::json::parse(res->body),
            nlohmann::json::parse(R"([{"name":"a","version":"1","state":"READY"}])"));
  EXPECT_EQ(w.infer("b", irisInput()).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(grpcLoad(w, "b", true).ok());
  EXPECT_TRUE(w.infer("b", irisInput()).isOk());

  // Errors: no such bundle, an empty name, unloading what is not loaded, a bad body.
  grpc::Status missing = grpcLoad(w, "missing", true);
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(missing.error_message(),
            "RepositoryModelLoad: no bundle directory 'missing' in the model repository");
  EXPECT_EQ(grpcLoad(w, "", true).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(grpcLoad(w, "missing", false).error_code(), grpc::StatusCode::NOT_FOUND);
  res = http->Post("/v2/repository/models/missing/load", "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  res = http->Post("/v2/repository/index", "[1]", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);

  // A load of a broken bundle fails and is reported; the model is known, not ready.
  std::filesystem::remove(tmp.root / "a" / "model.b8.mlir");
  ASSERT_TRUE(grpcLoad(w, "a", false).ok());
  grpc::Status broken = grpcLoad(w, "a", true);
  EXPECT_EQ(broken.error_code(), grpc::StatusCode::NOT_FOUND) << broken.error_message();
  EXPECT_EQ(grpcIndex(w), (std::vector<std::string>{"a:UNAVAILABLE", "b:READY"}));
}

TEST(RepositoryControl, LoadAndUnloadByRequestNeedExplicitMode) {
  TempRepo tmp;
  tmp.copyBundle("iris_mlp", "a");
  auto live = LiveWorker::start(tmp.root.string(), "  model_control_mode: dynamic\n");
  ASSERT_TRUE(live.isOk()) << live.status().toString();
  LiveWorker &w = **live;
  grpc::Status s = grpcLoad(w, "a", true);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "RepositoryModelLoad of 'a': model_control_mode is not explicit "
                               "(load and unload by request need model_control_mode: explicit)");
  EXPECT_EQ(grpcLoad(w, "a", false).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  auto res = w.http()->Post("/v2/repository/models/a/unload", "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_TRUE(w.infer("a", irisInput()).isOk()); // still loaded
}

TEST(RepositoryControl, ModelStatisticsCountEveryPhaseOverGrpcAndHttp) {
  TempRepo tmp;
  tmp.copyBundle("iris_mlp", "a");
  tmp.copyBundle("iris_mlp", "b");
  auto live = LiveWorker::start(tmp.root.string(), kExplicit);
  ASSERT_TRUE(live.isOk()) << live.status().toString();
  LiveWorker &w = **live;
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(w.infer("a", irisInput()).isOk());
  // One failure: a request whose input has the wrong width.
  EXPECT_EQ(w.infer("a", Tensor::zeros(DType::kF32, {1, 5})).status().code(),
            StatusCode::kInvalidArgument);

  inference::ModelStatisticsRequest req;
  req.set_name("a");
  inference::ModelStatisticsResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(w.inference->ModelStatistics(&ctx, req, &resp).ok());
  ASSERT_EQ(resp.model_stats_size(), 1);
  const inference::ModelStatistics &m = resp.model_stats(0);
  EXPECT_EQ(m.name(), "a");
  EXPECT_EQ(m.version(), "1");
  EXPECT_EQ(m.inference_count(), 5u);
  EXPECT_EQ(m.execution_count(), 5u);
  EXPECT_GT(m.last_inference(), 0u);
  const inference::InferStatistics &is = m.inference_stats();
  EXPECT_EQ(is.success().count(), 5u);
  EXPECT_EQ(is.fail().count(), 1u);
  EXPECT_EQ(is.queue().count(), 5u);
  EXPECT_EQ(is.compute_input().count(), 5u);
  EXPECT_EQ(is.compute_infer().count(), 5u);
  EXPECT_EQ(is.compute_output().count(), 5u);
  EXPECT_GT(is.compute_infer().ns(), 0u);
  EXPECT_GT(is.success().ns(), 0u);
  ASSERT_EQ(m.batch_stats_size(), 1); // coalescing off: every request ran at b1
  EXPECT_EQ(m.batch_stats(0).batch_size(), 1u);
  EXPECT_EQ(m.batch_stats(0).compute_infer().count(), 5u);

  auto http = w.http();
  auto res = http->Get("/v2/models/a/stats");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const nlohmann::json j = nlohmann::json::parse(res->body);
  ASSERT_EQ(j["model_stats"].size(), 1u);
  const nlohmann::json &a = j["model_stats"][0];
  EXPECT_EQ(a["name"], "a");
  EXPECT_EQ(a["inference_count"], 5);
  EXPECT_EQ(a["execution_count"], 5);
  EXPECT_EQ(a["inference_stats"]["success"]["count"], 5);
  EXPECT_EQ(a["inference_stats"]["fail"]["count"], 1);
  EXPECT_EQ(a["inference_stats"]["compute_output"]["count"], 5);
  EXPECT_EQ(a["inference_stats"]["compute_infer"]["ns"], is.compute_infer().ns());
  EXPECT_EQ(a["batch_stats"][0]["batch_size"], 1);
  res = http->Get("/v2/models/stats");
  ASSERT_TRUE(res);
  const nlohmann::json all = nlohmann::json::parse(res->body);
  ASSERT_EQ(all["model_stats"].size(), 2u);
  EXPECT_EQ(all["model_stats"][1]["name"], "b");
  EXPECT_EQ(all["model_stats"][1]["inference_count"], 0);
  res = http->Get("/v2/models/missing/stats");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  grpc::ClientContext ctx2;
  req.set_name("missing");
  EXPECT_EQ(w.inference->ModelStatistics(&ctx2, req, &resp).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

/// ModelControlStatus's entry for `name` (fails the test when absent).
reactant_control::ModelStatus controlEntry(LiveWorker &w, const std::string &name,
                                           reactant_control::ModelControlStatusResponse *all) {
  grpc::ClientContext ctx;
  EXPECT_TRUE(w.control->ModelControlStatus(&ctx, {}, all).ok());
  for (const auto &m : all->models())
    if (m.name() == name)
      return m;
  ADD_FAILURE() << "no ModelControlStatus entry for " << name;
  return {};
}

TEST(RepositoryControl, SetModelPolicyAndResidency) {
  TempRepo tmp;
  tmp.copyBundle("iris_mlp", "a");
  auto live = LiveWorker::start(tmp.root.string(), kExplicit);
  ASSERT_TRUE(live.isOk()) << live.status().toString();
  LiveWorker &w = **live;

  auto policy = [&](const std::string &name, bool has, double weight) {
    reactant_control::SetModelPolicyRequest req;
    req.set_name(name);
    req.set_has_weight(has);
    req.set_weight(weight);
    reactant_control::SetModelPolicyResponse resp;
    grpc::ClientContext ctx;
    return w.control->SetModelPolicy(&ctx, req, &resp);
  };
  EXPECT_TRUE(policy("a", true, 3.0).ok());
  reactant_control::ModelControlStatusResponse all;
  EXPECT_EQ(controlEntry(w, "a", &all).weight(), 3.0);
  EXPECT_EQ(all.residency_mode(), "externally_managed");
  EXPECT_TRUE(policy("a", false, 0).ok()); // nothing to change
  EXPECT_EQ(controlEntry(w, "a", &all).weight(), 3.0);
  EXPECT_EQ(policy("a", true, 0).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(policy("missing", true, 2).error_code(), grpc::StatusCode::NOT_FOUND);

  auto residency = [&](const std::string &name, reactant_control::Residency target,
                       reactant_control::SetModelResidencyResponse *resp) {
    reactant_control::SetModelResidencyRequest req;
    req.set_name(name);
    req.set_target(target);
    grpc::ClientContext ctx;
    return w.control->SetModelResidency(&ctx, req, resp);
  };
  reactant_control::SetModelResidencyResponse resp;
  // The cache is on (host memory is the arena): the default floor is PINNED_SYSTEM.
  EXPECT_EQ(controlEntry(w, "a", &all).residency(), reactant_control::PINNED_SYSTEM);
  EXPECT_EQ(residency("a", reactant_control::RESIDENCY_UNSPECIFIED, &resp).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(residency("missing", reactant_control::UNPINNED, &resp).error_code(),
            grpc::StatusCode::NOT_FOUND);
  ASSERT_TRUE(residency("a", reactant_control::PINNED_DEVICE, &resp).ok());
  EXPECT_EQ(resp.residency(), reactant_control::PINNED_DEVICE);
  reactant_control::ModelStatus a = controlEntry(w, "a", &all);
  EXPECT_EQ(a.residency(), reactant_control::PINNED_DEVICE);
  EXPECT_TRUE(a.device_resident());
  EXPECT_EQ(w.worker->service().weightCache().stats().pinned_bytes, 524);
  ASSERT_TRUE(residency("a", reactant_control::UNPINNED, &resp).ok());
  EXPECT_EQ(controlEntry(w, "a", &all).residency(), reactant_control::UNPINNED);
  EXPECT_EQ(w.worker->service().weightCache().stats().pinned_bytes, 0);
  EXPECT_TRUE(w.infer("a", irisInput()).isOk());
  EXPECT_TRUE(controlEntry(w, "a", &all).device_resident());
}

TEST(RepositoryControl, SetModelResidencyIsRefusedOnASelfManagedWorker) {
  TempRepo tmp;
  tmp.copyBundle("iris_mlp", "a");
  auto live = LiveWorker::start(tmp.root.string(), "  model_control_mode: static\n");
  ASSERT_TRUE(live.isOk()) << live.status().toString();
  LiveWorker &w = **live;
  reactant_control::SetModelResidencyRequest req;
  req.set_name("a");
  req.set_target(reactant_control::PINNED_DEVICE);
  reactant_control::SetModelResidencyResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = w.control->SetModelResidency(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "SetModelResidency of 'a': this worker manages residency itself "
                               "(model_control_mode is not explicit)");
}

TEST(WeightCache, BudgetSmallerThanTheModelsEvictsAndServesEveryModel) {
  TempRepo tmp;
  for (const char *name : {"m0", "m1", "m2"})
    tmp.copyBundle("iris_mlp", name); // 524 weight bytes each
  // Arena 1200 bytes: pool = min(1.0, 1 - 0.1) x 1200 = 1080, room for two models of three.
  auto live = LiveWorker::start(tmp.root.string(),
                                "  model_control_mode: static\n"
                                "  scheduler: {coalescing: false, discipline: fifo}\n",
                                1200);
  ASSERT_TRUE(live.isOk()) << live.status().toString();
  LiveWorker &w = **live;
  const runtime::WeightCache &cache = w.worker->service().weightCache();
  EXPECT_EQ(cache.stats().max_bytes, 1080);
  auto reference = w.infer("m0", irisInput());
  ASSERT_TRUE(reference.isOk()) << reference.status().toString();

  // Round robin from one client: every dispatch after the first two evicts the LRU model.
  for (int round = 0; round < 10; ++round)
    for (const char *name : {"m0", "m1", "m2"}) {
      auto r = w.infer(name, irisInput());
      ASSERT_TRUE(r.isOk()) << name << ": " << r.status().toString();
      EXPECT_EQ(*r, *reference) << name;
    }
  runtime::WeightCacheStats s = cache.stats();
  std::printf("weight cache round robin: %lld loads, %lld evicts, peak resident %lld of %lld "
              "bytes\n",
              static_cast<long long>(s.loads), static_cast<long long>(s.evicts),
              static_cast<long long>(s.peak_resident_bytes), static_cast<long long>(s.max_bytes));
  // m0 (load), then round 0: m0 (hit), m1 (load), m2 (load, evicts m0); each of the
  // other 9 rounds loads and evicts three times.
  EXPECT_EQ(s.loads, 30);
  EXPECT_EQ(s.evicts, 28);
  EXPECT_EQ(s.peak_resident_bytes, 1048);
  EXPECT_EQ(s.resident_bytes, 1048);

  // Three clients at once, one per model.
  std::atomic<int64_t> ok{0}, failed{0};
  std::vector<std::thread> clients;
  for (const char *name : {"m0", "m1", "m2"})
    clients.emplace_back([&, name] {
      for (int i = 0; i < 40; ++i) {
        auto r = w.infer(name, irisInput());
        ++(r.isOk() && *r == *reference ? ok : failed);
      }
    });
  for (auto &t : clients)
    t.join();
  s = cache.stats();
  std::printf("weight cache, 3 clients: %lld ok, %lld failed, %lld loads, %lld evicts, peak "
              "resident %lld of %lld bytes\n",
              static_cast<long long>(ok.load()), static_cast<long long>(failed.load()),
              static_cast<long long>(s.loads), static_cast<long long>(s.evicts),
              static_cast<long long>(s.peak_resident_bytes), static_cast<long long>(s.max_bytes));
  EXPECT_EQ(ok.load(), 120);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_LE(s.peak_resident_bytes, s.max_bytes);
  EXPECT_GE(s.evicts, 28);

  // The same figures on /metrics.
  httplib::Client metrics("127.0.0.1", w.worker->metricsPort());
  auto res = metrics.Get("/metrics");
  ASSERT_TRUE(res);
  const std::string w0 = "{gpu=\"\",worker=\"worker0\"}";
  EXPECT_EQ(client::scrapeValue(res->body, "worker_weight_evicts_total" + w0),
            static_cast<double>(s.evicts));
  EXPECT_EQ(client::scrapeValue(res->body, "worker_weight_loads_total" + w0),
            static_cast<double>(s.loads));
  EXPECT_EQ(client::scrapeValue(res->body, "worker_weight_cache_max_bytes" + w0), 1080.0);
  EXPECT_EQ(client::scrapeValue(res->body, "worker_weight_pool_bytes" + w0), 1080.0);
  EXPECT_EQ(client::scrapeValue(res->body, "worker_weight_cache_peak_resident_bytes" + w0),
            static_cast<double>(s.peak_resident_bytes));
  EXPECT_EQ(client::scrapeValue(res->body, "worker_weight_cache_resident_bytes" + w0), 1048.0);
}

} // namespace
} // namespace rs
