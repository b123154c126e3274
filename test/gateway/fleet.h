//===- test/gateway/fleet.h - Workers in-process behind a gateway -----------===//
//
// A fleet for gateway tests: N real workers (server::Worker, every port a free loopback
// port) on examples/model_repo, each reached by the gateway through a Gate: an
// InferenceService in front of the worker's own service that passes calls through, or
// holds them while closed, so a test decides exactly what is in flight where (a gate may
// also serve a BYTES echo model of its own, which no executable could). The
// gateway talks gRPC to the gates' servers; per-worker counters come from each worker's
// /metrics (worker_requests_total).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/grpc_server.h"
#include "gateway/gateway.h"
#include "protocol/proto/grpc_service.grpc.pb.h"
#include "protocol/proto/reactant_control_v1.grpc.pb.h"
#include "protocol/service.h"
#include "protocol/shared_memory.h"
#include "server/worker.h"

#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace httplib {
class Result;
} // namespace httplib

namespace rs::gateway::testing {

inline const std::string kModelRepo = std::string(RS_SOURCE_DIR) + "/examples/model_repo";

/// Counts the calls that reached any gate of a fleet, so that a test waits for the next one
/// whichever gate it reaches.
class Arrivals {
public:
  void note() {
    std::lock_guard lock(mu_);
    ++count_;
    cv_.notify_all();
  }
  int64_t count() const {
    std::lock_guard lock(mu_);
    return count_;
  }
  /// Waits until `n` calls arrived in total (false after 30 s).
  bool waitFor(int64_t n) const {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(30), [&] { return count_ >= n; });
  }

private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  int64_t count_ = 0;
};

/// Passes calls to `inner`, or holds ModelInfer calls while closed; may also serve a BYTES
/// echo model of its own (echoBytes()).
class Gate final : public protocol::InferenceService, public protocol::ModelControl {
public:
  /// `arrivals` (may be null) counts this gate's calls too.
  Gate(protocol::InferenceService &inner, protocol::ModelControl &inner_control,
       Arrivals *arrivals = nullptr)
      : inner_(inner), inner_control_(inner_control), arrivals_(arrivals) {}

  /// Serves model `name` besides the worker's: input "text" BYTES [-1] answered as output
  /// "text" with the same elements (the gateway learns of it at its next probe).
  void echoBytes(const std::string &name) {
    std::lock_guard lock(mu_);
    echo_ = name;
  }

  bool serverLive() const override { return inner_.serverLive(); }
  bool serverReady() const override { return inner_.serverReady(); }
  protocol::ServerMetadata serverMetadata() const override { return inner_.serverMetadata(); }
  Result<protocol::ModelMetadata> modelMetadata(const std::string &m) const override {
    if (isEcho(m)) // BYTES has no DType: the metadata names no datatype
      return protocol::ModelMetadata{
          m, {"1"}, "cpu", {{"text", DType::kInvalid, {-1}}}, {{"text", DType::kInvalid, {-1}}}};
    return inner_.modelMetadata(m);
  }
  Result<protocol::ModelReadiness> modelReady(const std::string &m) const override {
    if (isEcho(m))
      return protocol::ModelReadiness{true, ""};
    return inner_.modelReady(m);
  }
  Result<protocol::ModelConfiguration> modelConfig(const std::string &m) const override {
    return inner_.modelConfig(m);
  }
  std::vector<protocol::ModelIndexEntry> listModels() const override {
    std::vector<protocol::ModelIndexEntry> models = inner_control_.listModels();
    std::lock_guard lock(mu_);
    if (!echo_.empty())
      models.push_back({echo_, true, ""});
    return models;
  }
  Result<protocol::ControlStatus> controlStatus() const override {
    return inner_control_.controlStatus();
  }
  Result<std::vector<protocol::ModelStatistics>>
  modelStatistics(const std::string &m) const override {
    return inner_control_.modelStatistics(m);
  }

  void infer(protocol::InferRequest request, protocol::InferCallback done) override {
    if (isEcho(request.model_name)) {
      protocol::InferResponse echoed{request.model_name, request.model_version, request.id, {}};
      for (protocol::NamedTensor &in : request.inputs)
        echoed.outputs.push_back(std::move(in));
      done(std::move(echoed));
      return;
    }
    std::unique_lock lock(mu_);
    ++arrived_;
    cv_.notify_all();
    if (arrivals_)
      arrivals_->note();
    if (!open_) {
      held_.push_back({std::move(request), std::move(done)});
      return;
    }
    lock.unlock();
    inner_.infer(std::move(request), std::move(done));
  }

  void close() {
    std::lock_guard lock(mu_);
    open_ = false;
  }
  /// Opens the gate and lets every held call through.
  void open() {
    std::deque<Held> held;
    {
      std::lock_guard lock(mu_);
      open_ = true;
      held.swap(held_);
    }
    for (Held &h : held)
      inner_.infer(std::move(h.request), std::move(h.done));
  }
  /// Calls that reached this gate so far.
  int64_t arrived() const {
    std::lock_guard lock(mu_);
    return arrived_;
  }
  /// Waits until `n` calls reached the gate in total (false after 30 s).
  bool waitArrived(int64_t n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(30), [&] { return arrived_ >= n; });
  }

private:
  bool isEcho(const std::string &model) const {
    std::lock_guard lock(mu_);
    return !echo_.empty() && model == echo_;
  }

  struct Held {
    protocol::InferRequest request;
    protocol::InferCallback done;
  };
  protocol::InferenceService &inner_;
  protocol::ModelControl &inner_control_;
  Arrivals *arrivals_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int64_t arrived_ = 0;
  std::deque<Held> held_;
  std::string echo_; // GUARDED_BY(mu_): the BYTES echo model, "" for none
};

struct FleetWorker {
  std::string name;
  std::unique_ptr<server::Worker> worker;
  std::unique_ptr<Gate> gate;
  /// The gate's system shared memory (its gRPC server offers the extension, as a worker
  /// with `endpoints.shared_memory: system` does).
  std::unique_ptr<protocol::SharedMemoryRegistry> shared_memory;
  std::unique_ptr<frontend::GrpcServer> front; // the gate's gRPC server (what the gateway sees)
};

/// N workers named w0.. wN-1 on a model repository (examples/model_repo unless given)
/// restricted to `models`.
class Fleet {
public:
  /// `runtime_keys`: extra `runtime:` keys ("profile: regulated, numerics: f32");
  /// `global_yaml`: extra lines of the node file's `global:` block, indented two spaces.
  static Result<std::unique_ptr<Fleet>> start(int n, const std::vector<std::string> &models,
                                              const std::string &runtime_keys = "",
                                              const std::string &global_yaml = "",
                                              const std::string &model_repo = kModelRepo);
  ~Fleet();

  FleetWorker &worker(size_t i) { return workers_[i]; }
  size_t size() const { return workers_.size(); }
  /// Gateway config text (gateway.yml) for this fleet with `scheduling_yaml` (the body of
  /// `scheduling:`, indented two spaces).
  std::string gatewayYaml(const std::string &scheduling_yaml) const;
  /// The requests worker `i` answered OK for `model` (its worker_requests_total).
  int64_t served(size_t i, const std::string &model) const;
  /// served() of every worker.
  std::vector<int64_t> servedAll(const std::string &model) const;
  /// The calls that reached any worker's gate.
  const Arrivals &arrivals() const { return arrivals_; }

private:
  Arrivals arrivals_;
  std::vector<FleetWorker> workers_;
};

/// A gateway in front of a fleet, with a client for it.
class TestGateway {
public:
  /// Parses `yaml` with `env` (health interval 0.2 s unless `env` sets it), starts the
  /// gateway and waits for every worker to be ready.
  static Result<std::unique_ptr<TestGateway>> start(const std::string &yaml,
                                                    std::map<std::string, std::string> env = {});
  ~TestGateway();

  Gateway &gateway() { return *gateway_; }
  inference::GRPCInferenceService::Stub &stub() { return *stub_; }
  reactant_control::GatewayControlService::Stub &control() { return *control_; }

  /// ModelInfer of `rows` rows of iris_mlp features (row r filled with r + 1) through the
  /// gateway; the raw reply or the error.
  Result<inference::ModelInferResponse> infer(const std::string &model, int64_t rows,
                                              float fill = 1.0f);
  /// The same, asynchronously.
  std::future<Result<inference::ModelInferResponse>> inferAsync(const std::string &model,
                                                                int64_t rows, float fill = 1.0f);
  /// GET path on the admin port.
  std::string adminGet(const std::string &path, int *status = nullptr);

private:
  std::unique_ptr<Gateway> gateway_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
  std::unique_ptr<reactant_control::GatewayControlService::Stub> control_;
};

/// A request for iris_mlp (input "features", FP32 [rows, 4]) or digits_cnn (input "image",
/// FP32 [rows, 8, 8, 1]), every value `fill`.
inference::ModelInferRequest makeRequest(const std::string &model, int64_t rows, float fill);

/// The value of the sample `name{labels}` in a Prometheus exposition (every label given must
/// match), summed over matching samples; 0 if none.
double sampleValue(const std::string &text, const std::string &name,
                   const std::map<std::string, std::string> &labels);

/// The InferResponse of an HTTP infer reply (JSON, or binary with
/// Inference-Header-Content-Length); Unavailable when there is no reply, Internal naming the
/// status and body when it is not 200, the decoder's error when it does not decode.
Result<protocol::InferResponse> inferReply(const httplib::Result &reply);

/// GET http://127.0.0.1:port/path; the body ("" on failure).
std::string httpGet(int port, const std::string &path, int *status = nullptr);

} // namespace rs::gateway::testing
