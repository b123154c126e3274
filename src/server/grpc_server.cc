//===- server/grpc_server.cc - KServe V2 gRPC front-end ---------------------===//
#include "server/grpc_server.h"

#include "protocol/deadline.h"
#include "protocol/grpc_codec.h"
#include "protocol/proto/grpc_service.grpc.pb.h"
#include "protocol/proto/reactant_control_v1.grpc.pb.h"
#include "protocol/proto/reactant_evidence_v1.grpc.pb.h"
#include "protocol/status_mapping.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/message_allocator.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

namespace rs::server {

using grpc::CallbackServerContext;
using grpc::ServerUnaryReactor;

namespace {

using InferHolder =
    grpc::MessageHolder<inference::ModelInferRequest, inference::ModelInferResponse>;

/// ModelInfer's request and response. The request is held by a shared pointer so that the
/// input tensors decoded from its raw_input_contents can view its bytes in place and keep
/// it alive for as long as they live (past the call, if the runtime keeps them).
class InferMessages final : public InferHolder {
public:
  InferMessages() : request_(std::make_shared<inference::ModelInferRequest>()) {
    set_request(request_.get());
    set_response(&response_);
  }
  void Release() override { delete this; }
  std::shared_ptr<const void> requestOwner() const { return request_; }

private:
  std::shared_ptr<inference::ModelInferRequest> request_;
  inference::ModelInferResponse response_;
};

class InferAllocator final
    : public grpc::MessageAllocator<inference::ModelInferRequest, inference::ModelInferResponse> {
public:
  InferHolder *AllocateMessages() override { return new InferMessages; }
};

} // namespace

/// The callback service: each handler finishes its reactor exactly once.
class GrpcServer::Impl final : public inference::GRPCInferenceService::CallbackService {
public:
  Impl(runtime::InferenceService &service, const GrpcServerOptions &options)
      : service_(service), shared_memory_(options.shared_memory), reporter_(options.reporter),
        max_shm_input_bytes_(options.max_recv_msg_bytes) {
    SetMessageAllocatorFor_ModelInfer(&infer_allocator_);
  }

  ServerUnaryReactor *ServerLive(CallbackServerContext *ctx, const inference::ServerLiveRequest *,
                                 inference::ServerLiveResponse *resp) override {
    resp->set_live(service_.serverLive());
    return finish(ctx, grpc::Status::OK);
  }

  ServerUnaryReactor *ServerReady(CallbackServerContext *ctx, const inference::ServerReadyRequest *,
                                  inference::ServerReadyResponse *resp) override {
    resp->set_ready(service_.serverReady());
    return finish(ctx, grpc::Status::OK);
  }

  ServerUnaryReactor *ModelReady(CallbackServerContext *ctx,
                                 const inference::ModelReadyRequest *req,
                                 inference::ModelReadyResponse *resp) override {
    if (req->name().empty())
      return finish(ctx, protocol::toGrpcStatus(invalidArgument() << "model name is empty"));
    Result<runtime::ModelReadiness> r = service_.modelReady(req->name());
    if (!r.isOk())
      return finish(ctx, protocol::toGrpcStatus(r.status()));
    resp->set_ready(r->ready);
    return finish(ctx, grpc::Status::OK);
  }

  ServerUnaryReactor *ServerMetadata(CallbackServerContext *ctx,
                                     const inference::ServerMetadataRequest *,
                                     inference::ServerMetadataResponse *resp) override {
    protocol::encodeServerMetadata(service_.serverMetadata(), resp);
    return finish(ctx, grpc::Status::OK);
  }

  ServerUnaryReactor *ModelMetadata(CallbackServerContext *ctx,
                                    const inference::ModelMetadataRequest *req,
                                    inference::ModelMetadataResponse *resp) override {
    if (req->name().empty())
      return finish(ctx, protocol::toGrpcStatus(invalidArgument() << "model name is empty"));
    Result<runtime::ModelMetadata> r = service_.modelMetadata(req->name());
    if (!r.isOk())
      return finish(ctx, protocol::toGrpcStatus(r.status()));
    protocol::encodeModelMetadata(*r, resp);
    return finish(ctx, grpc::Status::OK);
  }

  ServerUnaryReactor *ModelInfer(CallbackServerContext *ctx,
                                 const inference::ModelInferRequest *req,
                                 inference::ModelInferResponse *resp) override {
    runtime::Clock::time_point now = runtime::Clock::now();
    protocol::DecodeOptions options;
    options.now = now;
    options.shared_memory = shared_memory_;
    options.max_shared_memory_input_bytes = max_shm_input_bytes_;
    // Raw inputs are read in place (no copy of the payload); see InferMessages.
    options.message_owner =
        static_cast<InferMessages *>(ctx->GetRpcAllocatorState())->requestOwner();
    Result<protocol::DecodedInferRequest> decoded =
        protocol::decodeModelInferRequest(*req, options);
    if (!decoded.isOk()) {
      report(req->model_name(), req->id(), decoded.status(), false);
      return finish(ctx, protocol::toGrpcStatus(decoded.status()));
    }
    runtime::InferRequest request = std::move(decoded->request);
    request.deadline = protocol::tighterDeadline(
        request.deadline,
        protocol::steadyDeadline(ctx->deadline(), std::chrono::system_clock::now(), now));
    ServerUnaryReactor *reactor = ctx->DefaultReactor();
    // The reactor and response stay valid until Finish(); the service calls `done` once.
    // The shared-memory outputs hold their regions until the reply is written.
    service_.infer(
        std::move(request),
        [this, reactor, resp, model = req->model_name(), id = req->id(),
         shm = std::move(decoded->shared_memory_outputs)](Result<runtime::InferResponse> result) {
          if (!result.isOk()) {
            report(model, id, result.status(), true);
            reactor->Finish(protocol::toGrpcStatus(result.status()));
            return;
          }
          if (Status s = protocol::writeSharedMemoryOutputs(shm, *result); !s.isOk()) {
            s = s.withPrefix(requestPrefix(model, id));
            report(model, id, s, true);
            reactor->Finish(protocol::toGrpcStatus(s));
            return;
          }
          protocol::encodeModelInferResponse(*result, shm, resp);
          reactor->Finish(grpc::Status::OK);
        });
    return reactor;
  }

  ServerUnaryReactor *RepositoryIndex(CallbackServerContext *ctx,
                                      const inference::RepositoryIndexRequest *req,
                                      inference::RepositoryIndexResponse *resp) override {
    // reference-system.md 5.1: state READY | UNAVAILABLE, version "", ready=true filters.
    for (const runtime::ModelIndexEntry &m : service_.listModels()) {
      if (req->ready() && !m.ready)
        continue;
      inference::RepositoryIndexResponse::ModelIndex *entry = resp->add_models();
      entry->set_name(m.name);
      entry->set_state(m.ready ? "READY" : "UNAVAILABLE");
      entry->set_reason(m.reason);
    }
    return finish(ctx, grpc::Status::OK);
  }
  // KServe repository extension (model_control_mode explicit; docs/model_repository.md).
  // The load compiles on the handler thread; the reply is sent once the model serves.
  ServerUnaryReactor *RepositoryModelLoad(CallbackServerContext *ctx,
                                          const inference::RepositoryModelLoadRequest *req,
                                          inference::RepositoryModelLoadResponse *) override {
    if (req->model_name().empty())
      return finish(ctx, protocol::toGrpcStatus(invalidArgument()
                                                << "RepositoryModelLoad: model_name is empty"));
    return finish(ctx, protocol::toGrpcStatus(service_.repositoryLoad(req->model_name())));
  }
  ServerUnaryReactor *RepositoryModelUnload(CallbackServerContext *ctx,
                                            const inference::RepositoryModelUnloadRequest *req,
                                            inference::RepositoryModelUnloadResponse *) override {
    if (req->model_name().empty())
      return finish(ctx, protocol::toGrpcStatus(invalidArgument()
                                                << "RepositoryModelUnload: model_name is empty"));
    return finish(ctx, protocol::toGrpcStatus(service_.repositoryUnload(req->model_name())));
  }
  ServerUnaryReactor *ModelStatistics(CallbackServerContext *ctx,
                                      const inference::ModelStatisticsRequest *req,
                                      inference::ModelStatisticsResponse *resp) override {
    Result<std::vector<runtime::ModelStatistics>> stats = service_.modelStatistics(req->name());
    if (!stats.isOk())
      return finish(ctx, protocol::toGrpcStatus(stats.status()));
    auto duration = [](const runtime::DurationStat &d, inference::StatisticDuration *out) {
      out->set_count(d.count);
      out->set_ns(d.ns);
    };
    for (const runtime::ModelStatistics &m : *stats) {
      inference::ModelStatistics *out = resp->add_model_stats();
      out->set_name(m.name);
      out->set_version(m.version);
      out->set_last_inference(m.last_inference_ms);
      out->set_inference_count(m.inference_count);
      out->set_execution_count(m.execution_count);
      inference::InferStatistics *is = out->mutable_inference_stats();
      duration(m.success, is->mutable_success());
      duration(m.fail, is->mutable_fail());
      duration(m.queue, is->mutable_queue());
      duration(m.compute_input, is->mutable_compute_input());
      duration(m.compute_infer, is->mutable_compute_infer());
      duration(m.compute_output, is->mutable_compute_output());
      for (const runtime::BatchStatistics &b : m.batch_stats) {
        inference::InferBatchStatistics *bs = out->add_batch_stats();
        bs->set_batch_size(b.batch_size);
        duration(b.compute_input, bs->mutable_compute_input());
        duration(b.compute_infer, bs->mutable_compute_infer());
        duration(b.compute_output, bs->mutable_compute_output());
      }
    }
    return finish(ctx, grpc::Status::OK);
  }
  ServerUnaryReactor *
  SystemSharedMemoryStatus(CallbackServerContext *ctx,
                           const inference::SystemSharedMemoryStatusRequest *req,
                           inference::SystemSharedMemoryStatusResponse *resp) override {
    if (!shared_memory_)
      return notImplemented(ctx, "SystemSharedMemoryStatus");
    Result<std::vector<protocol::SharedMemoryRegionInfo>> regions =
        shared_memory_->status(req->name());
    if (!regions.isOk())
      return finish(ctx, protocol::toGrpcStatus(regions.status()));
    for (const protocol::SharedMemoryRegionInfo &r : *regions) {
      auto &entry = (*resp->mutable_regions())[r.name];
      entry.set_name(r.name);
      entry.set_key(r.key);
      entry.set_offset(r.offset);
      entry.set_byte_size(r.byte_size);
    }
    return finish(ctx, grpc::Status::OK);
  }
  ServerUnaryReactor *
  SystemSharedMemoryRegister(CallbackServerContext *ctx,
                             const inference::SystemSharedMemoryRegisterRequest *req,
                             inference::SystemSharedMemoryRegisterResponse *) override {
    if (!shared_memory_)
      return notImplemented(ctx, "SystemSharedMemoryRegister");
    Status s =
        shared_memory_->registerRegion({req->name(), req->key(), req->offset(), req->byte_size()});
    if (s.isOk())
      spdlog::info("shared memory region registered name={} key={} offset={} byte_size={}",
                   req->name(), req->key(), req->offset(), req->byte_size());
    return finish(ctx, protocol::toGrpcStatus(s));
  }
  ServerUnaryReactor *
  SystemSharedMemoryUnregister(CallbackServerContext *ctx,
                               const inference::SystemSharedMemoryUnregisterRequest *req,
                               inference::SystemSharedMemoryUnregisterResponse *) override {
    if (!shared_memory_)
      return notImplemented(ctx, "SystemSharedMemoryUnregister");
    shared_memory_->unregisterRegion(req->name());
    return finish(ctx, grpc::Status::OK);
  }

private:
  static ServerUnaryReactor *finish(CallbackServerContext *ctx, const grpc::Status &status) {
    ServerUnaryReactor *reactor = ctx->DefaultReactor();
    reactor->Finish(status);
    return reactor;
  }
  static ServerUnaryReactor *notImplemented(CallbackServerContext *ctx, const char *rpc) {
    return finish(ctx, grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                                    std::string(rpc) + " is not implemented"));
  }

  static std::string requestPrefix(const std::string &model, const std::string &id) {
    return "model '" + model + "'" + (id.empty() ? "" : ", request '" + id + "'");
  }
  void report(const std::string &model, const std::string &id, const Status &status,
              bool in_service) const {
    if (reporter_)
      reporter_->requestFailed({"grpc", model, id}, status, in_service);
  }

  runtime::InferenceService &service_;
  protocol::SharedMemoryRegistry *shared_memory_;
  RequestReporter *reporter_;
  int64_t max_shm_input_bytes_;
  InferAllocator infer_allocator_; // outlives the server: Impl is reset after it
};

/// reactant_control.ControlService: ModelControlStatus, SetModelResidency and
/// SetModelPolicy from the service; CompactMemory is not implemented (UNIMPLEMENTED: the
/// CPU backend has no device arena to compact).
class GrpcServer::ControlImpl final : public reactant_control::ControlService::CallbackService {
public:
  explicit ControlImpl(runtime::InferenceService &service) : service_(service) {}

  ServerUnaryReactor *
  ModelControlStatus(CallbackServerContext *ctx,
                     const reactant_control::ModelControlStatusRequest *,
                     reactant_control::ModelControlStatusResponse *resp) override {
    ServerUnaryReactor *reactor = ctx->DefaultReactor();
    Result<runtime::ControlStatus> status = service_.controlStatus();
    if (!status.isOk()) {
      reactor->Finish(protocol::toGrpcStatus(status.status()));
      return reactor;
    }
    resp->set_residency_mode(status->residency_mode);
    resp->set_discipline(status->discipline);
    resp->set_weight_cache_max_bytes(status->weight_cache_max_bytes);
    for (const runtime::ModelControlInfo &m : status->models) {
      reactant_control::ModelStatus *out = resp->add_models();
      out->set_name(m.name);
      out->set_residency(static_cast<reactant_control::Residency>(m.residency));
      out->set_device_resident(m.resident);
      out->set_host_resident(m.host_resident);
      out->set_weight_nbytes(m.weight_nbytes);
      out->set_weight(m.weight);
      out->set_queue_depth(m.queue_depth);
      out->set_total_compute_seconds(m.total_compute_seconds);
      out->set_requests_served(m.requests_served);
      out->set_dispatch_count(m.dispatch_count);
      out->set_max_batch_size(m.max_batch_size);
    }
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  /// reference-system.md §5.3: an UNSPECIFIED target is INVALID_ARGUMENT, an unknown
  /// model NOT_FOUND, anything else (a self-managed worker) FAILED_PRECONDITION.
  ServerUnaryReactor *
  SetModelResidency(CallbackServerContext *ctx,
                    const reactant_control::SetModelResidencyRequest *req,
                    reactant_control::SetModelResidencyResponse *resp) override {
    ServerUnaryReactor *reactor = ctx->DefaultReactor();
    const int target = req->target();
    if (target < reactant_control::UNPINNED || target > reactant_control::PINNED_DEVICE) {
      reactor->Finish(protocol::toGrpcStatus(
          invalidArgument() << "SetModelResidency of '" << req->name() << "': target " << target
                            << " is not UNPINNED (1), PINNED_SYSTEM (2) or PINNED_DEVICE (3)"));
      return reactor;
    }
    Result<runtime::Residency> r =
        service_.setModelResidency(req->name(), static_cast<runtime::Residency>(target));
    if (!r.isOk()) {
      reactor->Finish(protocol::toGrpcStatus(r.status()));
      return reactor;
    }
    resp->set_residency(static_cast<reactant_control::Residency>(*r));
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  ServerUnaryReactor *SetModelPolicy(CallbackServerContext *ctx,
                                     const reactant_control::SetModelPolicyRequest *req,
                                     reactant_control::SetModelPolicyResponse *) override {
    ServerUnaryReactor *reactor = ctx->DefaultReactor();
    reactor->Finish(protocol::toGrpcStatus(service_.setModelPolicy(
        req->name(), req->has_weight() ? std::optional<double>(req->weight()) : std::nullopt)));
    return reactor;
  }

private:
  runtime::InferenceService &service_;
};

/// reactant_evidence.EvidenceService: the deployment-identity document from the worker.
class GrpcServer::EvidenceImpl final : public reactant_evidence::EvidenceService::CallbackService {
public:
  explicit EvidenceImpl(std::function<std::string()> evidence) : evidence_(std::move(evidence)) {}

  ServerUnaryReactor *
  DeploymentEvidence(CallbackServerContext *ctx,
                     const reactant_evidence::DeploymentEvidenceRequest *,
                     reactant_evidence::DeploymentEvidenceResponse *resp) override {
    std::string text = evidence_();
    const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_object() && doc.contains("format") && doc["format"].is_string())
      resp->set_format(doc["format"].get<std::string>());
    resp->set_json(std::move(text));
    ServerUnaryReactor *reactor = ctx->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

private:
  std::function<std::string()> evidence_;
};

namespace {
/// Why binding `host`:`port` fails, found by trying it with a plain socket (gRPC does not
/// say): ": Address already in use" and the like, or "" when a plain bind succeeds.
std::string bindFailureReason(const std::string &host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo *found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0)
    return std::string(": ") + ::gai_strerror(rc);
  std::string reason;
  for (addrinfo *a = found; a && reason.empty(); a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0)
      continue;
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0)
      reason = std::string(": ") + std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return reason;
}
} // namespace

GrpcServer::GrpcServer(GrpcServerOptions options, runtime::InferenceService &service)
    : options_(std::move(options)), service_(service) {}

GrpcServer::~GrpcServer() { shutdown(); }

Status GrpcServer::start() {
  if (server_)
    return failedPrecondition() << "grpc server already started";
  impl_ = std::make_unique<Impl>(service_, options_);
  control_ = std::make_unique<ControlImpl>(service_);
  std::string host = options_.host;
  if (host.find(':') != std::string::npos && host.front() != '[')
    host = "[" + host + "]"; // IPv6 literal
  std::string address = host + ":" + std::to_string(options_.port);
  auto clampInt = [](int64_t v) { return static_cast<int>(std::clamp<int64_t>(v, 0, INT_MAX)); };
  grpc::ServerBuilder builder;
  int selected_port = 0;
  Result<std::shared_ptr<grpc::ServerCredentials>> credentials =
      grpcServerCredentials(options_.tls);
  if (!credentials.isOk())
    return credentials.status().withPrefix("grpc server");
  builder.AddListeningPort(address, *credentials, &selected_port);
  // gRPC sets SO_REUSEPORT by default, which would let a second server silently share a
  // busy port; a taken port must be an error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(clampInt(options_.max_recv_msg_bytes));
  builder.SetMaxSendMessageSize(clampInt(options_.max_send_msg_bytes));
  builder.RegisterService(impl_.get());
  builder.RegisterService(control_.get());
  if (options_.evidence) {
    evidence_ = std::make_unique<EvidenceImpl>(options_.evidence);
    builder.RegisterService(evidence_.get());
  }
  server_ = builder.BuildAndStart();
  if (!server_ || selected_port == 0) {
    if (server_)
      server_->Shutdown();
    server_.reset();
    impl_.reset();
    control_.reset();
    evidence_.reset();
    return unavailable() << "grpc server: cannot bind " << address
                         << bindFailureReason(options_.host, options_.port);
  }
  port_ = selected_port;
  spdlog::info("grpc server listening on {}:{}", options_.host, port_);
  return Status::ok();
}

void GrpcServer::shutdown() {
  if (!server_)
    return;
  server_->Shutdown(std::chrono::system_clock::now() + options_.shutdown_grace);
  server_->Wait();
  server_.reset();
  impl_.reset();
  control_.reset();
  evidence_.reset();
  port_ = 0;
  spdlog::info("grpc server stopped");
}

} // namespace rs::server
