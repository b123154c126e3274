//===- test/gateway/gateway_protocols_test.cc - Triton's gRPC extensions through the gateway ===//
//
// ModelConfig over gRPC and HTTP (the worker's answer, NOT_FOUND / 404 for an unknown model
// or version), ModelStreamInfer (one answer per request in order, each forwarded like a
// unary ModelInfer, a failed one carrying its error while the stream goes on),
// grpc.health.v1.Health Check and Watch, and server reflection, asked of a gateway
// (protocol_fleet.h).
//
//===----------------------------------------------------------------------===//
#include "protocol_fleet.h"

#include "common/model_stream.h"
#include "common/raw_grpc.h"
#include "protocol/model_config.h"
#include "protocol/proto/model_config.pb.h"

#include <nlohmann/json.hpp>

#include <set>

namespace rs::gateway::testing {
namespace {

using rs::testing::healthCheck;
using rs::testing::HealthWatch;
using rs::testing::ServingStatus;

class GatewayProtocolsTest : public ProtocolFleetTest {};

// ---- ModelConfig ------------------------------------------------------------------------

TEST_F(GatewayProtocolsTest, ModelConfigOverGrpcIsTheWorkers) {
  Result<protocol::ModelConfiguration> own = fleet_->worker(0).worker->service().modelConfig(kIris);
  ASSERT_TRUE(own.isOk()) << own.status().toString();
  inference::ModelConfig expected;
  protocol::encodeModelConfig(*own, &expected);
  grpc::ClientContext ctx;
  inference::ModelConfigRequest req;
  req.set_name(kIris);
  inference::ModelConfigResponse resp;
  grpc::Status s = gw_->stub().ModelConfig(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.config().SerializeAsString(), expected.SerializeAsString());
  EXPECT_EQ(resp.config().name(), kIris);
  EXPECT_EQ(resp.config().max_batch_size(), 32);
  ASSERT_EQ(resp.config().input_size(), 1);
  EXPECT_EQ(resp.config().input(0).name(), "features");
  EXPECT_EQ(resp.config().input(0).data_type(), inference::TYPE_FP32);
  EXPECT_EQ(std::vector<int64_t>(resp.config().input(0).dims().begin(),
                                 resp.config().input(0).dims().end()),
            (std::vector<int64_t>{4}));
  EXPECT_EQ(std::vector<int32_t>(resp.config().dynamic_batching().preferred_batch_size().begin(),
                                 resp.config().dynamic_batching().preferred_batch_size().end()),
            (std::vector<int32_t>{1, 8, 32}));
}

TEST_F(GatewayProtocolsTest, ModelConfigOfAnUnknownModelOrVersionIsNotFound) {
  auto config = [](const std::string &model, const std::string &version) {
    grpc::ClientContext ctx;
    inference::ModelConfigRequest req;
    req.set_name(model);
    req.set_version(version);
    inference::ModelConfigResponse resp;
    return gw_->stub().ModelConfig(&ctx, req, &resp);
  };
  grpc::Status s = config("nope", "");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "model 'nope' is not served by any worker");
  s = config(kIris, "2");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "model 'iris_mlp' has no version '2' (its one version is '1'; an "
                               "empty version names it too)");
  s = config("", "");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "model name is empty");
}

TEST_F(GatewayProtocolsTest, ModelConfigOverHttpIsTheWorkersJson) {
  Result<protocol::ModelConfiguration> own = fleet_->worker(1).worker->service().modelConfig(kIris);
  ASSERT_TRUE(own.isOk()) << own.status().toString();
  httplib::Client cli = http();
  httplib::Result r = cli.Get("/v2/models/iris_mlp/config");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, protocol::modelConfigJson(*own));
  r = cli.Get("/v2/models/iris_mlp/versions/1/config");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, protocol::modelConfigJson(*own));
  r = cli.Get("/v2/models/nope/config");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(nlohmann::json::parse(r->body),
            nlohmann::json({{"error", "model 'nope' is not served by any worker"}}));
}

// ---- ModelStreamInfer -------------------------------------------------------------------

TEST_F(GatewayProtocolsTest, StreamAnswersEachRequestInOrder) {
  std::vector<inference::ModelInferRequest> requests = {iris("a", 0.25f), iris("b", 0.5f),
                                                        iris("c", 0.75f), iris("d", 1.0f)};
  requests[1].mutable_inputs(0)->set_shape(1, 3); // [1,3] of 16 bytes: the worker refuses it
  requests[2].set_model_name("nope");             // no worker serves it
  std::vector<inference::ModelInferResponse> unary(4);
  for (int i : {0, 3}) {
    grpc::ClientContext ctx;
    ASSERT_TRUE(gw_->stub().ModelInfer(&ctx, requests[i], &unary[i]).ok());
  }
  const std::string before = gw_->gateway().renderMetrics();
  // Twice over, all written before any is read: the stream pipelines.
  const rs::testing::StreamAnswers got = rs::testing::pipelineStream(gw_->stub(), requests, 2);
  ASSERT_EQ(got.answers.size(), 8u);
  for (size_t k = 0; k < got.answers.size(); ++k) {
    const inference::ModelStreamInferResponse &answer = got.answers[k];
    const size_t i = k % requests.size();
    SCOPED_TRACE("answer " + std::to_string(k));
    EXPECT_EQ(answer.infer_response().id(), requests[i].id());
    switch (i) {
    case 1:
      EXPECT_EQ(answer.infer_response().model_name(), kIris);
      EXPECT_EQ(answer.error_message(),
                "model 'iris_mlp', request 'b': input 'features': raw content has 16 bytes but "
                "shape [1,3] of FP32 needs 12 bytes");
      EXPECT_EQ(answer.infer_response().outputs_size(), 0);
      break;
    case 2:
      EXPECT_EQ(answer.infer_response().model_name(), "nope");
      EXPECT_EQ(answer.error_message(), "model 'nope' is not served by any ready worker");
      break;
    default:
      EXPECT_EQ(answer.error_message(), "");
      EXPECT_EQ(answer.infer_response().SerializeAsString(), unary[i].SerializeAsString());
    }
  }
  EXPECT_TRUE(got.finished.ok()) << got.finished.error_message();
  // Each request was one forwarded call, counted under the stream's rpc.
  const std::string after = gw_->gateway().renderMetrics();
  auto count = [](const std::string &text, const std::string &model, const std::string &status) {
    return sampleValue(text, "gateway_requests_total",
                       {{"rpc", "ModelStreamInfer"}, {"model", model}, {"status", status}});
  };
  EXPECT_EQ(count(after, kIris, "OK") - count(before, kIris, "OK"), 4);
  EXPECT_EQ(count(after, kIris, "InvalidArgument") - count(before, kIris, "InvalidArgument"), 2);
  EXPECT_EQ(count(after, "nope", "NotFound") - count(before, "nope", "NotFound"), 2);
}

TEST_F(GatewayProtocolsTest, AStreamWithoutAnswersEndsOkOrCancelled) {
  struct Case {
    int written;
    bool cancel;
    grpc::StatusCode ends;
  };
  for (const Case &c :
       {Case{0, false, grpc::StatusCode::OK}, Case{8, true, grpc::StatusCode::CANCELLED}}) {
    grpc::ClientContext ctx;
    auto stream = gw_->stub().ModelStreamInfer(&ctx);
    for (int i = 0; i < c.written; ++i)
      ASSERT_TRUE(stream->Write(iris("x" + std::to_string(i), 0.5f)));
    if (c.cancel) {
      ctx.TryCancel();
    } else {
      stream->WritesDone();
      inference::ModelStreamInferResponse none;
      EXPECT_FALSE(stream->Read(&none));
    }
    EXPECT_EQ(stream->Finish().error_code(), c.ends) << c.written << " written";
  }
  // The gateway goes on serving streams after the cancelled one.
  const rs::testing::StreamAnswers after =
      rs::testing::pipelineStream(gw_->stub(), {iris("after", 0.5f)}, 1);
  EXPECT_TRUE(after.finished.ok()) << after.finished.error_message();
  ASSERT_EQ(after.answers.size(), 1u);
  EXPECT_EQ(after.answers[0].error_message(), "");
  EXPECT_EQ(after.answers[0].infer_response().id(), "after");
}

// ---- grpc.health.v1.Health and reflection -----------------------------------------------

TEST_F(GatewayProtocolsTest, HealthCheckAndWatchAnswerAsAWorkerDoes) {
  struct Case {
    std::string service;
    grpc::StatusCode check_code;
    ServingStatus checked;
    ServingStatus watched; // the first status Watch sends
  };
  const std::vector<Case> cases = {
      {"", grpc::StatusCode::OK, ServingStatus::kServing, ServingStatus::kServing},
      {kIris, grpc::StatusCode::OK, ServingStatus::kServing, ServingStatus::kServing},
      {kEcho, grpc::StatusCode::OK, ServingStatus::kServing, ServingStatus::kServing},
      {"nope", grpc::StatusCode::NOT_FOUND, ServingStatus::kUnknown,
       ServingStatus::kServiceUnknown},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE("service '" + c.service + "'");
    ServingStatus checked = ServingStatus::kUnknown;
    EXPECT_EQ(healthCheck(*channel_, c.service, &checked).error_code(), c.check_code);
    EXPECT_EQ(checked, c.checked);
    HealthWatch watch(*channel_, c.service);
    ServingStatus watched = ServingStatus::kUnknown;
    ASSERT_TRUE(watch.next(&watched));
    EXPECT_EQ(watched, c.watched);
  }
}

TEST_F(GatewayProtocolsTest, HealthFollowsTheWorkers) {
  // A gateway of its own over a fleet of its own, whose one worker goes away.
  Result<std::unique_ptr<Fleet>> f = Fleet::start(1, {kIris});
  ASSERT_TRUE(f.isOk()) << f.status().toString();
  Result<std::unique_ptr<TestGateway>> g =
      TestGateway::start((*f)->gatewayYaml("  mode: round_robin\n"));
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string((*g)->gateway().grpcPort()),
                                     grpc::InsecureChannelCredentials());
  HealthWatch overall(channel, "");
  HealthWatch model(channel, kIris);
  ServingStatus status = ServingStatus::kUnknown;
  ASSERT_TRUE(overall.next(&status));
  EXPECT_EQ(status, ServingStatus::kServing);
  ASSERT_TRUE(model.next(&status));
  EXPECT_EQ(status, ServingStatus::kServing);
  (*f)->worker(0).front->shutdown();
  // The next probe (0.2 s) finds the worker gone and sends the change (a watch may repeat
  // the status it sent before the change).
  for (HealthWatch *watch : {&overall, &model}) {
    do
      ASSERT_TRUE(watch->next(&status));
    while (status == ServingStatus::kServing);
    EXPECT_EQ(status, ServingStatus::kNotServing);
  }
  ServingStatus checked = ServingStatus::kUnknown;
  ASSERT_TRUE(healthCheck(channel, kIris, &checked).ok());
  EXPECT_EQ(checked, ServingStatus::kNotServing);
}

TEST_F(GatewayProtocolsTest, ReflectionListsEveryServiceAndItsFiles) {
  using rs::testing::Reflection;
  using Names = std::set<std::string>;
  for (Reflection version : {Reflection::kV1alpha, Reflection::kV1}) {
    SCOPED_TRACE(version == Reflection::kV1 ? "v1" : "v1alpha");
    std::vector<std::string> services, files;
    grpc::Status listed = rs::testing::reflectionServices(*channel_, &services, version);
    grpc::Status described = rs::testing::reflectionFilesOf(
        *channel_, "inference.GRPCInferenceService", &files, version);
    ASSERT_TRUE(listed.ok()) << listed.error_message();
    ASSERT_TRUE(described.ok()) << described.error_message();
    EXPECT_EQ(
        Names(services.begin(), services.end()),
        (Names{"grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
               "grpc.reflection.v1alpha.ServerReflection", "inference.GRPCInferenceService",
               "reactant_control.GatewayControlService", "reactant_evidence.EvidenceService"}));
    EXPECT_EQ(services.size(), 6u);
    EXPECT_EQ(Names(files.begin(), files.end()),
              (Names{"grpc_service.proto", "model_config.proto"}));
    grpc::Status unknown =
        rs::testing::reflectionFilesOf(*channel_, "nope.Nothing", &files, version);
    EXPECT_EQ(unknown.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(unknown.error_message(), "Symbol not found.");
  }
}

} // namespace
} // namespace rs::gateway::testing
