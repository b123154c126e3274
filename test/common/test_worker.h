//===- test/common/test_worker.h - A real worker on loopback for tests -----===//
//
// The one way tests start a server::Worker in-process: a node file's first worker, every
// front-end on an ephemeral loopback port (WorkerOptions::ephemeral_ports, so tests run
// in parallel never share a port), with a gRPC stub (no message size limits) and HTTP
// clients of it. The folders' own helpers (e2e's TestServer, lifecycle's LiveWorker, ...)
// add their protocol calls on top.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "config/node_config.h"
#include "protocol/proto/grpc_service.grpc.pb.h"
#include "server/worker.h"

#include <grpcpp/grpcpp.h>
#include <httplib.h>

#include <functional>
#include <memory>
#include <string>

namespace rs::testing {

/// Worker 0 of the node file `yaml` (named `file` in errors, and the base of its relative
/// paths), resolved against `env`.
Result<config::WorkerConfig> firstWorker(const std::string &yaml,
                                         const std::string &file = "<test node file>",
                                         const config::Environment &env = {});

/// A started worker on `config` with ephemeral ports; `weight_arena_bytes` > 0 replaces
/// the host memory as the weight cache's arena (Worker::setWeightArenaBytes);
/// `before_dispatch` is WorkerOptions::before_dispatch. Errors: those of Worker::start().
Result<std::unique_ptr<server::Worker>>
startWorker(const config::WorkerConfig &config, int64_t weight_arena_bytes = 0,
            std::function<void(const std::string &)> before_dispatch = nullptr);

/// A started worker and clients of it; shut down at the end.
class TestWorker {
public:
  /// startWorker(config, weight_arena_bytes, before_dispatch) plus a gRPC channel to it.
  static Result<std::unique_ptr<TestWorker>>
  start(const config::WorkerConfig &config, int64_t weight_arena_bytes = 0,
        std::function<void(const std::string &)> before_dispatch = nullptr);
  ~TestWorker();
  TestWorker(const TestWorker &) = delete;
  TestWorker &operator=(const TestWorker &) = delete;

  server::Worker &worker() { return *worker_; }
  server::WorkerService &service() { return worker_->service(); }
  const std::shared_ptr<grpc::Channel> &channel() const { return channel_; }
  inference::GRPCInferenceService::Stub &stub() { return *stub_; }
  /// "127.0.0.1:<grpc port>".
  std::string grpcTarget() const;
  /// A fresh HTTP client of the KServe port (httplib clients are not thread-safe: one per
  /// thread), read timeout 60 s.
  std::unique_ptr<httplib::Client> http() const;
  /// The same for the metrics port.
  std::unique_ptr<httplib::Client> metrics() const;
  /// GET /metrics on the metrics port; "" unless 200.
  std::string scrape() const;
  /// ModelInfer over gRPC; returns the status and fills `reply`.
  grpc::Status infer(const inference::ModelInferRequest &msg, inference::ModelInferResponse *reply);

private:
  TestWorker() = default;
  std::unique_ptr<server::Worker> worker_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
};

} // namespace rs::testing
