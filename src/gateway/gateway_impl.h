//===- gateway/gateway_impl.h - Gateway internals (private) -----------------===//
//
// Shared by gateway.cc (lifecycle), gateway_prober.cc, gateway_forward.cc (forwarding),
// gateway_services.cc and gateway_stream.cc (the gRPC and REST front-ends). Not part of the
// API.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "gateway/gateway.h"
#include "gateway/gateway_metrics.h"
#include "gateway/worker_link.h"
#include "protocol/proto/reactant_evidence_v1.grpc.pb.h"
#include "protocol/service.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace grpc {
class Server;
}

namespace rs::frontend {
class GrpcHealthPublisher;
class HttpServer;
class MetricsHealthServer;
} // namespace rs::frontend

namespace rs::gateway {

/// One ModelInfer on its way through the gateway. The request and response are owned by
/// the caller (the gRPC reactor) or by `owner` (REST).
struct InferCall {
  const inference::ModelInferRequest *request = nullptr;
  inference::ModelInferResponse *response = nullptr;
  std::shared_ptr<void> owner;
  std::string model;
  int64_t items = 1;
  /// Absolute deadline on the system clock (what gRPC contexts take); nullopt: none.
  std::optional<std::chrono::system_clock::time_point> deadline;
  std::string rpc = "ModelInfer";
  Clock::time_point started;
  std::function<void(const grpc::Status &)> done;
  // Routing state.
  std::vector<size_t> order;
  size_t attempt = 0;
  bool refreshed = false;
  grpc::Status last_error;
};

/// The asynchronous stub methods of inference.GRPCInferenceService, and one unary method.
using AsyncStub = inference::GRPCInferenceService::StubInterface::async_interface;
template <typename Req, typename Resp>
using AsyncMethod = void (AsyncStub::*)(grpc::ClientContext *, const Req *, Resp *,
                                        std::function<void(grpc::Status)>);

class GrpcFrontend;
class ControlFrontend;
class EvidenceFrontend;
class RestService;

class Gateway::Impl {
public:
  explicit Impl(GatewayOptions options);
  ~Impl();

  Status start();
  Status waitForWorkers(double seconds);
  void shutdown(std::chrono::milliseconds grace);
  void probeNow();
  std::string renderMetrics();

  /// Admits and forwards a ModelInfer (see gateway.h); `call->done` runs exactly once.
  void forward(std::shared_ptr<InferCall> call);
  /// Forwards ModelMetadata / ModelReady / ModelConfig to a worker serving the model
  /// (NOT_FOUND "model '<m>' is not served by any worker" for a model no worker reported).
  /// A model the workers list but none serves: ready false, unservedError() for the
  /// metadata and the configuration. A model served only by workers that are not ready:
  /// its cached metadata, ready false, UNAVAILABLE "model '<m>' is not served by any ready
  /// worker" for the configuration.
  void forwardMetadata(const inference::ModelMetadataRequest *req,
                       inference::ModelMetadataResponse *resp,
                       std::function<void(const grpc::Status &)> done);
  void forwardModelReady(const inference::ModelReadyRequest *req,
                         inference::ModelReadyResponse *resp,
                         std::function<void(const grpc::Status &)> done);
  void forwardModelConfig(const inference::ModelConfigRequest *req,
                          inference::ModelConfigResponse *resp,
                          std::function<void(const grpc::Status &)> done);
  /// Forwards `rpc`, a unary RPC that names no model, to the ready workers in index order
  /// (the next one only when a call never reached the worker): `start(async_stub, ctx,
  /// done)` begins it on one worker. UNAVAILABLE when no worker is ready; `done` once.
  void forwardToAnyWorker(
      const char *rpc,
      std::function<void(AsyncStub *, grpc::ClientContext *, std::function<void(grpc::Status)>)>
          start,
      std::function<void(const grpc::Status &)> done);
  /// Triton's ModelStatistics through the gateway (docs/gateway.md "Statistics"): for
  /// model `req.name()`, every ready worker serving it is asked (in parallel, under the
  /// metadata deadline) and their answers are summed (gateway/statistics_sum.h); for an
  /// empty name, every ready worker, summed per model over the union of their models.
  /// `req.version()` goes to the workers, which check it. Errors: NOT_FOUND "model 'm' is
  /// not served by any worker" for a model no worker reported; for a known model no ready
  /// worker serves, unservedError() or UNAVAILABLE "model 'm' is not served by any ready
  /// worker"; UNAVAILABLE "ModelStatistics: no worker is ready" for an empty name; a
  /// worker's error, its code kept and "worker '<w>': " in front (a sum without that
  /// worker's counts would be wrong, not partial). A worker that answers NOT_FOUND for a
  /// named model (unloaded since the last probe) is left out while another answers; when
  /// every one does, the first one's error is the answer. `done` runs once, on a gRPC
  /// thread or the caller's.
  void gatherStatistics(const inference::ModelStatisticsRequest &req,
                        std::function<void(Result<std::vector<protocol::ModelStatistics>>)> done);
  /// System shared memory through the gateway (gateway/gateway_fanout.cc, docs/gateway.md
  /// "Shared memory"), for a client at `peer` (ServerContext::peer()): PERMISSION_DENIED
  /// unless the peer is on the gateway's host (frontend/peer.h, as a worker requires).
  /// Register goes to every configured worker, under the metadata deadline, all or nothing:
  /// when one fails, the workers that registered the region unregister it again, and the
  /// answer is the first failure with "worker '<w>': " in front. `done` once.
  void forwardSharedMemoryRegister(const std::string &peer,
                                   const inference::SystemSharedMemoryRegisterRequest &req,
                                   std::function<void(const grpc::Status &)> done);
  /// Unregister goes to every configured worker: OK when any worker answers OK (one that
  /// cannot be reached keeps nothing a retry would not remove), else the first worker's
  /// error.
  void forwardSharedMemoryUnregister(const std::string &peer,
                                     const inference::SystemSharedMemoryUnregisterRequest &req,
                                     std::function<void(const grpc::Status &)> done);
  /// Status asks every configured worker and lists the regions every one of them holds with
  /// the same key, offset and size (only those can be named through the gateway); a
  /// worker's error (NOT_FOUND for a named region it lacks) is the answer, "worker '<w>': "
  /// in front.
  void forwardSharedMemoryStatus(const std::string &peer,
                                 const inference::SystemSharedMemoryStatusRequest &req,
                                 inference::SystemSharedMemoryStatusResponse *resp,
                                 std::function<void(const grpc::Status &)> done);
  /// For a model the workers list but none serves (Router::unservedModel): UNAVAILABLE
  /// "model '<m>' is not ready: <the worker's reason>", a worker's own answer; else nullopt.
  std::optional<grpc::Status> unservedError(const std::string &model) const;
  /// For a known model no ready worker serves: unservedError(), else UNAVAILABLE "model '<m>'
  /// is not served by any ready worker".
  grpc::Status noReadyWorkerError(const std::string &model) const;
  /// The cached ModelMetadata of `model` (from discovery), if any.
  std::optional<inference::ModelMetadataResponse> cachedMetadata(const std::string &model) const;
  /// Runs `then` after a fresh probe round (at most one round per second; single-flight).
  void refreshThen(std::function<void()> then);
  /// Records a finished client call of `rpc` (metrics).
  void recordDone(const std::string &rpc, const std::string &model, const grpc::Status &s,
                  Clock::time_point started);
  /// Sends the operator's or a traffic-driven repack's CompactMemory orders and logs it.
  void afterRepack(const RepackOutcome &outcome);
  /// The gateway's evidence document (gateway/gateway_evidence.cc): asks every worker
  /// for its document (10 s each, in parallel) and calls `done` once with the JSON text;
  /// a worker that fails is listed with its error.
  void gatherEvidence(std::function<void(std::string)> done);
  /// gatherEvidence(), waited for (the REST front-end's GET /v2/evidence).
  std::string evidenceJson();

  const config::GatewayConfig &config() const { return config_; }
  int httpPort() const;
  int metricsPort() const;
  Router &router() { return router_; }
  WorkerLink &link(size_t w) { return *links_[w]; }

  int grpc_port_ = 0;

private:
  void routeCall(std::shared_ptr<InferCall> call);
  void send(std::shared_ptr<InferCall> call, Charge charge);
  void finish(const std::shared_ptr<InferCall> &call, const grpc::Status &status);
  void probeRound();
  void proberLoop();
  void callStarted();
  void callEnded();
  /// The per-worker step of a unary metadata-class RPC for tryInOrder (gateway_forward.cc):
  /// `start(async_stub, ctx, done)` begins the call on worker w's connection under the
  /// metadata deadline, counted in flight until `done` runs.
  template <typename Start>
  std::function<void(size_t, std::function<void(grpc::Status)>)> unaryInvoke(Start start);
  /// A unary RPC `rpc` about model `req->name()` (gateway_forward.cc): INVALID_ARGUMENT for
  /// an empty name, NOT_FOUND for a model no worker reported, `unrouted()` for a known model
  /// no ready worker serves, else `method` on the model's workers in order (unaryInvoke);
  /// `done` once.
  template <typename Req, typename Resp>
  void forwardToModel(const char *rpc, const Req *req, Resp *resp, AsyncMethod<Req, Resp> method,
                      std::function<grpc::Status()> unrouted,
                      std::function<void(const grpc::Status &)> done);
  int64_t itemsOf(const inference::ModelInferRequest &req) const;
  /// Calls `start(i, async_stub, ctx, done)` for each `workers[i]` at once (unaryInvoke:
  /// the metadata deadline, counted in flight) and, once every one answered, `then` with
  /// their statuses in the order of `workers`, on the thread of the last answer (at once,
  /// with none, when `workers` is empty).
  void fanOut(std::vector<size_t> workers,
              std::function<void(size_t, AsyncStub *, grpc::ClientContext *,
                                 std::function<void(grpc::Status)>)>
                  start,
              std::function<void(std::vector<grpc::Status>)> then);
  /// 0 .. workers - 1, every configured worker.
  std::vector<size_t> allWorkers() const;
  /// System shared memory call `rpc` from `peer` to every configured worker
  /// (gateway_fanout.cc): PERMISSION_DENIED at once for a peer not on this host, else
  /// `method` with a copy of `req` on each worker (fanOut), then `then(statuses, answers,
  /// reply)`, where `reply(status)` records the call and runs `done`.
  template <typename Req, typename Resp, typename Then>
  void sharedMemoryToEveryWorker(const char *rpc, const std::string &peer, const Req &req,
                                 AsyncMethod<Req, Resp> method, Then then,
                                 std::function<void(const grpc::Status &)> done);

  const config::GatewayConfig config_;
  const ServerBuild build_;
  const std::function<void(const Status &)> on_fatal_;
  Router router_;
  GatewayMetrics metrics_;
  std::vector<std::unique_ptr<WorkerLink>> links_;
  const int64_t inbound_cap_;
  std::atomic<int64_t> inflight_{0};

  std::unique_ptr<GrpcFrontend> grpc_frontend_;
  std::unique_ptr<ControlFrontend> control_frontend_;
  std::unique_ptr<EvidenceFrontend> evidence_frontend_;
  std::string started_at_; // UTC, set by start()
  std::unique_ptr<grpc::Server> grpc_server_;
  std::unique_ptr<RestService> rest_service_;
  std::unique_ptr<frontend::GrpcHealthPublisher> health_;
  std::unique_ptr<frontend::HttpServer> http_;
  std::unique_ptr<frontend::MetricsHealthServer> admin_;

  mutable std::mutex meta_mu_;
  std::map<std::string, inference::ModelMetadataResponse> metadata_; // GUARDED_BY(meta_mu_)

  // Prober.
  std::mutex probe_mu_;
  std::condition_variable probe_cv_;
  bool stopping_ = false;                          // GUARDED_BY(probe_mu_)
  bool round_wanted_ = false;                      // GUARDED_BY(probe_mu_)
  bool round_running_ = false;                     // GUARDED_BY(probe_mu_)
  uint64_t rounds_done_ = 0;                       // GUARDED_BY(probe_mu_)
  Clock::time_point last_round_end_{};             // GUARDED_BY(probe_mu_)
  std::vector<std::function<void()>> after_round_; // GUARDED_BY(probe_mu_)
  std::thread prober_;
  std::mutex round_mu_; // one round at a time
  bool contacted_ = false;
  int64_t wedged_rounds_ = 0;
  bool startup_checked_ = false;
  std::atomic<bool> fatal_reported_{false};
  std::vector<bool> was_ready_;
  std::vector<bool> answered_once_;
  std::vector<std::string> last_errors_; // GUARDED_BY(round_mu_)

  // Calls to workers in flight (shutdown waits for them).
  std::mutex calls_mu_;
  std::condition_variable calls_cv_;
  int64_t calls_ = 0; // GUARDED_BY(calls_mu_)
  bool started_ = false;
  bool shut_down_ = false;
};

/// inference.GRPCInferenceService on the gateway's gRPC port.
class GrpcFrontend final : public inference::GRPCInferenceService::CallbackService {
public:
  explicit GrpcFrontend(Gateway::Impl &gateway) : gw_(gateway) {}

  grpc::ServerUnaryReactor *ServerLive(grpc::CallbackServerContext *ctx,
                                       const inference::ServerLiveRequest *,
                                       inference::ServerLiveResponse *resp) override;
  grpc::ServerUnaryReactor *ServerReady(grpc::CallbackServerContext *ctx,
                                        const inference::ServerReadyRequest *,
                                        inference::ServerReadyResponse *resp) override;
  grpc::ServerUnaryReactor *ModelReady(grpc::CallbackServerContext *ctx,
                                       const inference::ModelReadyRequest *req,
                                       inference::ModelReadyResponse *resp) override;
  grpc::ServerUnaryReactor *ServerMetadata(grpc::CallbackServerContext *ctx,
                                           const inference::ServerMetadataRequest *,
                                           inference::ServerMetadataResponse *resp) override;
  grpc::ServerUnaryReactor *ModelMetadata(grpc::CallbackServerContext *ctx,
                                          const inference::ModelMetadataRequest *req,
                                          inference::ModelMetadataResponse *resp) override;
  grpc::ServerUnaryReactor *ModelConfig(grpc::CallbackServerContext *ctx,
                                        const inference::ModelConfigRequest *req,
                                        inference::ModelConfigResponse *resp) override;
  grpc::ServerUnaryReactor *ModelInfer(grpc::CallbackServerContext *ctx,
                                       const inference::ModelInferRequest *req,
                                       inference::ModelInferResponse *resp) override;
  /// Each request of the stream forwarded as a ModelInfer (gateway_stream.cc).
  grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse> *
  ModelStreamInfer(grpc::CallbackServerContext *ctx) override;
  grpc::ServerUnaryReactor *RepositoryIndex(grpc::CallbackServerContext *ctx,
                                            const inference::RepositoryIndexRequest *req,
                                            inference::RepositoryIndexResponse *resp) override;
  /// Triton's statistics extension: the sum over the workers (Impl::gatherStatistics).
  grpc::ServerUnaryReactor *ModelStatistics(grpc::CallbackServerContext *ctx,
                                            const inference::ModelStatisticsRequest *req,
                                            inference::ModelStatisticsResponse *resp) override;
  /// System shared memory, registered with every worker (Impl::forwardSharedMemoryStatus,
  /// forwardSharedMemoryRegister, forwardSharedMemoryUnregister).
  grpc::ServerUnaryReactor *
  SystemSharedMemoryStatus(grpc::CallbackServerContext *ctx,
                           const inference::SystemSharedMemoryStatusRequest *req,
                           inference::SystemSharedMemoryStatusResponse *resp) override;
  grpc::ServerUnaryReactor *
  SystemSharedMemoryRegister(grpc::CallbackServerContext *ctx,
                             const inference::SystemSharedMemoryRegisterRequest *req,
                             inference::SystemSharedMemoryRegisterResponse *resp) override;
  grpc::ServerUnaryReactor *
  SystemSharedMemoryUnregister(grpc::CallbackServerContext *ctx,
                               const inference::SystemSharedMemoryUnregisterRequest *req,
                               inference::SystemSharedMemoryUnregisterResponse *resp) override;
  /// Triton's CUDA shared-memory RPCs, forwarded to a ready worker (forwardToAnyWorker).
  grpc::ServerUnaryReactor *
  CudaSharedMemoryStatus(grpc::CallbackServerContext *ctx,
                         const inference::CudaSharedMemoryStatusRequest *req,
                         inference::CudaSharedMemoryStatusResponse *resp) override;
  grpc::ServerUnaryReactor *
  CudaSharedMemoryRegister(grpc::CallbackServerContext *ctx,
                           const inference::CudaSharedMemoryRegisterRequest *req,
                           inference::CudaSharedMemoryRegisterResponse *resp) override;
  grpc::ServerUnaryReactor *
  CudaSharedMemoryUnregister(grpc::CallbackServerContext *ctx,
                             const inference::CudaSharedMemoryUnregisterRequest *req,
                             inference::CudaSharedMemoryUnregisterResponse *resp) override;

private:
  Gateway::Impl &gw_;
};

/// reactant_control.GatewayControlService on the gateway's gRPC port.
class ControlFrontend final : public reactant_control::GatewayControlService::CallbackService {
public:
  explicit ControlFrontend(Gateway::Impl &gateway) : gw_(gateway) {}

  grpc::ServerUnaryReactor *
  GetSchedulingStatus(grpc::CallbackServerContext *ctx,
                      const reactant_control::GetSchedulingStatusRequest *,
                      reactant_control::GetSchedulingStatusResponse *resp) override;
  grpc::ServerUnaryReactor *
  SetSchedulingPolicy(grpc::CallbackServerContext *ctx,
                      const reactant_control::SetSchedulingPolicyRequest *req,
                      reactant_control::SetSchedulingPolicyResponse *resp) override;
  grpc::ServerUnaryReactor *
  SetModelPlacement(grpc::CallbackServerContext *ctx,
                    const reactant_control::SetModelPlacementRequest *req,
                    reactant_control::SetModelPlacementResponse *resp) override;
  grpc::ServerUnaryReactor *Repack(grpc::CallbackServerContext *ctx,
                                   const reactant_control::RepackRequest *req,
                                   reactant_control::RepackResponse *resp) override;

private:
  Gateway::Impl &gw_;
};

/// reactant_evidence.EvidenceService on the gateway's gRPC port (gateway_evidence.cc).
class EvidenceFrontend final : public reactant_evidence::EvidenceService::CallbackService {
public:
  explicit EvidenceFrontend(Gateway::Impl &gateway) : gw_(gateway) {}

  grpc::ServerUnaryReactor *
  DeploymentEvidence(grpc::CallbackServerContext *ctx,
                     const reactant_evidence::DeploymentEvidenceRequest *,
                     reactant_evidence::DeploymentEvidenceResponse *resp) override;

private:
  Gateway::Impl &gw_;
};

/// The REST front-end's view of the gateway (frontend/http_server.h calls it): the serving
/// interface, and of the control plane the repository index only.
class RestService final : public protocol::InferenceService, public protocol::ModelControl {
public:
  explicit RestService(Gateway::Impl &gateway) : gw_(gateway) {}

  bool serverLive() const override { return true; }
  bool serverReady() const override;
  protocol::ServerMetadata serverMetadata() const override;
  Result<protocol::ModelMetadata> modelMetadata(const std::string &model_name) const override;
  Result<protocol::ModelReadiness> modelReady(const std::string &model_name) const override;
  /// Forwarded as ModelConfig (Gateway::Impl::forwardModelConfig) and waited for.
  Result<protocol::ModelConfiguration> modelConfig(const std::string &model_name) const override;
  void infer(protocol::InferRequest request, protocol::InferCallback done) override;
  std::vector<protocol::ModelIndexEntry> listModels() const override;
  /// Impl::gatherStatistics, waited for (GET /v2/models[/{m}]/stats).
  Result<std::vector<protocol::ModelStatistics>>
  modelStatistics(const std::string &name) const override;

private:
  Gateway::Impl &gw_;
};

/// The gateway's ServerMetadata.
protocol::ServerMetadata gatewayServerMetadata();

/// The gateway's REST answer to the system shared memory routes: Unimplemented, saying to
/// use gRPC through the gateway, or a worker's own endpoint.
Status restSharedMemoryRefusal();

} // namespace rs::gateway
