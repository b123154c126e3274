//===- test/gateway/evidence_test.cc - The gateway's deployment evidence ---===//
//
// GET /v2/evidence and reactant_evidence.EvidenceService/DeploymentEvidence on the gateway
// (docs/validation.md "Gateway contract"): the gateway's identity plus every worker's own
// document, byte for byte what the worker serves, in configuration order; a worker that
// does not answer is listed with its error.
//
//===----------------------------------------------------------------------===//
#include "fleet.h"

#include "protocol/proto/reactant_evidence_v1.grpc.pb.h"
#include "server/evidence.h"
#include "support/build_info.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace rs::gateway::testing {
namespace {

using nlohmann::json;

class GatewayEvidence : public ::testing::Test {
protected:
  void SetUp() override {
    Result<std::unique_ptr<Fleet>> f = Fleet::start(2, {"iris_mlp"});
    ASSERT_TRUE(f.isOk()) << f.status().toString();
    fleet_ = std::move(f).value();
    Result<std::unique_ptr<TestGateway>> g =
        TestGateway::start(fleet_->gatewayYaml("  mode: round_robin\n"));
    ASSERT_TRUE(g.isOk()) << g.status().toString();
    gw_ = std::move(g).value();
  }

  /// The document over HTTP (status 200 checked).
  json overHttp() {
    int status = 0;
    const std::string body = httpGet(gw_->gateway().httpPort(), "/v2/evidence", &status);
    EXPECT_EQ(status, 200) << body;
    return json::parse(body, nullptr, false);
  }

  /// The document over gRPC (format checked).
  json overGrpc() {
    auto stub = reactant_evidence::EvidenceService::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(gw_->gateway().grpcPort()),
                            grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    reactant_evidence::DeploymentEvidenceRequest req;
    reactant_evidence::DeploymentEvidenceResponse resp;
    grpc::Status s = stub->DeploymentEvidence(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(resp.format(), "reactant-server gateway evidence 1");
    return json::parse(resp.json(), nullptr, false);
  }

  std::string address(size_t i) {
    return "127.0.0.1:" + std::to_string(fleet_->worker(i).front->port());
  }

  std::unique_ptr<Fleet> fleet_;
  std::unique_ptr<TestGateway> gw_;
};

TEST_F(GatewayEvidence, ServesItsIdentityAndEveryWorkersDocumentOverBothProtocols) {
  const json doc = overHttp();
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc["format"], "reactant-server gateway evidence 1");
  EXPECT_EQ(doc["gateway"]["build"], protocol::buildEvidence(thisBuild()));
  EXPECT_EQ(doc["gateway"]["build"]["version"], thisBuild().version);
  const json &instance = doc["gateway"]["instance"];
  EXPECT_EQ(instance["pid"], static_cast<int64_t>(::getpid()));
  EXPECT_EQ(instance["hostname"], protocol::evidenceHostName());
  EXPECT_EQ(instance["listen"]["grpc"], "127.0.0.1:" + std::to_string(gw_->gateway().grpcPort()));
  EXPECT_EQ(instance["listen"]["http"], "127.0.0.1:" + std::to_string(gw_->gateway().httpPort()));
  EXPECT_EQ(instance["config"]["scheduling.mode"], "round_robin");
  EXPECT_EQ(instance["started_at"].get<std::string>().size(), 20u); // "2026-11-29T18:00:00Z"

  ASSERT_EQ(doc["workers"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(i);
    const json &w = doc["workers"][i];
    EXPECT_EQ(w["worker"], fleet_->worker(i).name);
    EXPECT_EQ(w["address"], address(i));
    EXPECT_FALSE(w.contains("error"));
    // The worker's own document, as it serves it itself.
    EXPECT_EQ(w["evidence"], json::parse(fleet_->worker(i).worker->evidenceJson()));
    EXPECT_EQ(w["evidence"]["format"], "reactant-server evidence 1");
    EXPECT_EQ(w["evidence"]["models"]["iris_mlp"]["state"], "ready");
  }
  EXPECT_EQ(doc["workers"][0]["worker"], "w0");
  EXPECT_EQ(doc["workers"][1]["worker"], "w1");
  // The workers of one deployment: the same identity outside `instance`.
  EXPECT_TRUE(
      protocol::diffEvidence(doc["workers"][0]["evidence"], doc["workers"][1]["evidence"]).empty());

  // gRPC serves the same document.
  EXPECT_EQ(overGrpc(), doc);
}

TEST_F(GatewayEvidence, AWorkerThatDoesNotAnswerIsListedWithItsError) {
  const std::string down_address = address(1);
  fleet_->worker(1).front->shutdown();
  for (const json &doc : {overHttp(), overGrpc()}) {
    ASSERT_EQ(doc["workers"].size(), 2u);
    EXPECT_EQ(doc["workers"][0]["evidence"], json::parse(fleet_->worker(0).worker->evidenceJson()));
    const json &down = doc["workers"][1];
    EXPECT_EQ(down["worker"], "w1");
    EXPECT_EQ(down["address"], down_address);
    EXPECT_FALSE(down.contains("evidence"));
    EXPECT_EQ(down["error"].get<std::string>().rfind("DeploymentEvidence: UNAVAILABLE: ", 0), 0u)
        << down["error"];
  }
}

} // namespace
} // namespace rs::gateway::testing
