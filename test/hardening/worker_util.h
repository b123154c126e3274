//===- test/hardening/worker_util.h - A real worker on loopback -------------===//
//
// Starts server::Worker on the shared fixtures' iris_mlp (features FP32 [-1,4] -> logits
// FP32 [-1,3]) with every front-end on a free loopback port, and builds requests for it.
// The executable cache is off: ../shared is read-only material.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "config/node_config.h"
#include "protocol/grpc_codec.h"
#include "protocol/proto/grpc_service.grpc.pb.h"
#include "server/worker.h"
#include "server/worker_service.h"

#include <grpcpp/grpcpp.h>
#include <httplib.h>

#include <memory>
#include <string>
#include <vector>

namespace rs::testing {

inline const std::string kShared = RS_SHARED_DIR;
inline const std::string kIrisRepo = kShared + "/fixtures/bundles";

class TestWorker {
public:
  struct Options {
    /// The node file's `global:` body besides `endpoints` and `runtime`, indented by two
    /// spaces, e.g. "  grpc: {max_recv_msg_bytes: 4096}\n".
    std::string global_yaml;
    /// models_include (empty: every bundle of the repository).
    std::vector<std::string> include = {"iris_mlp"};
    /// Added inside `runtime: {...}` and `endpoints: {...}`, e.g. ", profile: regulated".
    std::string runtime_extra;
    std::string endpoints_extra;
  };

  static std::unique_ptr<TestWorker> start(const std::string &model_repo) {
    return start(model_repo, Options());
  }
  static std::unique_ptr<TestWorker> start(const std::string &model_repo, const Options &o) {
    std::string yaml = "model_repo: \"" + model_repo +
                       "\"\nbase_port: 18001\nmetrics_base_port: 18002\nglobal:\n"
                       "  endpoints: {host: 127.0.0.1, http_port: 18000" +
                       o.endpoints_extra + "}\n  runtime: {executable_cache: false" +
                       o.runtime_extra + "}\n";
    if (!o.include.empty()) {
      yaml += "  models_include: [";
      for (size_t i = 0; i < o.include.size(); ++i)
        yaml += (i ? ", " : "") + o.include[i];
      yaml += "]\n";
    }
    yaml += o.global_yaml;
    Result<config::NodeConfig> node = config::parseNodeFile(yaml, "<hardening>", {});
    if (!node.isOk())
      return nullptr;
    Result<config::WorkerConfig> cfg = config::resolveWorker(*node, 0);
    if (!cfg.isOk())
      return nullptr;
    auto w = std::unique_ptr<TestWorker>(new TestWorker());
    w->worker_ = std::make_unique<server::Worker>(
        server::WorkerOptions{.config = *cfg, .ephemeral_ports = true});
    if (!w->worker_->start().isOk())
      return nullptr;
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);
    w->stub_ = inference::GRPCInferenceService::NewStub(
        grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(w->worker_->grpcPort()),
                                  grpc::InsecureChannelCredentials(), args));
    return w;
  }
  ~TestWorker() {
    if (worker_)
      worker_->shutdown();
  }

  server::Worker &worker() { return *worker_; }
  server::WorkerService &service() {
    return static_cast<server::WorkerService &>(worker_->service());
  }
  inference::GRPCInferenceService::Stub &stub() { return *stub_; }
  std::unique_ptr<httplib::Client> http() const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", worker_->httpPort());
    c->set_read_timeout(60, 0);
    return c;
  }
  std::unique_ptr<httplib::Client> metrics() const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", worker_->metricsPort());
    c->set_read_timeout(60, 0);
    return c;
  }
  std::string scrape() const {
    auto r = metrics()->Get("/metrics");
    return r && r->status == 200 ? r->body : std::string();
  }

  /// ModelInfer over gRPC; returns the status and fills `reply`.
  grpc::Status infer(const inference::ModelInferRequest &msg,
                     inference::ModelInferResponse *reply) {
    grpc::ClientContext ctx;
    return stub_->ModelInfer(&ctx, msg, reply);
  }

private:
  TestWorker() = default;
  std::unique_ptr<server::Worker> worker_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
};

/// iris_mlp features for one row.
inline std::vector<float> irisRow() { return {5.1f, 3.5f, 1.4f, 0.2f}; }

/// A gRPC request for iris_mlp with one row of `features`, raw contents.
inline inference::ModelInferRequest irisRequest(const std::vector<float> &features,
                                                const std::string &id = "1") {
  protocol::InferRequest r;
  r.model_name = "iris_mlp";
  r.id = id;
  r.inputs.push_back(
      {"features", Tensor::copyOf(DType::kF32, {1, 4},
                                  {reinterpret_cast<const uint8_t *>(features.data()),
                                   features.size() * sizeof(float)})});
  return protocol::encodeModelInferRequest(r);
}

/// The JSON body of the same request.
inline std::string irisJson(const std::vector<float> &f, const std::string &id = "1") {
  std::string data;
  for (size_t i = 0; i < f.size(); ++i)
    data += (i ? "," : "") + std::to_string(f[i]);
  return R"({"id":")" + id + R"(","inputs":[{"name":"features","datatype":"FP32","shape":[1,4],)" +
         R"("data":[)" + data + "]}]}";
}

} // namespace rs::testing
