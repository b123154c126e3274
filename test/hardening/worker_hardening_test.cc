//===- test/hardening/worker_hardening_test.cc - Limits, drain, health, shm --===//
#include "log_capture.h"
#include "protocol/shared_memory.h"
#include "protocol/status_mapping.h"
#include "shm_util.h"
#include "worker_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

namespace rs::testing {
namespace {

namespace fs = std::filesystem;
using inference::ModelInferRequest;
using inference::ModelInferResponse;

/// The raw bytes of the single output of `reply`.
std::string logitsOf(const ModelInferResponse &reply) {
  return reply.raw_output_contents_size() == 1 ? reply.raw_output_contents(0) : std::string();
}

/// Every probe's view of readiness: /readyz, /v2/health/ready, gRPC ServerReady.
struct Readiness {
  int readyz = 0;
  int kserve_http = 0;
  bool grpc = false;
  int healthz = 0;
  bool live = false;
};

Readiness probe(TestWorker &w) {
  Readiness r;
  auto m = w.metrics();
  if (auto res = m->Get("/readyz"))
    r.readyz = res->status;
  if (auto res = m->Get("/healthz"))
    r.healthz = res->status;
  if (auto res = w.http()->Get("/v2/health/ready"))
    r.kserve_http = res->status;
  {
    grpc::ClientContext ctx;
    inference::ServerReadyResponse resp;
    if (w.stub().ServerReady(&ctx, {}, &resp).ok())
      r.grpc = resp.ready();
  }
  {
    grpc::ClientContext ctx;
    inference::ServerLiveResponse resp;
    if (w.stub().ServerLive(&ctx, {}, &resp).ok())
      r.live = resp.live();
  }
  return r;
}

TEST(WorkerHealth, ProbesAgreeThroughDrain) {
  auto w = startHardeningWorker(kIrisRepo);
  ASSERT_TRUE(w);
  Readiness r = probe(*w);
  EXPECT_EQ(r.readyz, 200);
  EXPECT_EQ(r.kserve_http, 200);
  EXPECT_TRUE(r.grpc);
  EXPECT_EQ(r.healthz, 200);
  EXPECT_TRUE(r.live);

  // An admitted request still in flight while the drain starts.
  ASSERT_TRUE(w->service().admission().acquire().isOk());
  auto drained = std::async(std::launch::async,
                            [&] { return w->worker().drainAndShutdown(std::chrono::seconds(60)); });
  while (!w->service().draining()) // drainAndShutdown sets it first thing; nothing signals it
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  r = probe(*w);
  EXPECT_EQ(r.readyz, 503);
  EXPECT_EQ(r.kserve_http, 400);
  EXPECT_FALSE(r.grpc);
  EXPECT_EQ(r.healthz, 200); // live never depends on readiness
  EXPECT_TRUE(r.live);
  // New requests get an explicit UNAVAILABLE / 503.
  ModelInferResponse reply;
  grpc::Status s = w->infer(irisRequest(irisRow()), &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(s.error_message(), "model 'iris_mlp', request '1': server is shutting down");
  auto res = w->http()->Post("/v2/models/iris_mlp/infer", irisJson(irisRow()), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  // The in-flight request finishes; then the worker stops.
  EXPECT_NE(drained.wait_for(std::chrono::milliseconds(0)), std::future_status::ready);
  w->service().admission().release();
  EXPECT_TRUE(drained.get());
  EXPECT_EQ(w->worker().grpcPort(), 0);
}

TEST(WorkerHealth, DrainTimeoutStillShutsDown) {
  auto w = startHardeningWorker(kIrisRepo);
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->service().admission().acquire().isOk()); // never released in time
  EXPECT_FALSE(w->worker().drainAndShutdown(std::chrono::milliseconds(50)));
  EXPECT_EQ(w->worker().grpcPort(), 0);
  w->service().admission().release();
}

TEST(WorkerHealth, AModelThatFailedToLoadLeavesEveryProbeReady) {
  fs::path repo = fs::temp_directory_path() / ("rs_hardening_repo_" + std::to_string(::getpid()));
  fs::remove_all(repo);
  fs::create_directories(repo / "broken");
  std::ofstream(repo / "broken" / "manifest.yaml") << "format_version: [not a manifest\n";
  fs::copy(kIrisRepo + "/iris_mlp", repo / "iris_mlp", fs::copy_options::recursive);
  fs::remove_all(repo / "iris_mlp" / ".cache");
  {
    WorkerSetup o;
    o.include = {};
    auto w = startHardeningWorker(repo.string(), o);
    ASSERT_TRUE(w);
    // One bad bundle does not flip readiness (docs/operations.md "Readiness").
    Readiness r = probe(*w);
    EXPECT_EQ(r.readyz, 200);
    EXPECT_EQ(r.kserve_http, 200);
    EXPECT_TRUE(r.grpc);
    EXPECT_EQ(r.healthz, 200);
    // The healthy model serves.
    ModelInferResponse reply;
    EXPECT_TRUE(w->infer(irisRequest(irisRow()), &reply).ok());
  }
  fs::remove_all(repo);
}

TEST(WorkerLimits, ConcurrencyCapShedsOnBothProtocols) {
  WorkerSetup o;
  o.endpoints_extra = ", max_concurrent_requests: 2";
  auto w = startHardeningWorker(kIrisRepo, o);
  ASSERT_TRUE(w);
  server::Admission &a = w->service().admission();
  ASSERT_TRUE(a.acquire().isOk());
  ASSERT_TRUE(a.acquire().isOk());
  ModelInferResponse reply;
  grpc::Status s = w->infer(irisRequest(irisRow()), &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(s.error_message(),
            "model 'iris_mlp', request '1': server is at its limit of 2 concurrent requests "
            "(endpoints.max_concurrent_requests)");
  auto res = w->http()->Post("/v2/models/iris_mlp/infer", irisJson(irisRow()), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 429);
  a.release();
  EXPECT_TRUE(w->infer(irisRequest(irisRow()), &reply).ok());
  a.release();
  const std::string text = w->scrape();
  EXPECT_NE(text.find("worker_requests_shed_total{gpu=\"\",worker=\"worker0\"} 2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("worker_max_concurrent_requests{gpu=\"\",worker=\"worker0\"} 2"),
            std::string::npos);
  EXPECT_NE(text.find("worker_inflight_requests{gpu=\"\",worker=\"worker0\"} 0"),
            std::string::npos);
}

TEST(WorkerLimits, MessageAndBodyLimits) {
  WorkerSetup o;
  o.global_yaml = "  grpc: {max_recv_msg_bytes: 4096}\n";
  o.endpoints_extra = ", max_request_bytes: 4096";
  auto w = startHardeningWorker(kIrisRepo, o);
  ASSERT_TRUE(w);
  // A message over twice grpc.max_recv_msg_bytes gRPC refuses before any handler (one between
  // the limit and twice it the server refuses itself: Accounting.AGrpcRequestOver...).
  ModelInferRequest big = irisRequest(irisRow());
  big.mutable_raw_input_contents(0)->append(8192, '\0');
  ModelInferResponse reply;
  grpc::Status s = w->infer(big, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  // HTTP bodies have their own limit, endpoints.max_request_bytes.
  std::string body = irisJson(irisRow());
  body.insert(body.size() - 1, ",\"pad\":\"" + std::string(8192, 'x') + "\"");
  auto res = w->http()->Post("/v2/models/iris_mlp/infer", body, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  // A shape that declares far more than was sent is refused before any allocation.
  ModelInferRequest lie = irisRequest(irisRow());
  lie.mutable_inputs(0)->set_shape(0, int64_t{1} << 40);
  s = w->infer(lie, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(),
            "model 'iris_mlp', request '1': input 'features': raw content has 16 bytes but shape "
            "[1099511627776,4] of FP32 needs 17592186044416 bytes");
  // Shared memory cannot carry more than the wire would.
  ShmObject object(16384);
  ASSERT_TRUE(object.ok());
  ASSERT_TRUE(
      w->service().sharedMemory().registerRegion(kPeer, {"r", object.key(), 0, 16384}).isOk());
  ModelInferRequest shm = irisRequest(irisRow());
  shm.clear_raw_input_contents();
  shm.mutable_inputs(0)->set_shape(0, 1024);
  auto &params = *shm.mutable_inputs(0)->mutable_parameters();
  params[protocol::kShmRegionParameter].set_string_param("r");
  params[protocol::kShmByteSizeParameter].set_int64_param(16384);
  s = w->infer(shm, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "model 'iris_mlp', request '1': input 'features': inputs in shared "
                               "memory exceed the limit of 4096 bytes per request");
}

TEST(WorkerSharedMemory, OffUnlessEnabled) {
  WorkerSetup o;
  o.shared_memory = false;
  auto w = startHardeningWorker(kIrisRepo, o);
  ASSERT_TRUE(w);
  ShmObject object(64);
  ASSERT_TRUE(object.ok());
  auto res = w->http()->Post("/v2/systemsharedmemory/region/r/register",
                             R"({"key":")" + object.key() + R"(","offset":0,"byte_size":64})",
                             "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  grpc::ClientContext ctx;
  inference::SystemSharedMemoryRegisterRequest req;
  req.set_name("r");
  req.set_key(object.key());
  req.set_byte_size(64);
  inference::SystemSharedMemoryRegisterResponse resp;
  EXPECT_EQ(w->stub().SystemSharedMemoryRegister(&ctx, req, &resp).error_code(),
            grpc::StatusCode::UNIMPLEMENTED);
  res = w->http()->Get("/v2");
  ASSERT_TRUE(res);
  EXPECT_EQ(nlohmann::json::parse(res->body)["extensions"],
            nlohmann::json::parse(R"(["binary_tensor_data","model_repository","statistics"])"));
}

TEST(WorkerSharedMemory, RegisterRevealsNeitherExistenceNorSize) {
  auto w = startHardeningWorker(kIrisRepo);
  ASSERT_TRUE(w);
  auto object = std::make_unique<ShmObject>(64);
  ASSERT_TRUE(object->ok());
  const std::string key = object->key();
  const std::string body = R"({"key":")" + key + R"(","offset":0,"byte_size":4096})";
  auto small =
      w->http()->Post("/v2/systemsharedmemory/region/r/register", body, "application/json");
  ASSERT_TRUE(small);
  EXPECT_EQ(small->status, 400);
  object.reset(); // unlinked
  auto missing =
      w->http()->Post("/v2/systemsharedmemory/region/r/register", body, "application/json");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 400);
  EXPECT_EQ(missing->body, small->body);
  EXPECT_EQ(nlohmann::json::parse(missing->body)["error"],
            "shared memory region \"r\": cannot use key \"" + key +
                "\" (it must name a POSIX shared memory object under \"/rs_\" owned by an "
                "allowed user that holds offset + byte_size)");
  auto status = w->http()->Get("/v2/systemsharedmemory/status");
  ASSERT_TRUE(status);
  EXPECT_EQ(status->body, "[]");
}

TEST(WorkerSharedMemory, BothProtocolsEndToEnd) {
  auto w = startHardeningWorker(kIrisRepo);
  ASSERT_TRUE(w);
  ModelInferResponse inline_reply;
  ASSERT_TRUE(w->infer(irisRequest(irisRow()), &inline_reply).ok());
  const std::string expected = logitsOf(inline_reply);
  ASSERT_EQ(expected.size(), 12u);

  ShmObject object(4096);
  ASSERT_TRUE(object.ok());
  object.writeValues<float>(64, irisRow());
  // Register over gRPC, read the status over HTTP.
  {
    grpc::ClientContext ctx;
    inference::SystemSharedMemoryRegisterRequest req;
    req.set_name("iris_in");
    req.set_key(object.key());
    req.set_offset(0);
    req.set_byte_size(1024);
    inference::SystemSharedMemoryRegisterResponse resp;
    ASSERT_TRUE(w->stub().SystemSharedMemoryRegister(&ctx, req, &resp).ok());
  }
  auto res = w->http()->Post("/v2/systemsharedmemory/region/iris_out/register",
                             R"({"key":")" + object.key() + R"(","offset":2048,"byte_size":1024})",
                             "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  res = w->http()->Get("/v2/systemsharedmemory/status");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body, R"([{"byte_size":1024,"key":")" + object.key() +
                           R"(","name":"iris_in","offset":0},{"byte_size":1024,"key":")" +
                           object.key() + R"(","name":"iris_out","offset":2048}])");
  {
    grpc::ClientContext ctx;
    inference::SystemSharedMemoryStatusRequest req;
    req.set_name("iris_out");
    inference::SystemSharedMemoryStatusResponse resp;
    ASSERT_TRUE(w->stub().SystemSharedMemoryStatus(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.regions().size(), 1u);
    EXPECT_EQ(resp.regions().at("iris_out").offset(), 2048u);
  }

  // gRPC: input from iris_in at 64, output to iris_out at 8.
  ModelInferRequest msg = irisRequest(irisRow());
  msg.clear_raw_input_contents();
  auto &in = *msg.mutable_inputs(0)->mutable_parameters();
  in[protocol::kShmRegionParameter].set_string_param("iris_in");
  in[protocol::kShmOffsetParameter].set_int64_param(64);
  in[protocol::kShmByteSizeParameter].set_int64_param(16);
  auto *out = msg.add_outputs();
  out->set_name("logits");
  auto &op = *out->mutable_parameters();
  op[protocol::kShmRegionParameter].set_string_param("iris_out");
  op[protocol::kShmOffsetParameter].set_int64_param(8);
  op[protocol::kShmByteSizeParameter].set_int64_param(12);
  ModelInferResponse reply;
  grpc::Status s = w->infer(msg, &reply);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(reply.raw_output_contents(0), "");
  EXPECT_EQ(reply.outputs(0).parameters().at(protocol::kShmRegionParameter).string_param(),
            "iris_out");
  std::vector<uint8_t> got = object.read(2048 + 8, 12);
  EXPECT_EQ(std::string(got.begin(), got.end()), expected);

  // HTTP: the same through JSON parameters, output at offset 100.
  const std::string body =
      R"({"inputs":[{"name":"features","datatype":"FP32","shape":[1,4],"parameters":)"
      R"({"shared_memory_region":"iris_in","shared_memory_offset":64,)"
      R"("shared_memory_byte_size":16}}],"outputs":[{"name":"logits","parameters":)"
      R"({"shared_memory_region":"iris_out","shared_memory_offset":100,)"
      R"("shared_memory_byte_size":12}}]})";
  res = w->http()->Post("/v2/models/iris_mlp/infer", body, "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->body, R"({"model_name":"iris_mlp","model_version":"","outputs":[{"name":)"
                       R"("logits","datatype":"FP32","shape":[1,3]}]})");
  got = object.read(2048 + 100, 12);
  EXPECT_EQ(std::string(got.begin(), got.end()), expected);

  // Out-of-range windows: INVALID_ARGUMENT / 400, nothing written.
  in[protocol::kShmOffsetParameter].set_int64_param(1020);
  s = w->infer(msg, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "model 'iris_mlp', request '1': input 'features': shared memory "
                               "region \"iris_in\": 16 bytes at offset 1020 run past the "
                               "region's 1024 bytes");
  in[protocol::kShmOffsetParameter].set_uint64_param(UINT64_MAX - 7);
  s = w->infer(msg, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  in[protocol::kShmOffsetParameter].set_int64_param(64);
  op[protocol::kShmOffsetParameter].set_int64_param(1016);
  s = w->infer(msg, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  op[protocol::kShmOffsetParameter].set_int64_param(8);

  // A second registration under a taken name; keys that are not shm objects.
  res = w->http()->Post("/v2/systemsharedmemory/region/iris_in/register",
                        R"({"key":")" + object.key() + R"(","byte_size":8})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 409);
  {
    grpc::ClientContext ctx;
    inference::SystemSharedMemoryRegisterRequest req;
    req.set_name("passwd");
    req.set_key("/etc/passwd");
    req.set_byte_size(8);
    inference::SystemSharedMemoryRegisterResponse resp;
    grpc::Status r = w->stub().SystemSharedMemoryRegister(&ctx, req, &resp);
    EXPECT_EQ(r.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  res = w->http()->Post("/v2/systemsharedmemory/region/x/register",
                        R"({"key":"../../etc/passwd","byte_size":8})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);

  // Unregistered: FAILED_PRECONDITION (HTTP 400), so the client re-registers.
  res = w->http()->Post("/v2/systemsharedmemory/region/iris_in/unregister", "", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  s = w->infer(msg, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(),
            "model 'iris_mlp', request '1': input 'features': shared memory region "
            "\"iris_in\" is not registered");
  res = w->http()->Post("/v2/models/iris_mlp/infer", body, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(nlohmann::json::parse(res->body, nullptr, false).value("error", ""),
            "model 'iris_mlp': input 'features': shared memory region \"iris_in\" is not "
            "registered")
      << res->body;
  res = w->http()->Get("/v2/systemsharedmemory/region/iris_in/status");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  {
    grpc::ClientContext ctx;
    inference::SystemSharedMemoryUnregisterRequest req; // empty name: every region
    inference::SystemSharedMemoryUnregisterResponse resp;
    ASSERT_TRUE(w->stub().SystemSharedMemoryUnregister(&ctx, req, &resp).ok());
  }
  EXPECT_EQ(w->service().sharedMemory().regionCount(), 0u);

  // The extension is advertised.
  res = w->http()->Get("/v2");
  ASSERT_TRUE(res);
  EXPECT_NE(res->body.find("\"extensions\":[\"binary_tensor_data\",\"model_repository\","
                           "\"statistics\",\"system_shared_memory\"]"),
            std::string::npos)
      << res->body;
}

TEST(WorkerRequestLog, HttpRequestThatDoesNotDecodeKeepsItsId) {
  auto w = startHardeningWorker(kIrisRepo);
  ASSERT_TRUE(w);
  LogCapture capture;
  // 3 values for shape [1,4]: refused while decoding, before any request object exists.
  auto res = w->http()->Post("/v2/models/iris_mlp/infer",
                             R"({"id":"h2","inputs":[{"name":"features","datatype":"FP32",)"
                             R"("shape":[1,4],"data":[1,2,3]}]})",
                             "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  // Not JSON at all: no id to report.
  res = w->http()->Post("/v2/models/iris_mlp/infer", "{\"id\":", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  std::vector<std::string> lines = capture.lines("request failed");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("warning request failed protocol=http model=\"iris_mlp\" id=\"h2\" "
                           "code=INVALID_ARGUMENT",
                           0),
            0u)
      << lines[0];
  EXPECT_EQ(lines[1].rfind("warning request failed protocol=http model=\"iris_mlp\" id=\"\" "
                           "code=INVALID_ARGUMENT",
                           0),
            0u)
      << lines[1];
}

TEST(WorkerRequestLog, EveryFailedRequestIsLoggedOnce) {
  auto w = startHardeningWorker(kIrisRepo);
  ASSERT_TRUE(w);
  LogCapture capture;
  ModelInferResponse reply;
  // Decoding error (gRPC), validation error (HTTP), unknown model (gRPC), and a success.
  ModelInferRequest bad = irisRequest(irisRow(), "a\n\"b");
  bad.mutable_raw_input_contents(0)->pop_back();
  EXPECT_FALSE(w->infer(bad, &reply).ok());
  auto res = w->http()->Post("/v2/models/iris_mlp/infer",
                             R"({"id":"h1","inputs":[{"name":"features","datatype":"FP32",)"
                             R"("shape":[1,3],"data":[1,2,3]}]})",
                             "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  ModelInferRequest unknown = irisRequest(irisRow(), "u");
  unknown.set_model_name("nope");
  EXPECT_FALSE(w->infer(unknown, &reply).ok());
  EXPECT_TRUE(w->infer(irisRequest(irisRow(), "ok"), &reply).ok());
  std::vector<std::string> lines = capture.lines("request failed");
  ASSERT_EQ(lines.size(), 3u);
  // The id's newline and quote stay inside one quoted value.
  EXPECT_EQ(lines[0],
            "warning request failed protocol=grpc model=\"iris_mlp\" id=\"a\\n\\\"b\" "
            "code=INVALID_ARGUMENT reason=\"model 'iris_mlp', request 'a\\n\\\"b': input "
            "'features': raw content has 15 bytes but shape [1,4] of FP32 needs 16 bytes\"");
  EXPECT_EQ(lines[1], "warning request failed protocol=http model=\"iris_mlp\" id=\"h1\" "
                      "code=INVALID_ARGUMENT reason=\"model 'iris_mlp', request 'h1': input "
                      "'features': shape [1,3] does not match the model's [-1,4]\"");
  EXPECT_EQ(lines[2], "warning request failed protocol=grpc model=\"nope\" id=\"u\" "
                      "code=NOT_FOUND reason=\"unknown model 'nope'\"");
  // Counted once each; the unknown model's name is not a label value.
  const std::string text = w->scrape();
  EXPECT_NE(text.find("worker_requests_total{gpu=\"\",worker=\"worker0\",model=\"iris_mlp\","
                      "status=\"INVALID_ARGUMENT\"} 2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("worker_requests_total{gpu=\"\",worker=\"worker0\",model=\"\",status="
                      "\"NOT_FOUND\"} 1"),
            std::string::npos);
  EXPECT_EQ(text.find("nope"), std::string::npos);
}

} // namespace
} // namespace rs::testing

namespace rs::testing {
namespace {

// An already expired `reactant_timeout_ns` is answered 504 before running, with the model
// and request named once (the scheduler's own "model '...'" is not repeated).
TEST(WorkerDeadline, ExpiredBudgetNamesTheModelOnce) {
  auto w = startHardeningWorker(kIrisRepo);
  ASSERT_NE(w, nullptr);
  const std::string row = R"("inputs":[{"name":"features","shape":[1,4],"datatype":"FP32",)"
                          R"("data":[1,2,3,4]}]})";
  auto res = w->http()->Post("/v2/models/iris_mlp/infer",
                             R"({"id":"t1","parameters":{"reactant_timeout_ns":0},)" + row,
                             "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 504);
  EXPECT_EQ(res->body,
            R"({"error":"model 'iris_mlp', request 't1': deadline exceeded before execution"})");
  res = w->http()->Post("/v2/models/iris_mlp/infer",
                        R"({"parameters":{"reactant_timeout_ns":-5},)" + row, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 504);
  EXPECT_EQ(res->body, R"({"error":"model 'iris_mlp': deadline exceeded before execution"})");
}

} // namespace
} // namespace rs::testing
