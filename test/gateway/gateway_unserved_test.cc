//===- test/gateway/gateway_unserved_test.cc - Models the workers list but do not serve ===//
//
// Two real workers (fleet.h) on a repository of iris_mlp and `broken_mlp`, a copy of it
// whose weights file is cut in half, so its load fails on both. Through the gateway that
// model is answered as a worker answers it: UNAVAILABLE / 503 with the worker's reason for
// metadata, configuration and inference, not ready, NOT_SERVING in grpc.health.v1, and
// listed in the repository index with the worker's state and reason. The same fleet checks
// that Triton's CUDA shared-memory RPCs are forwarded to a worker.
//
//===----------------------------------------------------------------------===//
#include "fleet.h"

#include "common/files.h"
#include "common/raw_grpc.h"
#include "common/temp_dir.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

namespace rs::gateway::testing {
namespace {

using rs::testing::healthCheck;
using rs::testing::ServingStatus;

constexpr const char *kBroken = "broken_mlp";

class GatewayUnservedModelTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    repo_ = new rs::testing::TempDir("rs_gateway_unserved_");
    rs::testing::copyBundleFiles(kModelRepo + "/iris_mlp", repo_->path() / "iris_mlp");
    rs::testing::copyBundleFiles(kModelRepo + "/iris_mlp", repo_->path() / kBroken);
    const auto weights = repo_->path() / kBroken / "weights.safetensors";
    const std::string bytes = rs::testing::readFile(weights);
    rs::testing::writeFile(weights, bytes.substr(0, bytes.size() / 2));
    Result<std::unique_ptr<Fleet>> f = Fleet::start(2, {"iris_mlp", kBroken}, "", "", repo_->str());
    ASSERT_TRUE(f.isOk()) << f.status().toString();
    fleet_ = std::move(f).value().release();
    Result<std::unique_ptr<TestGateway>> g =
        TestGateway::start(fleet_->gatewayYaml("  mode: round_robin\n"));
    ASSERT_TRUE(g.isOk()) << g.status().toString();
    gw_ = std::move(g).value().release();
    channel_ = new std::shared_ptr<grpc::Channel>(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(gw_->gateway().grpcPort()),
                            grpc::InsecureChannelCredentials()));
  }
  static void TearDownTestSuite() {
    delete channel_;
    delete gw_;
    delete fleet_;
    delete repo_;
    channel_ = nullptr;
    gw_ = nullptr;
    fleet_ = nullptr;
    repo_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(gw_, nullptr); }

  /// What worker 0 answers for the broken model's metadata (its load failure).
  static Status workersAnswer() {
    return fleet_->worker(0).worker->service().modelMetadata(kBroken).status();
  }
  static httplib::Client gatewayHttp() {
    httplib::Client cli("127.0.0.1", gw_->gateway().httpPort());
    cli.set_read_timeout(30, 0);
    return cli;
  }

  static inline rs::testing::TempDir *repo_ = nullptr;
  static inline Fleet *fleet_ = nullptr;
  static inline TestGateway *gw_ = nullptr;
  static inline std::shared_ptr<grpc::Channel> *channel_ = nullptr;
};

TEST_F(GatewayUnservedModelTest, TheWorkersAnswerTheLoadFailure) {
  const Status own = workersAnswer();
  ASSERT_EQ(own.code(), StatusCode::kUnavailable);
  ASSERT_TRUE(own.message().starts_with("model 'broken_mlp' is not ready: weights.safetensors"))
      << own.message();
  // Both workers fail the same way, so whichever worker's reason the gateway keeps is this.
  EXPECT_EQ(fleet_->worker(1).worker->service().modelMetadata(kBroken).status().message(),
            own.message());
}

TEST_F(GatewayUnservedModelTest, GrpcAnswersUnavailableWithTheWorkersReason) {
  const std::string expected = workersAnswer().message();
  {
    grpc::ClientContext ctx;
    inference::ModelMetadataRequest req;
    req.set_name(kBroken);
    inference::ModelMetadataResponse resp;
    grpc::Status s = gw_->stub().ModelMetadata(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_EQ(s.error_message(), expected);
  }
  {
    grpc::ClientContext ctx;
    inference::ModelConfigRequest req;
    req.set_name(kBroken);
    inference::ModelConfigResponse resp;
    grpc::Status s = gw_->stub().ModelConfig(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_EQ(s.error_message(), expected);
  }
  {
    grpc::ClientContext ctx;
    inference::ModelReadyRequest req;
    req.set_name(kBroken);
    inference::ModelReadyResponse resp;
    ASSERT_TRUE(gw_->stub().ModelReady(&ctx, req, &resp).ok());
    EXPECT_FALSE(resp.ready());
  }
  inference::ModelInferRequest infer = makeRequest("iris_mlp", 1, 1.0f);
  infer.set_model_name(kBroken);
  grpc::ClientContext ctx;
  inference::ModelInferResponse resp;
  grpc::Status s = gw_->stub().ModelInfer(&ctx, infer, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(s.error_message(), expected);
  // A model no worker lists is still NOT_FOUND, and the good model serves.
  Result<inference::ModelInferResponse> unknown = gw_->infer("nope", 1);
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(unknown.status().message(), "model 'nope' is not served by any ready worker");
  EXPECT_TRUE(gw_->infer("iris_mlp", 1).isOk());
}

TEST_F(GatewayUnservedModelTest, HttpAnswers503WithTheWorkersReason) {
  const nlohmann::json expected = {{"error", workersAnswer().message()}};
  httplib::Client cli = gatewayHttp();
  for (const char *path : {"/v2/models/broken_mlp", "/v2/models/broken_mlp/config"}) {
    httplib::Result r = cli.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 503) << path;
    EXPECT_EQ(nlohmann::json::parse(r->body), expected) << path;
  }
  httplib::Result ready = cli.Get("/v2/models/broken_mlp/ready");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 400);
  httplib::Result infer = cli.Post(
      "/v2/models/broken_mlp/infer",
      R"({"inputs":[{"name":"features","datatype":"FP32","shape":[1,4],"data":[1,2,3,4]}]})",
      "application/json");
  ASSERT_TRUE(infer);
  EXPECT_EQ(infer->status, 503);
  EXPECT_EQ(nlohmann::json::parse(infer->body), expected);
}

TEST_F(GatewayUnservedModelTest, TheRepositoryIndexListsItAsTheWorkersDo) {
  // gRPC: the gateway's index is a worker's own, entry for entry.
  auto index = [](inference::GRPCInferenceService::Stub &stub, bool ready_only) {
    grpc::ClientContext ctx;
    inference::RepositoryIndexRequest req;
    req.set_ready(ready_only);
    inference::RepositoryIndexResponse resp;
    EXPECT_TRUE(stub.RepositoryIndex(&ctx, req, &resp).ok());
    return resp;
  };
  auto worker_stub = inference::GRPCInferenceService::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(fleet_->worker(0).front->port()),
                          grpc::InsecureChannelCredentials()));
  const inference::RepositoryIndexResponse own = index(*worker_stub, false);
  const inference::RepositoryIndexResponse got = index(gw_->stub(), false);
  ASSERT_EQ(got.models_size(), 2);
  EXPECT_EQ(got.models(0).name(), kBroken);
  EXPECT_EQ(got.models(0).version(), "1");
  EXPECT_EQ(got.models(0).state(), "UNAVAILABLE");
  EXPECT_TRUE(got.models(0).reason().starts_with("weights.safetensors")) << got.models(0).reason();
  EXPECT_EQ(got.models(1).name(), "iris_mlp");
  EXPECT_EQ(got.models(1).state(), "READY");
  EXPECT_EQ(got.SerializeAsString(), own.SerializeAsString());
  const inference::RepositoryIndexResponse ready_only = index(gw_->stub(), true);
  ASSERT_EQ(ready_only.models_size(), 1);
  EXPECT_EQ(ready_only.models(0).name(), "iris_mlp");

  // HTTP: what a worker prints for the same index.
  httplib::Result have = gatewayHttp().Post("/v2/repository/index", "", "application/json");
  ASSERT_TRUE(have);
  EXPECT_EQ(have->status, 200);
  EXPECT_EQ(nlohmann::json::parse(have->body),
            nlohmann::json::parse(R"([{"name":"broken_mlp","version":"1","state":"UNAVAILABLE",)"
                                  R"("reason":)" +
                                  nlohmann::json(own.models(0).reason()).dump() +
                                  R"(},{"name":"iris_mlp","version":"1","state":"READY"}])"));
}

TEST_F(GatewayUnservedModelTest, HealthIsNotServing) {
  ServingStatus status = ServingStatus::kUnknown;
  ASSERT_TRUE(healthCheck(*channel_, kBroken, &status).ok());
  EXPECT_EQ(status, ServingStatus::kNotServing);
  ASSERT_TRUE(healthCheck(*channel_, "iris_mlp", &status).ok());
  EXPECT_EQ(status, ServingStatus::kServing);
  EXPECT_EQ(healthCheck(*channel_, "nope", &status).error_code(), grpc::StatusCode::NOT_FOUND);
}

// ---- Triton's CUDA shared memory, forwarded -----------------------------------------

TEST_F(GatewayUnservedModelTest, CudaSharedMemoryRpcsAreTheWorkersAnswers) {
  {
    grpc::ClientContext ctx;
    inference::CudaSharedMemoryStatusRequest req;
    inference::CudaSharedMemoryStatusResponse resp;
    ASSERT_TRUE(gw_->stub().CudaSharedMemoryStatus(&ctx, req, &resp).ok());
    EXPECT_TRUE(resp.regions().empty());
  }
  {
    grpc::ClientContext ctx;
    inference::CudaSharedMemoryStatusRequest req;
    req.set_name("gpu0");
    inference::CudaSharedMemoryStatusResponse resp;
    grpc::Status s = gw_->stub().CudaSharedMemoryStatus(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(s.error_message(), "cuda shared memory region \"gpu0\" is not registered");
  }
  {
    grpc::ClientContext ctx;
    inference::CudaSharedMemoryRegisterRequest req;
    req.set_name("gpu0");
    req.set_raw_handle("handle");
    req.set_byte_size(64);
    inference::CudaSharedMemoryRegisterResponse resp;
    grpc::Status s = gw_->stub().CudaSharedMemoryRegister(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message(), "cuda shared memory region \"gpu0\": CUDA shared memory is not "
                                 "offered (system shared memory is)");
  }
  grpc::ClientContext ctx;
  inference::CudaSharedMemoryUnregisterRequest req;
  inference::CudaSharedMemoryUnregisterResponse resp;
  EXPECT_TRUE(gw_->stub().CudaSharedMemoryUnregister(&ctx, req, &resp).ok());
  EXPECT_EQ(sampleValue(gw_->gateway().renderMetrics(), "gateway_requests_total",
                        {{"rpc", "CudaSharedMemoryStatus"}, {"status", "OK"}}),
            1.0);
}

} // namespace
} // namespace rs::gateway::testing
