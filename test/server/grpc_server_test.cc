//===- test/server/grpc_server_test.cc - GrpcServer with a real gRPC stub ---===//
#include "frontend/grpc_server.h"

#include "../protocol/tensor_text.h"
#include "fake_service.h"
#include "protocol/grpc_codec.h"
#include "protocol/proto/grpc_service.grpc.pb.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <future>
#include <thread>

namespace rs::server {
namespace {

using protocol::tensorText;
using testing::FakeService;

template <typename T> std::string rawBytes(std::vector<T> v) {
  return std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(T));
}

inference::ModelInferRequest fp32Request(const std::string &model, std::vector<float> x,
                                         std::vector<int64_t> shape) {
  inference::ModelInferRequest req;
  req.set_model_name(model);
  auto *in = req.add_inputs();
  in->set_name("x");
  in->set_datatype("FP32");
  for (int64_t d : shape)
    in->add_shape(d);
  req.add_raw_input_contents(rawBytes(x));
  return req;
}

std::vector<std::string> outputTexts(const inference::ModelInferResponse &resp) {
  Result<protocol::InferResponse> r = protocol::decodeModelInferResponse(resp);
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  std::vector<std::string> out;
  if (r.isOk())
    for (const auto &t : r->outputs)
      out.push_back(tensorText(t));
  return out;
}

class GrpcServerTest : public ::testing::Test {
protected:
  void SetUp() override { startServer({}); }
  void TearDown() override {
    if (server_)
      server_->shutdown();
  }

  void startServer(frontend::GrpcServerOptions options) {
    options.host = "127.0.0.1";
    options.port = 0;
    server_ = std::make_unique<frontend::GrpcServer>(options, service_, protocol::noModelControl());
    ASSERT_TRUE(server_->start().isOk());
    ASSERT_GT(server_->port(), 0);
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);
    channel_ = grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(server_->port()),
                                         grpc::InsecureChannelCredentials(), args);
    stub_ = inference::GRPCInferenceService::NewStub(channel_);
  }

  grpc::Status infer(const inference::ModelInferRequest &req, inference::ModelInferResponse *resp) {
    grpc::ClientContext ctx;
    return stub_->ModelInfer(&ctx, req, resp);
  }

  /// A good request after a bad one still works.
  void expectGoodRequestWorks() {
    inference::ModelInferResponse resp;
    grpc::Status s = infer(fp32Request("double", {1.5f, -2}, {1, 2}), &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(outputTexts(resp),
              (std::vector<std::string>{"y FP32 [1,2] = 3 -4", "z FP32 [1,2] = 2.5 -1"}));
  }

  void expectError(const inference::ModelInferRequest &req, grpc::StatusCode code,
                   const std::string &message) {
    inference::ModelInferResponse resp;
    grpc::Status s = infer(req, &resp);
    EXPECT_EQ(s.error_code(), code);
    EXPECT_EQ(s.error_message(), message);
    expectGoodRequestWorks();
  }

  FakeService service_;
  std::unique_ptr<frontend::GrpcServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
};

TEST_F(GrpcServerTest, HealthAndMetadata) {
  {
    grpc::ClientContext ctx;
    inference::ServerLiveResponse resp;
    ASSERT_TRUE(stub_->ServerLive(&ctx, {}, &resp).ok());
    EXPECT_TRUE(resp.live());
  }
  for (bool ready : {true, false}) {
    service_.setReady(ready);
    grpc::ClientContext ctx;
    inference::ServerReadyResponse resp;
    ASSERT_TRUE(stub_->ServerReady(&ctx, {}, &resp).ok());
    EXPECT_EQ(resp.ready(), ready);
  }
  {
    grpc::ClientContext ctx;
    inference::ServerMetadataResponse resp;
    ASSERT_TRUE(stub_->ServerMetadata(&ctx, {}, &resp).ok());
    EXPECT_EQ(resp.name(), "ReactantServer");
    EXPECT_EQ(resp.version(), "0.1.0");
    ASSERT_EQ(resp.extensions_size(), 1);
  }
  {
    grpc::ClientContext ctx;
    inference::ModelMetadataRequest req;
    req.set_name("double");
    inference::ModelMetadataResponse resp;
    ASSERT_TRUE(stub_->ModelMetadata(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.name(), "double");
    EXPECT_EQ(resp.platform(), "cpu");
    ASSERT_EQ(resp.inputs_size(), 1);
    EXPECT_EQ(resp.inputs(0).datatype(), "FP32");
    EXPECT_EQ(resp.inputs(0).shape(0), -1);
    EXPECT_EQ(resp.outputs_size(), 2);
  }
  {
    grpc::ClientContext ctx;
    inference::ModelMetadataRequest req;
    req.set_name("nope");
    inference::ModelMetadataResponse resp;
    grpc::Status s = stub_->ModelMetadata(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(s.error_message(), "model 'nope' not found");
  }
}

TEST_F(GrpcServerTest, ModelReady) {
  auto ready = [&](const std::string &name, bool *out) {
    grpc::ClientContext ctx;
    inference::ModelReadyRequest req;
    req.set_name(name);
    inference::ModelReadyResponse resp;
    grpc::Status s = stub_->ModelReady(&ctx, req, &resp);
    *out = resp.ready();
    return s;
  };
  bool r = false;
  ASSERT_TRUE(ready("double", &r).ok());
  EXPECT_TRUE(r);
  ASSERT_TRUE(ready("broken", &r).ok());
  EXPECT_FALSE(r);
  grpc::Status s = ready("nope", &r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "model 'nope' not found");
  s = ready("", &r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "model name is empty");
}

TEST_F(GrpcServerTest, InferRawEchoesIdVersionAndOutputs) {
  inference::ModelInferRequest req = fp32Request("double", {1, 2, 3, 4}, {2, 2});
  req.set_id("req-1");
  req.set_model_version("7");
  req.add_outputs()->set_name("z");
  req.add_outputs()->set_name("y");
  inference::ModelInferResponse resp;
  grpc::Status s = infer(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.model_name(), "double");
  EXPECT_EQ(resp.model_version(), "7");
  EXPECT_EQ(resp.id(), "req-1");
  EXPECT_EQ(service_.lastVersion(), "7");
  ASSERT_EQ(resp.raw_output_contents_size(), 2);
  EXPECT_EQ(resp.raw_output_contents(1), rawBytes<float>({2, 4, 6, 8}));
  EXPECT_EQ(outputTexts(resp),
            (std::vector<std::string>{"z FP32 [2,2] = 2 3 4 5", "y FP32 [2,2] = 2 4 6 8"}));
}

TEST_F(GrpcServerTest, InferTypedContentsAndAsyncCompletion) {
  inference::ModelInferRequest req;
  req.set_model_name("double_async");
  auto *in = req.add_inputs();
  in->set_name("x");
  in->set_datatype("INT64");
  in->add_shape(3);
  for (int64_t v : {int64_t{-5}, int64_t{0}, int64_t{1} << 40})
    in->mutable_contents()->add_int64_contents(v);
  inference::ModelInferResponse resp;
  grpc::Status s = infer(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(outputTexts(resp), (std::vector<std::string>{"y INT64 [3] = -10 0 2199023255552",
                                                         "z INT64 [3] = -4 1 1099511627777"}));
}

TEST_F(GrpcServerTest, BadRequestsGetClearErrorsAndServingContinues) {
  using grpc::StatusCode;
  inference::ModelInferRequest short_raw = fp32Request("double", {1, 2, 3}, {1, 2, 2, 1});
  short_raw.set_id("7");
  expectError(short_raw, StatusCode::INVALID_ARGUMENT,
              "model 'double', request '7': input 'x': raw content has 12 bytes but shape "
              "[1,2,2,1] of FP32 needs 16 bytes");

  inference::ModelInferRequest negative = fp32Request("double", {}, {-1, 2});
  expectError(negative, StatusCode::INVALID_ARGUMENT,
              "model 'double': input 'x': negative dimension -1 in shape [-1,2]");

  // BYTES raw contents are length-prefixed elements: 1.0f's bits are a length of 1065353216.
  inference::ModelInferRequest bytes = fp32Request("double", {1}, {1});
  bytes.mutable_inputs(0)->set_datatype("BYTES");
  expectError(bytes, StatusCode::INVALID_ARGUMENT,
              "model 'double': input 'x': BYTES element 0 declares 1065353216 bytes but only 0 "
              "remain");

  inference::ModelInferRequest huge = fp32Request("double", {1}, {268435456});
  expectError(huge, StatusCode::INVALID_ARGUMENT,
              "model 'double': input 'x': raw content has 4 bytes but shape [268435456] of FP32 "
              "needs 1073741824 bytes");

  expectError(fp32Request("nope", {1, 2}, {1, 2}), StatusCode::NOT_FOUND, "model 'nope' not found");
  expectError(fp32Request("broken", {1, 2}, {1, 2}), StatusCode::UNAVAILABLE,
              "model 'broken' is not loaded: load failed: bad mlir");

  // The service's own validation passes through unchanged.
  inference::ModelInferRequest renamed = fp32Request("double", {1, 2}, {1, 2});
  renamed.mutable_inputs(0)->set_name("image");
  expectError(renamed, StatusCode::INVALID_ARGUMENT, "model 'double': unexpected input 'image'");
  inference::ModelInferRequest unknown_out = fp32Request("double", {1, 2}, {1, 2});
  unknown_out.add_outputs()->set_name("q");
  expectError(unknown_out, StatusCode::INVALID_ARGUMENT, "model 'double': unknown output 'q'");
  inference::ModelInferRequest empty;
  empty.set_model_name("double");
  expectError(empty, StatusCode::INVALID_ARGUMENT, "model 'double': input 'x' is missing");
}

TEST_F(GrpcServerTest, DeadlineFromClientAndParameter) {
  {
    grpc::ClientContext ctx;
    auto before = protocol::Clock::now();
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    inference::ModelInferResponse resp;
    ASSERT_TRUE(stub_->ModelInfer(&ctx, fp32Request("double", {1, 2}, {1, 2}), &resp).ok());
    auto after = protocol::Clock::now();
    std::optional<protocol::Clock::time_point> d = service_.lastDeadline();
    ASSERT_TRUE(d.has_value());
    EXPECT_GT(*d, before);
    // grpc-timeout travels as a relative value rounded up to a few significant digits, so
    // the server's deadline may lie slightly after the client's (by under a second).
    EXPECT_LE(*d, after + std::chrono::seconds(61));
  }
  {
    // No client deadline, no parameter: no deadline.
    inference::ModelInferResponse resp;
    ASSERT_TRUE(infer(fp32Request("double", {1, 2}, {1, 2}), &resp).ok());
    EXPECT_FALSE(service_.lastDeadline().has_value());
  }
  {
    // reactant_timeout_ns tighter than the gRPC deadline wins.
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::hours(1));
    inference::ModelInferRequest req = fp32Request("double", {1, 2}, {1, 2});
    (*req.mutable_parameters())["reactant_timeout_ns"].set_int64_param(30'000'000'000);
    auto before = protocol::Clock::now();
    inference::ModelInferResponse resp;
    ASSERT_TRUE(stub_->ModelInfer(&ctx, req, &resp).ok());
    auto after = protocol::Clock::now();
    std::optional<protocol::Clock::time_point> d = service_.lastDeadline();
    ASSERT_TRUE(d.has_value());
    EXPECT_GE(*d, before + std::chrono::seconds(30));
    EXPECT_LE(*d, after + std::chrono::seconds(30));
  }
}

TEST_F(GrpcServerTest, UnimplementedRpcs) {
  grpc::ClientContext ctx;
  inference::RepositoryModelLoadRequest req;
  req.set_model_name("m");
  inference::RepositoryModelLoadResponse resp;
  // The fake service has no model control (protocol::noModelControl()).
  grpc::Status s = stub_->RepositoryModelLoad(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(s.error_message(), "RepositoryModelLoad of 'm' is not implemented by this service");
  grpc::ClientContext ctx2;
  inference::SystemSharedMemoryRegisterResponse resp2;
  s = stub_->SystemSharedMemoryRegister(&ctx2, {}, &resp2);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  expectGoodRequestWorks();
}

TEST_F(GrpcServerTest, MessageSizeLimit) {
  server_->shutdown();
  frontend::GrpcServerOptions options;
  options.max_recv_msg_bytes = 4096;
  startServer(options);
  inference::ModelInferResponse resp;
  grpc::Status s = infer(fp32Request("double", std::vector<float>(2048, 1.0f), {1024, 2}), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  expectGoodRequestWorks();
}

TEST_F(GrpcServerTest, AMessageBetweenTheLimitAndTwiceItIsRefusedByTheServerItself) {
  server_->shutdown();
  frontend::GrpcServerOptions options;
  options.max_recv_msg_bytes = 4096;
  startServer(options);
  inference::ModelInferRequest req =
      fp32Request("double", std::vector<float>(1024, 1.0f), {512, 2});
  const size_t bytes = req.ByteSizeLong();
  ASSERT_GT(bytes, 4096u);
  ASSERT_LE(bytes, 8192u);
  inference::ModelInferResponse resp;
  grpc::Status s = infer(req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(s.error_message(), "request message of " + std::to_string(bytes) +
                                   " bytes exceeds grpc.max_recv_msg_bytes (4096)");
  EXPECT_EQ(service_.requests(), 0); // refused before the service
  // Every other RPC has the same limit.
  grpc::ClientContext ctx;
  inference::ModelMetadataRequest md;
  md.set_name(std::string(5000, 'm'));
  inference::ModelMetadataResponse md_resp;
  s = stub_->ModelMetadata(&ctx, md, &md_resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(s.error_message(), "request message of " + std::to_string(md.ByteSizeLong()) +
                                   " bytes exceeds grpc.max_recv_msg_bytes (4096)");
  expectGoodRequestWorks();
}

TEST_F(GrpcServerTest, ACancelledCallRaisesItsRequestsCancellation) {
  grpc::ClientContext ctx;
  grpc::CompletionQueue cq;
  inference::ModelInferResponse resp;
  grpc::Status status;
  auto call = stub_->AsyncModelInfer(&ctx, fp32Request("gate", {3, 4}, {1, 2}), &cq);
  call->Finish(&resp, &status, reinterpret_cast<void *>(1));
  service_.waitForHeld(1);
  EXPECT_FALSE(service_.lastCancelled());
  ctx.TryCancel();
  void *tag = nullptr;
  bool ok = false;
  ASSERT_TRUE(cq.Next(&tag, &ok));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
  // The server learns of it from gRPC's done notification, on a polling thread.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!service_.lastCancelled() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(service_.lastCancelled());
  service_.release();
  expectGoodRequestWorks();
  EXPECT_FALSE(service_.lastCancelled()); // an answered call's flag stays down
  cq.Shutdown();
}

TEST_F(GrpcServerTest, ConcurrentClients) {
  constexpr int kThreads = 8, kRequests = 25;
  std::vector<std::future<int>> results;
  for (int t = 0; t < kThreads; ++t)
    results.push_back(std::async(std::launch::async, [this, t] {
      auto stub = inference::GRPCInferenceService::NewStub(channel_);
      int good = 0;
      for (int i = 0; i < kRequests; ++i) {
        float v = static_cast<float>(t * 1000 + i);
        inference::ModelInferRequest req =
            fp32Request(i % 2 ? "double_async" : "double", {v, -v}, {1, 2});
        req.set_id(std::to_string(t) + "/" + std::to_string(i));
        grpc::ClientContext ctx;
        inference::ModelInferResponse resp;
        grpc::Status s = stub->ModelInfer(&ctx, req, &resp);
        if (!s.ok() || resp.id() != req.id()) {
          ADD_FAILURE() << req.id() << ": " << s.error_code() << " " << s.error_message();
          continue;
        }
        if (resp.raw_output_contents(0) == rawBytes<float>({2 * v, -2 * v}))
          ++good;
      }
      return good;
    }));
  for (auto &f : results)
    EXPECT_EQ(f.get(), kRequests);
}

TEST_F(GrpcServerTest, BusyPollingThreadsServeConcurrentClientsAndShutDown) {
  // One and three polling threads that poll without sleeping for 50 ms after their last
  // work: every call answered (synchronous and asynchronous completions, concurrent
  // clients), and shutdown() returns while the threads still poll.
  for (int threads : {1, 3}) {
    SCOPED_TRACE(threads);
    server_->shutdown();
    frontend::GrpcServerOptions options;
    options.threads = threads;
    options.busy_poll = std::chrono::microseconds(50000);
    startServer(options);
    expectGoodRequestWorks();
    std::vector<std::future<int>> results;
    for (int t = 0; t < 4; ++t)
      results.push_back(std::async(std::launch::async, [this, t] {
        auto stub = inference::GRPCInferenceService::NewStub(channel_);
        int good = 0;
        for (int i = 0; i < 20; ++i) {
          const float v = static_cast<float>(t * 100 + i);
          grpc::ClientContext ctx;
          inference::ModelInferResponse resp;
          grpc::Status s = stub->ModelInfer(
              &ctx, fp32Request(i % 2 ? "double_async" : "double", {v}, {1, 1}), &resp);
          good += s.ok() && resp.raw_output_contents(0) == rawBytes<float>({2 * v});
        }
        return good;
      }));
    for (auto &f : results)
      EXPECT_EQ(f.get(), 20);
    const auto start = std::chrono::steady_clock::now();
    server_->shutdown();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    startServer({}); // for TearDown and the next round
  }
}

TEST_F(GrpcServerTest, ShutdownFinishesInFlightCalls) {
  auto pending = std::async(std::launch::async, [this] {
    inference::ModelInferResponse resp;
    grpc::Status s = infer(fp32Request("gate", {3, 4}, {1, 2}), &resp);
    return std::make_pair(s, resp);
  });
  service_.waitForHeld(1);
  auto stopped = std::async(std::launch::async, [this] { server_->shutdown(); });
  service_.release();
  stopped.get();
  auto [status, resp] = pending.get();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(resp.raw_output_contents(0), rawBytes<float>({6, 8}));
  // The server is gone: a new call fails.
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  inference::ServerLiveResponse live;
  EXPECT_FALSE(stub_->ServerLive(&ctx, {}, &live).ok());
}

TEST(GrpcServer, BindFailureIsUnavailable) {
  FakeService service;
  frontend::GrpcServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  frontend::GrpcServer first(options, service, protocol::noModelControl());
  ASSERT_TRUE(first.start().isOk());
  options.port = first.port();
  frontend::GrpcServer second(options, service, protocol::noModelControl());
  Status s = second.start();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  // The OS's reason, from a plain bind (gRPC's own error does not reach the caller).
  EXPECT_EQ(s.message(), "grpc server: cannot bind 127.0.0.1:" + std::to_string(first.port()) +
                             ": Address already in use");
  EXPECT_EQ(second.port(), 0);
}

} // namespace
} // namespace rs::server
