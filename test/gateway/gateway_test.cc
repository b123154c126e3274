//===- test/gateway/gateway_test.cc - A gateway over three in-process workers ===//
//
// Each test checks which worker served each request from the workers' own counters
// (worker_requests_total on their /metrics), with the gates (fleet.h) deciding what is in
// flight where.
//
//===----------------------------------------------------------------------===//
#include "fleet.h"

#include "protocol/grpc_codec.h"
#include "protocol/http_codec.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <iostream>
#include <set>

namespace rs::gateway::testing {
namespace {

constexpr const char *kIris = "iris_mlp";
/// The regulated profile, with the fifo discipline lpt_packing needs.
constexpr const char *kRegulated = "profile: regulated, numerics: f32";
constexpr const char *kFifo = "  scheduler: {discipline: fifo}\n";

/// "w1 w2 w0 ..." for the record.
std::string names(const std::vector<int> &who) {
  std::string out;
  for (int w : who)
    out += (out.empty() ? "w" : " w") + std::to_string(w);
  return out;
}

/// Which worker's counter moved between two readings (-1 if none or several).
int servedBy(const std::vector<int64_t> &before, const std::vector<int64_t> &after) {
  int who = -1;
  for (size_t i = 0; i < before.size(); ++i) {
    if (after[i] == before[i])
      continue;
    if (after[i] != before[i] + 1 || who != -1)
      return -1;
    who = static_cast<int>(i);
  }
  return who;
}

std::string outputBytes(const inference::ModelInferResponse &r) {
  std::string all;
  for (const std::string &b : r.raw_output_contents())
    all += b;
  return all;
}

class GatewayTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Result<std::unique_ptr<Fleet>> f = Fleet::start(3, {kIris}, kRegulated, kFifo);
    ASSERT_TRUE(f.isOk()) << f.status().toString();
    fleet_ = std::move(f).value().release();
  }
  static void TearDownTestSuite() {
    delete fleet_;
    fleet_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(fleet_, nullptr); }

  std::unique_ptr<TestGateway> gateway(const std::string &scheduling) {
    Result<std::unique_ptr<TestGateway>> g = TestGateway::start(fleet_->gatewayYaml(scheduling));
    EXPECT_TRUE(g.isOk()) << g.status().toString();
    return g.isOk() ? std::move(g).value() : nullptr;
  }

  static Fleet *fleet_;
};

Fleet *GatewayTest::fleet_ = nullptr;

TEST_F(GatewayTest, RoundRobinRotatesOverTheWorkers) {
  auto gw = gateway("  mode: round_robin\n");
  ASSERT_TRUE(gw);
  std::vector<int> who;
  for (int i = 0; i < 9; ++i) {
    std::vector<int64_t> before = fleet_->servedAll(kIris);
    Result<inference::ModelInferResponse> r = gw->infer(kIris, 1);
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    who.push_back(servedBy(before, fleet_->servedAll(kIris)));
  }
  std::cout << "[ routing ] round_robin, 9 requests one by one: " << names(who) << "\n";
  // Each request went to the next worker in turn: w_k, w_k+1, w_k+2, w_k, ...
  ASSERT_GE(who[0], 0);
  for (int i = 0; i < 9; ++i)
    EXPECT_EQ(who[i], (who[0] + i) % 3) << "request " << i;
}

TEST_F(GatewayTest, LeastOutstandingSendsToTheIdleWorker) {
  auto gw = gateway("  mode: least_outstanding\n  work_basis: requests\n");
  ASSERT_TRUE(gw);
  std::vector<int64_t> arrived(3);
  for (size_t i = 0; i < 3; ++i) {
    fleet_->worker(i).gate->close();
    arrived[i] = fleet_->worker(i).gate->arrived();
  }
  // Three requests held in flight: one on each worker (ties rotate, a busy worker loses).
  std::vector<std::future<Result<inference::ModelInferResponse>>> calls;
  std::vector<size_t> holder;
  const int64_t arrived_before = fleet_->arrivals().count();
  for (int n = 1; n <= 3; ++n) {
    calls.push_back(gw->inferAsync(kIris, 1));
    // Wait until it reached a gate; note which.
    ASSERT_TRUE(fleet_->arrivals().waitFor(arrived_before + n));
    int64_t total = 0;
    for (size_t i = 0; i < 3; ++i)
      total += fleet_->worker(i).gate->arrived() - arrived[i];
    ASSERT_EQ(total, n);
    for (size_t i = 0; i < 3; ++i)
      if (fleet_->worker(i).gate->arrived() - arrived[i] == 1 &&
          std::find(holder.begin(), holder.end(), i) == holder.end())
        holder.push_back(i);
  }
  ASSERT_EQ(holder.size(), 3u) << "each held request on a different worker";
  std::cout << "[ routing ] least_outstanding/requests, 3 held: "
            << names({int(holder[0]), int(holder[1]), int(holder[2])}) << "; after w" << holder[1]
            << " finished, the 4th went to w" << holder[1] << "\n";
  // The second request's worker finishes; the fourth request must go there.
  const size_t idle = holder[1];
  std::vector<int64_t> before = fleet_->servedAll(kIris);
  fleet_->worker(idle).gate->open();
  ASSERT_TRUE(calls[1].get().isOk());
  Result<inference::ModelInferResponse> fourth = gw->infer(kIris, 1);
  ASSERT_TRUE(fourth.isOk()) << fourth.status().toString();
  std::vector<int64_t> after = fleet_->servedAll(kIris);
  EXPECT_EQ(after[idle] - before[idle], 2);
  for (size_t i = 0; i < 3; ++i) {
    if (i != idle) {
      EXPECT_EQ(after[i], before[i]) << "worker " << i << " is busy and gets nothing";
    }
  }
  for (size_t i = 0; i < 3; ++i)
    fleet_->worker(i).gate->open();
  for (size_t i : {0, 2})
    EXPECT_TRUE(calls[i].get().isOk());
}

/// Sends `n` requests one at a time, each held at a closed gate before the next is sent;
/// returns the worker each one reached. The gates stay closed.
std::vector<int>
holdOneByOne(TestGateway &gw, int n,
             std::vector<std::future<Result<inference::ModelInferResponse>>> &calls, Fleet &fleet) {
  std::vector<int> who;
  std::vector<int64_t> arrived(fleet.size());
  for (size_t i = 0; i < fleet.size(); ++i) {
    fleet.worker(i).gate->close();
    arrived[i] = fleet.worker(i).gate->arrived();
  }
  const int64_t arrived_before = fleet.arrivals().count();
  for (int k = 0; k < n; ++k) {
    calls.push_back(gw.inferAsync(kIris, 1));
    int found = -1;
    if (fleet.arrivals().waitFor(arrived_before + k + 1))
      for (size_t i = 0; i < fleet.size(); ++i)
        if (fleet.worker(i).gate->arrived() > arrived[i]) {
          found = static_cast<int>(i);
          arrived[i] = fleet.worker(i).gate->arrived();
        }
    who.push_back(found);
  }
  return who;
}

/// lpt_packing over every worker, the quantum Q = round(0.125 x 32) = 4 items (iris_mlp's
/// largest compiled batch is 32), placed by an operator repack after one request.
std::unique_ptr<TestGateway> placedLpt(Fleet &fleet, const char *fill_mode) {
  Result<std::unique_ptr<TestGateway>> g = TestGateway::start(fleet.gatewayYaml(
      std::string("  mode: lpt_packing\n  work_basis: items\n  default_replicas: all\n"
                  "  routing_fill_factor: 0.125\n  routing_fill_mode: ") +
      fill_mode + "\n"));
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  if (!g.isOk())
    return nullptr;
  std::unique_ptr<TestGateway> gw = std::move(g).value();
  EXPECT_TRUE(gw->infer(kIris, 1).isOk()); // seen once: no longer cold
  grpc::ClientContext ctx;
  reactant_control::RepackRequest req;
  req.set_wait_seconds(5);
  reactant_control::RepackResponse resp;
  grpc::Status s = gw->control().Repack(&ctx, req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(resp.completed());
  EXPECT_EQ(resp.repack().last_trigger(), "operator");
  EXPECT_EQ(resp.repack().last_models_placed(), 1);
  grpc::ClientContext sctx;
  reactant_control::GetSchedulingStatusResponse status;
  s = gw->control().GetSchedulingStatus(&sctx, {}, &status);
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(status.mode(), "lpt_packing");
  EXPECT_EQ(status.models_size(), 1);
  if (status.models_size() == 1) {
    EXPECT_EQ(status.models(0).effective_replicas(), 3);
    EXPECT_EQ(status.models(0).max_batch(), 32);
    EXPECT_EQ(status.models(0).fill_quantum(), 4);
    EXPECT_EQ(status.models(0).fill_mode(), fill_mode);
  }
  return gw;
}

TEST_F(GatewayTest, LptRunConcentratesRequestsUnderTheRegulatedProfile) {
  auto gw = placedLpt(*fleet_, "run");
  ASSERT_TRUE(gw);
  std::vector<int64_t> before = fleet_->servedAll(kIris);
  std::vector<std::future<Result<inference::ModelInferResponse>>> calls;
  std::vector<int> who = holdOneByOne(*gw, 5, calls, *fleet_);
  std::cout << "[ routing ] lpt_packing run, Q=4, 5 held: " << names(who) << "\n";
  // Coalescing is off on the workers, yet a run puts Q = 4 requests on one replica before
  // the next run opens on another: requests queue on one worker while others are idle.
  ASSERT_GE(who[0], 0);
  for (int k = 1; k < 4; ++k)
    EXPECT_EQ(who[k], who[0]) << "request " << k;
  EXPECT_GE(who[4], 0);
  EXPECT_NE(who[4], who[0]);
  for (size_t i = 0; i < 3; ++i)
    fleet_->worker(i).gate->open();
  for (auto &c : calls)
    EXPECT_TRUE(c.get().isOk());
  std::vector<int64_t> after = fleet_->servedAll(kIris);
  EXPECT_EQ(after[who[0]] - before[who[0]], 4);
  EXPECT_EQ(after[who[4]] - before[who[4]], 1);
}

TEST_F(GatewayTest, LptSpreadDistributesRequestsUnderTheRegulatedProfile) {
  auto gw = placedLpt(*fleet_, "spread");
  ASSERT_TRUE(gw);
  std::vector<int64_t> before = fleet_->servedAll(kIris);
  std::vector<std::future<Result<inference::ModelInferResponse>>> calls;
  std::vector<int> who = holdOneByOne(*gw, 6, calls, *fleet_);
  std::cout << "[ routing ] lpt_packing spread, 6 held: " << names(who) << "\n";
  // spread equalises in-flight items: two requests on each replica.
  std::map<int, int> count;
  for (int w : who)
    ++count[w];
  EXPECT_EQ(count, (std::map<int, int>{{0, 2}, {1, 2}, {2, 2}}));
  for (size_t i = 0; i < 3; ++i)
    fleet_->worker(i).gate->open();
  for (auto &c : calls)
    EXPECT_TRUE(c.get().isOk());
  std::vector<int64_t> after = fleet_->servedAll(kIris);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(after[i] - before[i], 2) << "worker " << i;
}

TEST_F(GatewayTest, RegulatedProfileGivesIdenticalBytesFromEveryWorker) {
  auto gw = gateway("  mode: round_robin\n");
  ASSERT_TRUE(gw);
  std::set<int> workers;
  std::set<std::string> bytes;
  for (int i = 0; i < 6; ++i) {
    std::vector<int64_t> before = fleet_->servedAll(kIris);
    Result<inference::ModelInferResponse> r = gw->infer(kIris, 3, 0.5f);
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    workers.insert(servedBy(before, fleet_->servedAll(kIris)));
    bytes.insert(outputBytes(*r));
  }
  EXPECT_EQ(workers, (std::set<int>{0, 1, 2}));
  ASSERT_EQ(bytes.size(), 1u) << "the same request gave different bytes on different workers";
  EXPECT_EQ(bytes.begin()->size(), 3u * 3u * sizeof(float)); // logits [3, 3]

  // The REST front-end forwards the same request and returns the same bytes.
  protocol::InferRequest request;
  Result<protocol::InferRequest> decoded =
      protocol::decodeModelInferRequest(makeRequest(kIris, 3, 0.5f), protocol::Clock::now());
  ASSERT_TRUE(decoded.isOk());
  protocol::OutputEncoding binary;
  binary.binary_by_default = true;
  protocol::HttpBody body = protocol::encodeHttpInferRequest(*decoded, true, binary);
  httplib::Client cli("127.0.0.1", gw->gateway().httpPort());
  httplib::Headers headers = {
      {protocol::kInferenceHeaderContentLength, std::to_string(*body.json_length)}};
  httplib::Result res =
      cli.Post("/v2/models/iris_mlp/infer", headers, body.body, "application/octet-stream");
  Result<protocol::InferResponse> http = inferReply(res);
  ASSERT_TRUE(http.isOk()) << http.status().toString();
  ASSERT_EQ(http->outputs.size(), 1u);
  const auto span = http->outputs[0].tensor.bytes();
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(span.data()), span.size()), *bytes.begin());
}

TEST_F(GatewayTest, RoutesAroundAWorkerThatStoppedAnswering) {
  // A fleet of its own: one worker's gRPC server goes away.
  Result<std::unique_ptr<Fleet>> f = Fleet::start(3, {kIris});
  ASSERT_TRUE(f.isOk()) << f.status().toString();
  Fleet &fleet = **f;
  Result<std::unique_ptr<TestGateway>> g = TestGateway::start(
      fleet.gatewayYaml("  mode: round_robin\n"),
      {{"REACTANT_GATEWAY_HEALTH_INTERVAL_SECONDS", "3600"}}); // no probes during the test
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  TestGateway &gw = **g;
  fleet.worker(1).front->shutdown();
  std::vector<int64_t> before = fleet.servedAll(kIris);
  for (int i = 0; i < 6; ++i) {
    Result<inference::ModelInferResponse> r = gw.infer(kIris, 1);
    EXPECT_TRUE(r.isOk()) << "request " << i << ": " << r.status().toString();
  }
  std::vector<int64_t> after = fleet.servedAll(kIris);
  EXPECT_EQ(after[1], before[1]);
  EXPECT_EQ((after[0] - before[0]) + (after[2] - before[2]), 6);
  // The failed connect took w1 out of routing until a probe says it is ready.
  EXPECT_FALSE(gw.gateway().router().workerReady(1));
  gw.gateway().probeNow();
  EXPECT_FALSE(gw.gateway().router().workerReady(1));
  EXPECT_TRUE(gw.gateway().router().workerReady(0));
}

TEST_F(GatewayTest, AnswersHealthMetadataAndErrors) {
  auto gw = gateway("  mode: round_robin\n");
  ASSERT_TRUE(gw);
  {
    grpc::ClientContext ctx;
    inference::ServerReadyResponse r;
    ASSERT_TRUE(gw->stub().ServerReady(&ctx, {}, &r).ok());
    EXPECT_TRUE(r.ready());
  }
  {
    grpc::ClientContext ctx;
    inference::ServerMetadataResponse r;
    ASSERT_TRUE(gw->stub().ServerMetadata(&ctx, {}, &r).ok());
    EXPECT_EQ(r.name(), "ReactantServerGateway");
    EXPECT_EQ(std::vector<std::string>(r.extensions().begin(), r.extensions().end()),
              (std::vector<std::string>{"binary_tensor_data", "statistics"}));
  }
  {
    grpc::ClientContext ctx;
    inference::ModelMetadataRequest req;
    req.set_name(kIris);
    inference::ModelMetadataResponse r;
    ASSERT_TRUE(gw->stub().ModelMetadata(&ctx, req, &r).ok());
    ASSERT_EQ(r.inputs_size(), 1);
    EXPECT_EQ(r.inputs(0).name(), "features");
    EXPECT_EQ(r.inputs(0).shape(0), -1);
  }
  {
    grpc::ClientContext ctx;
    inference::ModelReadyRequest req;
    req.set_name(kIris);
    inference::ModelReadyResponse r;
    ASSERT_TRUE(gw->stub().ModelReady(&ctx, req, &r).ok());
    EXPECT_TRUE(r.ready());
  }
  {
    grpc::ClientContext ctx;
    inference::RepositoryIndexRequest req;
    inference::RepositoryIndexResponse r;
    ASSERT_TRUE(gw->stub().RepositoryIndex(&ctx, req, &r).ok());
    ASSERT_EQ(r.models_size(), 1);
    EXPECT_EQ(r.models(0).name(), kIris);
    EXPECT_EQ(r.models(0).state(), "READY");
  }
  // An unknown model: NOT_FOUND after one refresh; a bad request: the worker's
  // INVALID_ARGUMENT, passed through.
  Result<inference::ModelInferResponse> unknown = gw->infer("no_such_model", 1);
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(unknown.status().message(), "model 'no_such_model' is not served by any ready worker");
  inference::ModelInferRequest bad = makeRequest(kIris, 1, 1.0f);
  bad.mutable_inputs(0)->set_name("wrong");
  grpc::ClientContext ctx;
  inference::ModelInferResponse resp;
  grpc::Status s = gw->stub().ModelInfer(&ctx, bad, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("wrong"), std::string::npos) << s.error_message();
  // A deadline already spent is DEADLINE_EXCEEDED.
  grpc::ClientContext late;
  late.set_deadline(std::chrono::system_clock::now() - std::chrono::seconds(1));
  s = gw->stub().ModelInfer(&late, makeRequest(kIris, 1, 1.0f), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // Admin port.
  int status = 0;
  EXPECT_EQ(gw->adminGet("/healthz", &status), "ok");
  EXPECT_EQ(status, 200);
  gw->adminGet("/readyz", &status);
  EXPECT_EQ(status, 200);
  // Mutators are lpt_packing only.
  grpc::ClientContext pctx;
  reactant_control::SetSchedulingPolicyRequest preq;
  preq.add_update_mask("hysteresis");
  reactant_control::SetSchedulingPolicyResponse presp;
  EXPECT_EQ(gw->control().SetSchedulingPolicy(&pctx, preq, &presp).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(GatewayTest, MetricsMergeTheWorkersWithTheirWorkerLabel) {
  auto gw = gateway("  mode: round_robin\n");
  ASSERT_TRUE(gw);
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(gw->infer(kIris, 1).isOk());
  int status = 0;
  const std::string text = gw->adminGet("/metrics", &status);
  ASSERT_EQ(status, 200);
  // The gateway's own series.
  EXPECT_GE(sampleValue(text, "gateway_requests_total",
                        {{"rpc", "ModelInfer"}, {"model", kIris}, {"status", "OK"}}),
            3);
  for (const char *w : {"w0", "w1", "w2"}) {
    EXPECT_EQ(sampleValue(text, "gateway_worker_ready", {{"worker", w}}), 1) << w;
    EXPECT_EQ(sampleValue(text, "gateway_worker_metrics_up", {{"worker", w}}), 1) << w;
    // Each worker's series, labelled with its name, equal to its own /metrics.
    EXPECT_GE(sampleValue(text, "worker_requests_total",
                          {{"model", kIris}, {"status", "OK"}, {"worker", w}}),
              1)
        << w;
  }
  EXPECT_EQ(sampleValue(text, "gateway_routing_table_size", {}), 1);
  // One HELP and one TYPE line per family.
  for (const char *family :
       {"worker_requests_total", "worker_request_latency_seconds", "gateway_requests_total"}) {
    size_t count = 0, at = 0;
    const std::string type = std::string("# TYPE ") + family + " ";
    while ((at = text.find(type, at)) != std::string::npos) {
      ++count;
      ++at;
    }
    EXPECT_EQ(count, 1u) << family;
  }
}

} // namespace
} // namespace rs::gateway::testing
