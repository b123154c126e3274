//===- test/e2e/triton_extensions_test.cc - What Triton's tools call first -----===//
//
// A real worker serving digits_cnn (batch sizes 1, 4, 8; scheduler.max_queue_delay 250 us)
// answers what tritonclient, perf_analyzer and Model Analyzer call before anything else:
// - ModelConfig (gRPC) and GET /v2/models/{m}/config (HTTP): Triton's ModelConfig with
//   every field this server fills, exact values, and the same values over both protocols;
// - the version rule: the metadata lists version "1"; "" and "1" are accepted on every
//   route and RPC that takes a version, "2" is NOT_FOUND / 404 naming the version, and the
//   statistics and repository index carry "1";
// - ModelStreamInfer: one answer per request, in order, the bad one carrying its error
//   while the stream goes on, the good ones the bytes a unary ModelInfer gives;
// - grpc.health.v1.Health Check and Watch (overall and per model; a drain turns both
//   NOT_SERVING) and gRPC server reflection (v1alpha and v1) listing every service.
//
//===----------------------------------------------------------------------===//
#include "harness.h"

#include "common/model_stream.h"
#include "common/raw_grpc.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>

namespace rs::e2e {
namespace {

using rs::testing::healthCheck;
using rs::testing::HealthWatch;
using rs::testing::pipelineStream;
using rs::testing::Reflection;
using rs::testing::reflectionFilesOf;
using rs::testing::reflectionServices;
using rs::testing::ServingStatus;
using rs::testing::StreamAnswers;

class TritonExtensionsTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    auto s = TestServer::start(kBundles, "  models_include: [digits_cnn]\n"
                                         "  scheduler: {max_queue_delay_microseconds: 250}\n");
    ASSERT_TRUE(s.isOk()) << s.status().toString();
    server_ = std::move(s).value().release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  /// A digits request of one image whose pixels are all `pixel`.
  static inference::ModelInferRequest digits(const std::string &id, float pixel,
                                             const std::string &version = "") {
    inference::ModelInferRequest msg;
    msg.set_model_name("digits_cnn");
    msg.set_model_version(version);
    msg.set_id(id);
    auto *in = msg.add_inputs();
    in->set_name("image");
    in->set_datatype("FP32");
    for (int64_t d : {1, 8, 8, 1})
      in->add_shape(d);
    std::string raw(64 * sizeof(float), '\0');
    for (int i = 0; i < 64; ++i)
      std::memcpy(raw.data() + i * sizeof(float), &pixel, sizeof(float));
    msg.add_raw_input_contents(raw);
    return msg;
  }

  static TestServer *server_;
};

TestServer *TritonExtensionsTest::server_ = nullptr;

const char *kDigitsConfig = R"({
  "name": "digits_cnn", "platform": "reactant_stablehlo", "backend": "reactant", "runtime": "",
  "version_policy": {"latest": {"num_versions": 1}},
  "max_batch_size": 8,
  "input": [{"name": "image", "data_type": "TYPE_FP32", "format": "FORMAT_NONE",
             "dims": [8, 8, 1], "is_shape_tensor": false, "allow_ragged_batch": false,
             "optional": false}],
  "output": [{"name": "logits", "data_type": "TYPE_FP32", "dims": [10],
              "label_filename": "", "is_shape_tensor": false},
             {"name": "probs", "data_type": "TYPE_FP32", "dims": [10],
              "label_filename": "", "is_shape_tensor": false}],
  "dynamic_batching": {"preferred_batch_size": [1, 4, 8], "max_queue_delay_microseconds": 250,
                       "preserve_ordering": false, "priority_levels": 0,
                       "default_priority_level": 0},
  "instance_group": [{"name": "digits_cnn_0", "kind": "KIND_CPU", "count": 1, "gpus": [],
                      "passive": false, "host_policy": ""}],
  "default_model_filename": "",
  "model_transaction_policy": {"decoupled": false},
  "response_cache": {"enable": false}})";

TEST_F(TritonExtensionsTest, ModelConfigOverGrpc) {
  for (const char *version : {"", "1"}) {
    inference::ModelConfigRequest req;
    req.set_name("digits_cnn");
    req.set_version(version);
    inference::ModelConfigResponse resp;
    grpc::ClientContext ctx;
    grpc::Status s = server_->stub().ModelConfig(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    const inference::ModelConfig &c = resp.config();
    EXPECT_EQ(c.name(), "digits_cnn");
    EXPECT_EQ(c.platform(), "reactant_stablehlo");
    EXPECT_EQ(c.backend(), "reactant");
    EXPECT_EQ(c.max_batch_size(), 8);
    EXPECT_EQ(c.version_policy().latest().num_versions(), 1u);
    ASSERT_EQ(c.input_size(), 1);
    EXPECT_EQ(c.input(0).name(), "image");
    EXPECT_EQ(c.input(0).data_type(), inference::TYPE_FP32);
    EXPECT_EQ(std::vector<int64_t>(c.input(0).dims().begin(), c.input(0).dims().end()),
              (std::vector<int64_t>{8, 8, 1}));
    ASSERT_EQ(c.output_size(), 2);
    EXPECT_EQ(c.output(0).name(), "logits");
    EXPECT_EQ(c.output(1).name(), "probs");
    for (const inference::ModelOutput &o : c.output()) {
      EXPECT_EQ(o.data_type(), inference::TYPE_FP32);
      EXPECT_EQ(std::vector<int64_t>(o.dims().begin(), o.dims().end()), (std::vector<int64_t>{10}));
    }
    ASSERT_TRUE(c.has_dynamic_batching());
    EXPECT_EQ(std::vector<int32_t>(c.dynamic_batching().preferred_batch_size().begin(),
                                   c.dynamic_batching().preferred_batch_size().end()),
              (std::vector<int32_t>{1, 4, 8}));
    EXPECT_EQ(c.dynamic_batching().max_queue_delay_microseconds(), 250u);
    ASSERT_EQ(c.instance_group_size(), 1);
    EXPECT_EQ(c.instance_group(0).name(), "digits_cnn_0");
    EXPECT_EQ(c.instance_group(0).kind(), inference::ModelInstanceGroup::KIND_CPU);
    EXPECT_EQ(c.instance_group(0).count(), 1);
    EXPECT_FALSE(c.model_transaction_policy().decoupled());
  }
}

TEST_F(TritonExtensionsTest, ModelConfigOverHttpIsTritonsJson) {
  auto http = server_->httpClient();
  for (const char *path :
       {"/v2/models/digits_cnn/config", "/v2/models/digits_cnn/versions/1/config"}) {
    auto r = http->Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
    EXPECT_EQ(nlohmann::json::parse(r->body), nlohmann::json::parse(kDigitsConfig)) << r->body;
  }
  auto missing = http->Get("/v2/models/nope/config");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->body, R"({"error":"unknown model 'nope'"})");
}

TEST_F(TritonExtensionsTest, ModelConfigOfAnUnknownModelIsNotFound) {
  inference::ModelConfigRequest req;
  req.set_name("nope");
  inference::ModelConfigResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = server_->stub().ModelConfig(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "unknown model 'nope'");
}

const std::string kNoVersion2 =
    "model 'digits_cnn' has no version '2' (its one version is '1'; an empty version names it "
    "too)";

TEST_F(TritonExtensionsTest, VersionsOverGrpc) {
  inference::ModelMetadataRequest mreq;
  mreq.set_name("digits_cnn");
  inference::ModelMetadataResponse mresp;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(server_->stub().ModelMetadata(&ctx, mreq, &mresp).ok());
    EXPECT_EQ(std::vector<std::string>(mresp.versions().begin(), mresp.versions().end()),
              (std::vector<std::string>{"1"}));
  }
  // Accepted: "" and "1".
  for (const char *v : {"", "1"}) {
    inference::ModelInferResponse reply;
    grpc::ClientContext ctx;
    grpc::Status s = server_->stub().ModelInfer(&ctx, digits("v", 0.5f, v), &reply);
    EXPECT_TRUE(s.ok()) << v << ": " << s.error_message();
    EXPECT_EQ(reply.model_version(), v);
    inference::ModelReadyRequest rreq;
    rreq.set_name("digits_cnn");
    rreq.set_version(v);
    inference::ModelReadyResponse rresp;
    grpc::ClientContext rctx;
    ASSERT_TRUE(server_->stub().ModelReady(&rctx, rreq, &rresp).ok()) << v;
    EXPECT_TRUE(rresp.ready());
  }
  // Refused: "2", on every RPC that takes a version.
  auto expectNoVersion = [](const grpc::Status &s, const std::string &rpc,
                            const std::string &message) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << rpc;
    EXPECT_EQ(s.error_message(), message) << rpc;
  };
  {
    inference::ModelInferResponse reply;
    grpc::ClientContext ctx;
    expectNoVersion(server_->stub().ModelInfer(&ctx, digits("v2", 0.5f, "2"), &reply), "infer",
                    "model 'digits_cnn', request 'v2' has no version '2' (its one version is "
                    "'1'; an empty version names it too)");
  }
  {
    inference::ModelReadyRequest req;
    req.set_name("digits_cnn");
    req.set_version("2");
    inference::ModelReadyResponse resp;
    grpc::ClientContext ctx;
    expectNoVersion(server_->stub().ModelReady(&ctx, req, &resp), "ready", kNoVersion2);
  }
  {
    mreq.set_version("2");
    grpc::ClientContext ctx;
    expectNoVersion(server_->stub().ModelMetadata(&ctx, mreq, &mresp), "metadata", kNoVersion2);
  }
  {
    inference::ModelConfigRequest req;
    req.set_name("digits_cnn");
    req.set_version("2");
    inference::ModelConfigResponse resp;
    grpc::ClientContext ctx;
    expectNoVersion(server_->stub().ModelConfig(&ctx, req, &resp), "config", kNoVersion2);
  }
  {
    inference::ModelStatisticsRequest req;
    req.set_name("digits_cnn");
    req.set_version("2");
    inference::ModelStatisticsResponse resp;
    grpc::ClientContext ctx;
    expectNoVersion(server_->stub().ModelStatistics(&ctx, req, &resp), "statistics", kNoVersion2);
  }
  // Statistics and the index carry the version.
  {
    inference::ModelStatisticsRequest req;
    req.set_name("digits_cnn");
    req.set_version("1");
    inference::ModelStatisticsResponse resp;
    grpc::ClientContext ctx;
    ASSERT_TRUE(server_->stub().ModelStatistics(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.model_stats_size(), 1);
    EXPECT_EQ(resp.model_stats(0).version(), "1");
  }
  {
    inference::RepositoryIndexRequest req;
    inference::RepositoryIndexResponse resp;
    grpc::ClientContext ctx;
    ASSERT_TRUE(server_->stub().RepositoryIndex(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.models_size(), 1);
    EXPECT_EQ(resp.models(0).version(), "1");
  }
}

TEST_F(TritonExtensionsTest, VersionsOverHttp) {
  auto http = server_->httpClient();
  const std::string error = nlohmann::json({{"error", kNoVersion2}}).dump();
  for (const char *suffix : {"", "/ready", "/config", "/stats"}) {
    auto ok = http->Get(std::string("/v2/models/digits_cnn/versions/1") + suffix);
    ASSERT_TRUE(ok) << suffix;
    EXPECT_EQ(ok->status, 200) << suffix << ": " << ok->body;
    auto refused = http->Get(std::string("/v2/models/digits_cnn/versions/2") + suffix);
    ASSERT_TRUE(refused) << suffix;
    EXPECT_EQ(refused->status, 404) << suffix;
    EXPECT_EQ(refused->body, error) << suffix;
  }
  auto md = http->Get("/v2/models/digits_cnn");
  ASSERT_TRUE(md);
  EXPECT_EQ(nlohmann::json::parse(md->body)["versions"], nlohmann::json::array({"1"}));
  const std::string body = R"({"id":"h","inputs":[{"name":"image","shape":[1,8,8,1],)"
                           R"("datatype":"FP32","data":[)" +
                           [] {
                             std::string d;
                             for (int i = 0; i < 64; ++i)
                               d += i ? ",0.5" : "0.5";
                             return d;
                           }() +
                           "]}]}";
  auto infer1 = http->Post("/v2/models/digits_cnn/versions/1/infer", body, "application/json");
  ASSERT_TRUE(infer1);
  EXPECT_EQ(infer1->status, 200) << infer1->body;
  EXPECT_EQ(nlohmann::json::parse(infer1->body)["model_version"], "1");
  auto infer2 = http->Post("/v2/models/digits_cnn/versions/2/infer", body, "application/json");
  ASSERT_TRUE(infer2);
  EXPECT_EQ(infer2->status, 404);
  const std::string infer_error =
      "model 'digits_cnn', request 'h' has no version '2' (its one version is '1'; an empty "
      "version names it too)";
  EXPECT_EQ(infer2->body, nlohmann::json({{"error", infer_error}}).dump());
  auto index = http->Post("/v2/repository/index", "", "application/json");
  ASSERT_TRUE(index);
  EXPECT_EQ(nlohmann::json::parse(index->body),
            nlohmann::json::parse(R"([{"name":"digits_cnn","version":"1","state":"READY"}])"));
}

TEST_F(TritonExtensionsTest, StreamAnswersEachRequestInOrder) {
  // The unary answers the stream's must equal.
  std::vector<inference::ModelInferRequest> requests = {digits("a", 0.25f), digits("b", 0.5f),
                                                        digits("c", 0.75f)};
  requests[1].mutable_inputs(0)->set_shape(1, 7); // [1,7,8,1]: a bad request in the middle
  std::vector<inference::ModelInferResponse> unary(3);
  for (int i : {0, 2}) {
    grpc::ClientContext ctx;
    ASSERT_TRUE(server_->stub().ModelInfer(&ctx, requests[i], &unary[i]).ok());
  }
  // Twice over, all written before any is read: the stream pipelines.
  const StreamAnswers got = pipelineStream(server_->stub(), requests, 2);
  ASSERT_EQ(got.answers.size(), 6u);
  for (size_t k = 0; k < got.answers.size(); ++k) {
    const size_t i = k % requests.size();
    const inference::ModelStreamInferResponse &resp = got.answers[k];
    EXPECT_EQ(resp.infer_response().id(), requests[i].id()) << k;
    if (i == 1) {
      EXPECT_EQ(resp.error_message(),
                "model 'digits_cnn', request 'b': input 'image': raw content has 256 bytes but "
                "shape [1,7,8,1] of FP32 needs 224 bytes");
      EXPECT_EQ(resp.infer_response().outputs_size(), 0);
    } else {
      EXPECT_EQ(resp.error_message(), "");
      EXPECT_EQ(resp.infer_response().SerializeAsString(), unary[i].SerializeAsString());
    }
  }
  EXPECT_TRUE(got.finished.ok()) << got.finished.error_message();
}

TEST_F(TritonExtensionsTest, StreamOfNoRequestsEndsOk) {
  grpc::ClientContext ctx;
  auto stream = server_->stub().ModelStreamInfer(&ctx);
  stream->WritesDone();
  inference::ModelStreamInferResponse resp;
  EXPECT_FALSE(stream->Read(&resp));
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(TritonExtensionsTest, StreamCancelledByTheClientLeavesTheServerServing) {
  {
    grpc::ClientContext ctx;
    auto stream = server_->stub().ModelStreamInfer(&ctx);
    for (int i = 0; i < 8; ++i)
      ASSERT_TRUE(stream->Write(digits("x" + std::to_string(i), 0.5f)));
    ctx.TryCancel();
    EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  }
  inference::ModelInferResponse reply;
  grpc::ClientContext ctx;
  grpc::Status s = server_->stub().ModelInfer(&ctx, digits("after", 0.5f), &reply);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(reply.id(), "after");
}

TEST_F(TritonExtensionsTest, HealthCheck) {
  ServingStatus status = ServingStatus::kUnknown;
  grpc::Status s = healthCheck(server_->channel(), "", &status);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(status, ServingStatus::kServing);
  s = healthCheck(server_->channel(), "digits_cnn", &status);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(status, ServingStatus::kServing);
  s = healthCheck(server_->channel(), "nope", &status);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(TritonExtensionsTest, HealthWatchStartsWithTheCurrentStatus) {
  for (const char *service : {"", "digits_cnn"}) {
    HealthWatch watch(server_->channel(), service);
    ServingStatus status = ServingStatus::kUnknown;
    ASSERT_TRUE(watch.next(&status)) << service;
    EXPECT_EQ(status, ServingStatus::kServing) << service;
  }
  HealthWatch unknown(server_->channel(), "nope");
  ServingStatus status = ServingStatus::kUnknown;
  ASSERT_TRUE(unknown.next(&status));
  EXPECT_EQ(status, ServingStatus::kServiceUnknown);
}

TEST(TritonHealthTest, DrainTurnsHealthNotServing) {
  auto s = TestServer::start(kBundles, "  models_include: [digits_cnn]\n");
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  TestServer &server = **s;
  HealthWatch watch(server.channel(), "");
  ServingStatus status = ServingStatus::kUnknown;
  ASSERT_TRUE(watch.next(&status));
  EXPECT_EQ(status, ServingStatus::kServing);
  server.worker().service().beginDrain();
  // The publisher's next refresh (at most 500 ms) sends the change.
  ASSERT_TRUE(watch.next(&status));
  EXPECT_EQ(status, ServingStatus::kNotServing);
  ServingStatus checked = ServingStatus::kUnknown;
  ASSERT_TRUE(healthCheck(server.channel(), "", &checked).ok());
  EXPECT_EQ(checked, ServingStatus::kNotServing);
}

TEST_F(TritonExtensionsTest, ReflectionListsEveryService) {
  // v1alpha from grpc++_reflection, v1 from frontend/grpc_reflection_v1.h: the same answers.
  for (Reflection version : {Reflection::kV1alpha, Reflection::kV1}) {
    SCOPED_TRACE(version == Reflection::kV1 ? "v1" : "v1alpha");
    std::vector<std::string> services;
    grpc::Status s = reflectionServices(server_->channel(), &services, version);
    ASSERT_TRUE(s.ok()) << s.error_message();
    std::sort(services.begin(), services.end());
    EXPECT_EQ(services, (std::vector<std::string>{
                            "grpc.health.v1.Health",
                            "grpc.reflection.v1.ServerReflection",
                            "grpc.reflection.v1alpha.ServerReflection",
                            "inference.GRPCInferenceService",
                            "reactant_control.ControlService",
                            "reactant_evidence.EvidenceService",
                        }));
    std::vector<std::string> files;
    s = reflectionFilesOf(server_->channel(), "inference.GRPCInferenceService", &files, version);
    ASSERT_TRUE(s.ok()) << s.error_message();
    std::sort(files.begin(), files.end());
    EXPECT_EQ(files, (std::vector<std::string>{"grpc_service.proto", "model_config.proto"}));
    files.clear();
    s = reflectionFilesOf(server_->channel(), "inference.ModelInferRequest", &files, version);
    ASSERT_TRUE(s.ok()) << s.error_message();
    std::sort(files.begin(), files.end());
    EXPECT_EQ(files, (std::vector<std::string>{"grpc_service.proto", "model_config.proto"}));
    s = reflectionFilesOf(server_->channel(), "nope.Nothing", &files, version);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(s.error_message(), "Symbol not found.");
  }
}

} // namespace
} // namespace rs::e2e
