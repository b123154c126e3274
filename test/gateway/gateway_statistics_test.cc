//===- test/gateway/gateway_statistics_test.cc - ModelStatistics through the gateway ===//
//
// Triton's statistics extension asked of a gateway over two workers that both serve
// iris_mlp (protocol_fleet.h): after N requests spread over the workers, the gateway's
// answer over gRPC and HTTP, for the model and for every model, is the sum of the two
// workers' own statistics, with inference_count and execution_count exactly N; an unknown
// model or version is NOT_FOUND / 404. Each test starts its own fleet, so counts start at 0.
//
//===----------------------------------------------------------------------===//
#include "protocol_fleet.h"

#include <nlohmann/json.hpp>

namespace rs::gateway::testing {
namespace {

class GatewayStatisticsTest : public ProtocolFleetTest {
protected:
  /// ModelStatistics of `model` (and `version`) through the gateway over gRPC.
  static grpc::Status statistics(const std::string &model, inference::ModelStatisticsResponse *out,
                                 const std::string &version = "") {
    grpc::ClientContext ctx;
    inference::ModelStatisticsRequest req;
    req.set_name(model);
    req.set_version(version);
    return gw_->stub().ModelStatistics(&ctx, req, out);
  }

  /// Worker `i`'s own statistics of iris_mlp.
  static protocol::ModelStatistics own(size_t i) {
    Result<std::vector<protocol::ModelStatistics>> s =
        fleet_->worker(i).worker->service().modelStatistics(kIris);
    EXPECT_TRUE(s.isOk() && s->size() == 1u);
    return s.isOk() && !s->empty() ? s->front() : protocol::ModelStatistics{};
  }
};

TEST_F(GatewayStatisticsTest, ModelStatisticsAreTheSumOverTheWorkers) {
  inference::ModelStatisticsResponse before;
  ASSERT_TRUE(statistics(kIris, &before).ok());
  ASSERT_EQ(before.model_stats_size(), 1);
  EXPECT_EQ(before.model_stats(0).inference_count(), 0u);

  // 4 requests over gRPC and 2 over HTTP, one row each; round_robin spreads them.
  constexpr uint64_t kRequests = 6;
  for (int i = 0; i < 4; ++i) {
    grpc::ClientContext ctx;
    inference::ModelInferResponse reply;
    grpc::Status s = gw_->stub().ModelInfer(&ctx, iris("g" + std::to_string(i), 1), &reply);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  httplib::Client cli = http();
  for (int i = 0; i < 2; ++i) {
    auto r = cli.Post("/v2/models/iris_mlp/infer",
                      R"({"inputs":[{"name":"features","datatype":"FP32","shape":[1,4],)"
                      R"("data":[1,2,3,4]}]})",
                      "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
  }

  const protocol::ModelStatistics w0 = own(0), w1 = own(1);
  EXPECT_GT(w0.inference_count, 0u); // both workers served some, so the answer is a sum
  EXPECT_GT(w1.inference_count, 0u);
  EXPECT_EQ(w0.inference_count + w1.inference_count, kRequests);

  // gRPC: the model by name, and every model (empty name): the same one entry.
  for (const std::string &name : {std::string(kIris), std::string()}) {
    inference::ModelStatisticsResponse resp;
    grpc::Status s = statistics(name, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_EQ(resp.model_stats_size(), 1) << "name '" << name << "'";
    const inference::ModelStatistics &m = resp.model_stats(0);
    EXPECT_EQ(m.name(), kIris);
    EXPECT_EQ(m.version(), "1");
    EXPECT_EQ(m.inference_count(), kRequests);
    EXPECT_EQ(m.execution_count(), kRequests);
    EXPECT_EQ(m.last_inference(), std::max(w0.last_inference_ms, w1.last_inference_ms));
    const inference::InferStatistics &is = m.inference_stats();
    EXPECT_EQ(is.success().count(), kRequests);
    EXPECT_EQ(is.success().ns(), w0.success.ns + w1.success.ns);
    EXPECT_EQ(is.fail().count(), 0u);
    EXPECT_EQ(is.queue().count(), kRequests);
    EXPECT_EQ(is.queue().ns(), w0.queue.ns + w1.queue.ns);
    EXPECT_EQ(is.compute_infer().count(), kRequests);
    EXPECT_EQ(is.compute_infer().ns(), w0.compute_infer.ns + w1.compute_infer.ns);
    EXPECT_EQ(is.compute_input().ns(), w0.compute_input.ns + w1.compute_input.ns);
    EXPECT_EQ(is.compute_output().ns(), w0.compute_output.ns + w1.compute_output.ns);
    ASSERT_EQ(m.batch_stats_size(), 1);
    EXPECT_EQ(m.batch_stats(0).batch_size(), 1u);
    EXPECT_EQ(m.batch_stats(0).compute_infer().count(), kRequests);
  }

  // HTTP: the same numbers in Triton's JSON.
  for (const char *path : {"/v2/models/iris_mlp/stats", "/v2/models/stats"}) {
    auto r = cli.Get(path);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << path << ": " << r->body;
    nlohmann::json body = nlohmann::json::parse(r->body, nullptr, false);
    ASSERT_TRUE(body.is_object()) << r->body;
    ASSERT_EQ(body["model_stats"].size(), 1u) << r->body;
    nlohmann::json &m = body["model_stats"][0];
    EXPECT_EQ(m["name"], kIris);
    EXPECT_EQ(m["inference_count"], kRequests);
    EXPECT_EQ(m["execution_count"], kRequests);
    EXPECT_EQ(m["inference_stats"]["success"]["count"], kRequests);
    EXPECT_EQ(m["inference_stats"]["success"]["ns"], w0.success.ns + w1.success.ns);
    EXPECT_EQ(m["inference_stats"]["compute_infer"]["ns"],
              w0.compute_infer.ns + w1.compute_infer.ns);
    EXPECT_EQ(m["batch_stats"][0]["batch_size"], 1);
    EXPECT_EQ(m["batch_stats"][0]["compute_infer"]["count"], kRequests);
  }
}

TEST_F(GatewayStatisticsTest, UnknownModelOrVersionIsNotFound) {
  inference::ModelStatisticsResponse resp;
  grpc::Status s = statistics("nope", &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "model 'nope' is not served by any worker");
  s = statistics(kIris, &resp, "2");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "model 'iris_mlp' has no version '2' (its one version is '1'; an "
                               "empty version names it too)");

  httplib::Client cli = http();
  auto r = cli.Get("/v2/models/nope/stats");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(nlohmann::json::parse(r->body, nullptr, false).value("error", ""),
            "model 'nope' is not served by any worker");
  r = cli.Get("/v2/models/iris_mlp/versions/2/stats");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404) << r->body;
}

} // namespace
} // namespace rs::gateway::testing
