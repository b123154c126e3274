//===- test/lifecycle/live_worker.h - A real worker over a temporary repository ===//
//
// Starts server::Worker (common/test_worker.h) on a model repository
// with extra `global:` settings, and talks to it over gRPC with client::KServeClient, as
// a user would.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "client/kserve_client.h"
#include "common/test_worker.h"
#include "config/node_config.h"
#include "protocol/proto/grpc_service.grpc.pb.h"
#include "protocol/proto/reactant_control_v1.grpc.pb.h"
#include "server/worker.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace rs::lifecycle_test {

/// A started worker plus a gRPC client of it (KServeClient is thread-safe).
struct LiveWorker {
  std::unique_ptr<testing::TestWorker> harness;
  server::Worker *worker = nullptr;                           // harness's
  inference::GRPCInferenceService::Stub *inference = nullptr; // harness's
  std::unique_ptr<client::KServeClient> client;
  std::unique_ptr<reactant_control::ControlService::Stub> control;

  /// A fresh HTTP client of the worker (httplib clients are not thread-safe).
  std::unique_ptr<httplib::Client> http() const { return harness->http(); }

  /// Starts a worker on `root`; `global_yaml` is the node file's `global:` block body,
  /// each line indented by two spaces. `weight_arena_bytes` > 0 replaces the host memory
  /// as the weight cache's arena (Worker::setWeightArenaBytes).
  static Result<std::unique_ptr<LiveWorker>>
  start(const std::string &root, const std::string &global_yaml, int64_t weight_arena_bytes = 0) {
    const std::string yaml = "model_repo: \"" + root +
                             "\"\nbase_port: 18001\nmetrics_base_port: 18002\nglobal:\n"
                             "  endpoints: {host: 127.0.0.1, http_port: 18000}\n" +
                             global_yaml;
    RS_ASSIGN_OR_RETURN(config::WorkerConfig cfg, testing::firstWorker(yaml, "<lifecycle>"));
    auto live = std::make_unique<LiveWorker>();
    RS_ASSIGN_OR_RETURN(live->harness, testing::TestWorker::start(cfg, weight_arena_bytes));
    live->worker = &live->harness->worker();
    live->inference = &live->harness->stub();
    live->control = reactant_control::ControlService::NewStub(live->harness->channel());
    client::KServeClientOptions o;
    o.url = live->harness->grpcTarget();
    RS_ASSIGN_OR_RETURN(live->client, client::KServeClient::create(o));
    return live;
  }

  /// ModelInfer of `model` on `input` (input "features"); the first output's floats.
  Result<std::vector<float>> infer(const std::string &model, const Tensor &input) {
    protocol::InferRequest r;
    r.model_name = model;
    r.inputs.push_back({"features", input});
    RS_ASSIGN_OR_RETURN(protocol::InferResponse resp, client->infer(r));
    if (resp.outputs.empty())
      return internalError() << "model '" << model << "': a response without outputs";
    const Tensor &out = resp.outputs.front().tensor;
    return std::vector<float>(out.dataAs<float>(), out.dataAs<float>() + out.numElements());
  }
};

/// Waits until `done()` holds, checking every 10 ms; false after `limit` (a safety net
/// so a broken build fails instead of hanging, not a timing assertion).
inline bool waitUntil(const std::function<bool()> &done,
                      std::chrono::seconds limit = std::chrono::seconds(120)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

} // namespace rs::lifecycle_test
