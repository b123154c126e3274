//===- test/gateway/gateway_shared_memory_test.cc - System shared memory through the gateway ===//
//
// A gateway over two workers on this host (protocol_fleet.h; each gate offers system shared
// memory): a region registered through the gateway is registered with both workers, so
// ModelInfer requests through the gateway that name it are answered by either worker with
// the same bytes as inline ones; status lists it; a registration one worker refuses is
// undone on the other and answered with the refusing worker's error; unregistering reaches
// both; the REST routes answer 501 with what to do instead.
//
//===----------------------------------------------------------------------===//
#include "protocol_fleet.h"

#include "../hardening/shm_util.h"

#include <nlohmann/json.hpp>

namespace rs::gateway::testing {
namespace {

using rs::testing::kPeer;
using rs::testing::ShmObject;

class GatewaySharedMemoryTest : public ProtocolFleetTest {
protected:
  static grpc::Status registerRegion(const std::string &name, const std::string &key,
                                     uint64_t offset, uint64_t byte_size) {
    grpc::ClientContext ctx;
    inference::SystemSharedMemoryRegisterRequest req;
    req.set_name(name);
    req.set_key(key);
    req.set_offset(offset);
    req.set_byte_size(byte_size);
    inference::SystemSharedMemoryRegisterResponse resp;
    return gw_->stub().SystemSharedMemoryRegister(&ctx, req, &resp);
  }
  static grpc::Status unregisterRegion(const std::string &name) {
    grpc::ClientContext ctx;
    inference::SystemSharedMemoryUnregisterRequest req;
    req.set_name(name);
    inference::SystemSharedMemoryUnregisterResponse resp;
    return gw_->stub().SystemSharedMemoryUnregister(&ctx, req, &resp);
  }
  /// The names of worker `w`'s regions (the gateway's connections come from 127.0.0.1).
  static std::vector<std::string> regionsOf(size_t w) {
    std::vector<std::string> out;
    Result<std::vector<protocol::SharedMemoryRegionInfo>> r =
        fleet_->worker(w).shared_memory->status(kPeer, "");
    if (r.isOk())
      for (const protocol::SharedMemoryRegionInfo &i : *r)
        out.push_back(i.name);
    return out;
  }
};

TEST_F(GatewaySharedMemoryTest, RegisteredWithEveryWorkerAndUsableThroughTheGateway) {
  ShmObject object(256);
  ASSERT_TRUE(object.ok());
  object.writeValues<float>(16, {1, 2, 3, 4});
  ASSERT_TRUE(registerRegion("in", object.key(), 0, 256).ok());
  EXPECT_EQ(regionsOf(0), std::vector<std::string>{"in"});
  EXPECT_EQ(regionsOf(1), std::vector<std::string>{"in"});
  {
    grpc::ClientContext ctx;
    inference::SystemSharedMemoryStatusRequest req;
    inference::SystemSharedMemoryStatusResponse resp;
    ASSERT_TRUE(gw_->stub().SystemSharedMemoryStatus(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.regions().size(), 1u);
    EXPECT_EQ(resp.regions().at("in").key(), object.key());
    EXPECT_EQ(resp.regions().at("in").byte_size(), 256u);
  }

  // The inline answer, then the same row from the region: round_robin sends the four
  // requests to both workers, and each reads the region.
  grpc::ClientContext inline_ctx;
  inference::ModelInferResponse expected;
  ASSERT_TRUE(gw_->stub().ModelInfer(&inline_ctx, iris("inline", 1), &expected).ok());
  const std::vector<int64_t> before = fleet_->servedAll(kIris);
  for (int i = 0; i < 4; ++i) {
    inference::ModelInferRequest req = iris("shm" + std::to_string(i), 1);
    req.clear_raw_input_contents();
    auto &params = *req.mutable_inputs(0)->mutable_parameters();
    params[protocol::kShmRegionParameter].set_string_param("in");
    params[protocol::kShmOffsetParameter].set_int64_param(16);
    params[protocol::kShmByteSizeParameter].set_int64_param(16);
    grpc::ClientContext ctx;
    inference::ModelInferResponse reply;
    grpc::Status s = gw_->stub().ModelInfer(&ctx, req, &reply);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(reply.raw_output_contents(0), expected.raw_output_contents(0));
  }
  const std::vector<int64_t> after = fleet_->servedAll(kIris);
  EXPECT_EQ(after[0] - before[0], 2);
  EXPECT_EQ(after[1] - before[1], 2);

  // Unregistered through the gateway: from both workers, and the next request is refused.
  ASSERT_TRUE(unregisterRegion("in").ok());
  EXPECT_TRUE(regionsOf(0).empty());
  EXPECT_TRUE(regionsOf(1).empty());
  inference::ModelInferRequest req = iris("gone", 1);
  req.clear_raw_input_contents();
  auto &params = *req.mutable_inputs(0)->mutable_parameters();
  params[protocol::kShmRegionParameter].set_string_param("in");
  params[protocol::kShmByteSizeParameter].set_int64_param(16);
  grpc::ClientContext ctx;
  inference::ModelInferResponse reply;
  grpc::Status s = gw_->stub().ModelInfer(&ctx, req, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "model 'iris_mlp', request 'gone': input 'features': shared "
                               "memory region \"in\" is not registered");
}

TEST_F(GatewaySharedMemoryTest, ARegistrationOneWorkerRefusesIsUndone) {
  ShmObject object(64);
  ASSERT_TRUE(object.ok());
  // Worker w1 already has a region of that name (registered with it directly).
  ASSERT_TRUE(
      fleet_->worker(1).shared_memory->registerRegion(kPeer, {"taken", object.key(), 0, 8}).isOk());
  grpc::Status s = registerRegion("taken", object.key(), 0, 64);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(s.error_message().rfind("worker 'w1': ", 0), 0u) << s.error_message();
  EXPECT_TRUE(regionsOf(0).empty()); // w0 took it and gave it back
  EXPECT_EQ(regionsOf(1), std::vector<std::string>{"taken"});
  {
    // Status lists only what every worker holds; a named region missing on one is its
    // NOT_FOUND.
    grpc::ClientContext ctx;
    inference::SystemSharedMemoryStatusRequest req;
    inference::SystemSharedMemoryStatusResponse resp;
    ASSERT_TRUE(gw_->stub().SystemSharedMemoryStatus(&ctx, req, &resp).ok());
    EXPECT_TRUE(resp.regions().empty());
    grpc::ClientContext named_ctx;
    req.set_name("taken");
    s = gw_->stub().SystemSharedMemoryStatus(&named_ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(s.error_message(), "worker 'w0': shared memory region \"taken\" is not registered");
  }
  // A key no worker can open: every worker's INVALID_ARGUMENT, nothing registered.
  s = registerRegion("bad", "/rs_no_such_object_here", 0, 8);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message().rfind("worker 'w0': shared memory region \"bad\": cannot use key", 0),
            0u)
      << s.error_message();
  ASSERT_TRUE(unregisterRegion("").ok()); // every region of this peer, on every worker
  EXPECT_TRUE(regionsOf(1).empty());
}

TEST_F(GatewaySharedMemoryTest, RestRoutesSayToUseGrpcOrAWorker) {
  httplib::Client cli = http();
  const std::string expected =
      "system shared memory: the gateway forwards it over gRPC only (SystemSharedMemoryRegister "
      "reaches every worker); over HTTP, send it, and the requests that name the region, to a "
      "worker's own endpoint";
  for (const char *path :
       {"/v2/systemsharedmemory/status", "/v2/systemsharedmemory/region/in/status"}) {
    auto r = cli.Get(path);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 501) << path;
    EXPECT_EQ(nlohmann::json::parse(r->body, nullptr, false).value("error", ""), expected) << path;
  }
  for (const char *path :
       {"/v2/systemsharedmemory/region/in/register", "/v2/systemsharedmemory/unregister",
        "/v2/systemsharedmemory/region/in/unregister"}) {
    auto r = cli.Post(path, R"({"key":"/rs_in","byte_size":64})", "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 501) << path;
    EXPECT_EQ(nlohmann::json::parse(r->body, nullptr, false).value("error", ""), expected) << path;
  }
}

} // namespace
} // namespace rs::gateway::testing
