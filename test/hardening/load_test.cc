//===- test/hardening/load_test.cc - loadgen against a worker; SIGTERM under load
//
// A short mixed load (every valid and malformed kind, shared memory included, both
// protocols) against an in-process worker; and a real `reactant-server serve` process
// that gets SIGTERM while loadgen drives it: no valid request is lost (each is answered
// correctly or with an explicit UNAVAILABLE) and the process exits 0. The 5-minute soak
// with resident-memory sampling is `scripts/soak.sh` (docs/testing.md), not part of this
// suite.
//
//===----------------------------------------------------------------------===//
#include "client/load_generator.h"
#include "process_util.h"
#include "worker_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

namespace rs::testing {
namespace {

namespace fs = std::filesystem;

/// "kind: first unexpected answer" lines of a report, for failure messages.
std::string unexpectedOf(const client::LoadgenReport &r) { return r.text(); }

/// A load of `requests` requests from `concurrency` clients against worker `w`'s model.
client::LoadgenOptions loadFor(TestWorker &w, const std::string &model, int concurrency,
                               int64_t requests) {
  client::LoadgenOptions lo;
  lo.grpc_url = "127.0.0.1:" + std::to_string(w.worker().grpcPort());
  lo.http_url = "127.0.0.1:" + std::to_string(w.worker().httpPort());
  lo.model = model;
  lo.concurrency = concurrency;
  lo.duration_s = 0;
  lo.requests = requests;
  return lo;
}

TEST(Loadgen, EveryKindGetsTheExpectedAnswer) {
  WorkerSetup o;
  o.runtime_extra = ", profile: regulated"; // same program for every request: exact checks
  auto w = startHardeningWorker(kIrisRepo, o);
  ASSERT_TRUE(w);
  client::LoadgenOptions lo = loadFor(*w, "iris_mlp", 3, 900);
  lo.protocol = "both";
  lo.malformed_fraction = 0.6;
  lo.shared_memory = true;
  lo.rows = 2;
  lo.metrics_url = "127.0.0.1:" + std::to_string(w->worker().metricsPort());
  lo.rss_interval_s = 3600; // one sample at the start
  Result<client::LoadgenReport> r = client::runLoad(lo);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(r->requests, 900u);
  EXPECT_EQ(r->unexpected, 0u) << unexpectedOf(*r);
  // 6 valid kinds, and 15 malformed kinds over gRPC and 16 over HTTP.
  EXPECT_EQ(r->kinds.size(), 37u) << r->text();
  uint64_t ok = 0;
  for (const auto &[name, k] : r->kinds) {
    EXPECT_EQ(k.ok, k.sent) << name << "\n" << r->text();
    ok += k.ok;
  }
  EXPECT_EQ(ok, 900u);
  EXPECT_FALSE(r->rss.empty());
  // Every region the load registered is gone again.
  EXPECT_EQ(w->service().sharedMemory().regionCount(), 0u);
  // And the worker still answers a plain request.
  inference::ModelInferResponse reply;
  EXPECT_TRUE(w->infer(irisRequest(irisRow()), &reply).ok());
}

// --outputs narrows every request to the named outputs, and a reply must carry exactly
// those; --busy-poll answers the same as the blocking client.
TEST(Loadgen, RequestedOutputsAndBusyPolling) {
  WorkerSetup o;
  o.include = {"tiny_bert"};
  o.runtime_extra = ", profile: regulated";
  auto w = startHardeningWorker(kIrisRepo, o);
  ASSERT_TRUE(w);
  client::LoadgenOptions lo = loadFor(*w, "tiny_bert", 2, 40);
  lo.protocol = "grpc";
  lo.outputs = {"pooled"};
  for (bool busy : {false, true}) {
    lo.busy_poll = busy;
    lo.concurrency = busy ? 1 : 2; // a spinning client takes a core
    Result<client::LoadgenReport> r = client::runLoad(lo);
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    EXPECT_EQ(r->valid_ok, 40u) << "busy_poll " << busy << "\n" << r->text();
    EXPECT_EQ(r->unexpected, 0u) << r->text();
    EXPECT_NE(r->text().find(busy ? "client busy-polling, outputs pooled\n"
                                  : "client blocking, outputs pooled\n"),
              std::string::npos)
        << r->text();
  }
  lo.busy_poll = false;
  lo.protocol = "http";
  Result<client::LoadgenReport> http = client::runLoad(lo);
  ASSERT_TRUE(http.isOk()) << http.status().toString();
  EXPECT_EQ(http->valid_ok, 40u) << http->text();

  lo.outputs = {"pooled", "logits"};
  Result<client::LoadgenReport> unknown = client::runLoad(lo);
  ASSERT_FALSE(unknown.isOk());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message(),
            "loadgen: model 'tiny_bert' has no output 'logits' (its outputs: hidden, pooled)");
  lo.outputs = {"pooled", "pooled"};
  EXPECT_EQ(client::runLoad(lo).status().message(), "loadgen: output 'pooled' requested twice");
  lo.outputs = {""};
  EXPECT_EQ(client::runLoad(lo).status().message(),
            "loadgen: an output name is empty (give the names of outputs of model 'tiny_bert')");
  lo.outputs = {};
  lo.busy_poll = true;
  EXPECT_EQ(client::runLoad(lo).status().message(),
            "loadgen: busy polling is for gRPC only (protocol 'http')");
  lo.protocol = "grpc";
  lo.concurrency = 4;
  lo.cores = 4;
  EXPECT_EQ(client::runLoad(lo).status().message(),
            "loadgen: busy polling spins a core per client; 4 clients on 4 cores leave none for "
            "the server (use fewer than 4 clients, or no --busy-poll)");
}

TEST(Sigterm, NoValidRequestIsLostAndTheProcessExitsZero) {
  const fs::path dir =
      fs::temp_directory_path() / ("rs_hardening_sigterm_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const int grpc = freePort(), http = freePort(), metrics = freePort();
  ASSERT_TRUE(grpc > 0 && http > 0 && metrics > 0);
  std::ofstream(dir / "node.yaml")
      << "model_repo: \"" << kIrisRepo << "\"\n"
      << "base_port: " << grpc << "\n"
      << "metrics_base_port: " << metrics << "\n"
      << "global:\n"
      << "  endpoints: {host: 127.0.0.1, http_port: " << http << ", shared_memory: system}\n"
      << "  runtime: {executable_cache: false, profile: regulated}\n"
      << "  models_include: [iris_mlp]\n";
  const std::string log = (dir / "server.log").string();
  pid_t pid = spawnProcess({RS_SERVER_BINARY, "serve", "--config", (dir / "node.yaml").string(),
                            "--exit-timeout-secs", "60"},
                           log);
  ASSERT_GT(pid, 0);
  // Wait (polling) until it is ready: the server is another process, and its /readyz is the
  // only way to see that.
  httplib::Client probe("127.0.0.1", metrics);
  probe.set_connection_timeout(1, 0);
  bool ready = false;
  for (int i = 0; i < 1200 && !ready; ++i) {
    auto r = probe.Get("/readyz");
    ready = r && r->status == 200;
    if (!ready)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(ready) << readFile(log);

  std::atomic<bool> cancel{false};
  client::LoadgenOptions lo;
  lo.protocol = "both";
  lo.grpc_url = "127.0.0.1:" + std::to_string(grpc);
  lo.http_url = "127.0.0.1:" + std::to_string(http);
  lo.model = "iris_mlp";
  lo.concurrency = 4;
  lo.duration_s = 600; // until cancelled
  lo.malformed_fraction = 0.2;
  lo.shared_memory = true;
  lo.cancel = &cancel;
  auto load = std::async(std::launch::async, [&] { return client::runLoad(lo); });
  // Let the load run, then SIGTERM the server in the middle of it.
  auto served = [&] {
    auto r = probe.Get("/metrics");
    if (!r)
      return 0.0;
    std::optional<double> v = client::scrapeValue(r->body, "worker_requests_served_total");
    return v ? *v : 0.0;
  };
  // The served count is the other process's; its metrics are the only way to read it.
  for (int i = 0; i < 1200 && served() < 200; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  const int status = waitProcess(pid);
  cancel = true;
  Result<client::LoadgenReport> r = load.get();
  EXPECT_EQ(status, 0) << readFile(log);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(r->unexpected, 0u) << r->text();
  uint64_t ok = 0;
  for (const auto &[name, k] : r->kinds)
    if (!k.malformed)
      ok += k.ok;
  EXPECT_GE(ok, 150u) << r->text();
  const std::string text = readFile(log);
  EXPECT_NE(text.find("received SIGTERM, shutting down"), std::string::npos) << text;
  EXPECT_NE(text.find("shutdown complete drained=true"), std::string::npos) << text;
  fs::remove_all(dir);
}

} // namespace
} // namespace rs::testing
