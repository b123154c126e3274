//===- server/grpc_server.cc - KServe V2 gRPC front-end ---------------------===//
#include "server/grpc_server.h"

#include "protocol/deadline.h"
#include "protocol/grpc_codec.h"
#include "protocol/proto/grpc_service.grpc.pb.h"
#include "protocol/proto/reactant_evidence_v1.grpc.pb.h"
#include "protocol/status_mapping.h"

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <climits>

namespace rs::server {

using grpc::CallbackServerContext;
using grpc::ServerUnaryReactor;

/// The callback service: each handler finishes its reactor exactly once.
class GrpcServer::Impl final : public inference::GRPCInferenceService::CallbackService {
public:
  explicit Impl(runtime::InferenceService &service) : service_(service) {}

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
    Result<runtime::InferRequest> decoded = protocol::decodeModelInferRequest(*req, now);
    if (!decoded.isOk())
      return finish(ctx, protocol::toGrpcStatus(decoded.status()));
    runtime::InferRequest request = std::move(decoded).value();
    request.deadline = protocol::tighterDeadline(
        request.deadline,
        protocol::steadyDeadline(ctx->deadline(), std::chrono::system_clock::now(), now));
    ServerUnaryReactor *reactor = ctx->DefaultReactor();
    // The reactor and response stay valid until Finish(); the service calls `done` once.
    service_.infer(std::move(request), [reactor, resp](Result<runtime::InferResponse> result) {
      if (!result.isOk()) {
        reactor->Finish(protocol::toGrpcStatus(result.status()));
        return;
      }
      protocol::encodeModelInferResponse(*result, resp);
      reactor->Finish(grpc::Status::OK);
    });
    return reactor;
  }

  ServerUnaryReactor *RepositoryIndex(CallbackServerContext *ctx,
                                      const inference::RepositoryIndexRequest *,
                                      inference::RepositoryIndexResponse *) override {
    return notImplemented(ctx, "RepositoryIndex");
  }
  ServerUnaryReactor *RepositoryModelLoad(CallbackServerContext *ctx,
                                          const inference::RepositoryModelLoadRequest *,
                                          inference::RepositoryModelLoadResponse *) override {
    return notImplemented(ctx, "RepositoryModelLoad");
  }
  ServerUnaryReactor *RepositoryModelUnload(CallbackServerContext *ctx,
                                            const inference::RepositoryModelUnloadRequest *,
                                            inference::RepositoryModelUnloadResponse *) override {
    return notImplemented(ctx, "RepositoryModelUnload");
  }
  ServerUnaryReactor *
  SystemSharedMemoryStatus(CallbackServerContext *ctx,
                           const inference::SystemSharedMemoryStatusRequest *,
                           inference::SystemSharedMemoryStatusResponse *) override {
    return notImplemented(ctx, "SystemSharedMemoryStatus");
  }
  ServerUnaryReactor *
  SystemSharedMemoryRegister(CallbackServerContext *ctx,
                             const inference::SystemSharedMemoryRegisterRequest *,
                             inference::SystemSharedMemoryRegisterResponse *) override {
    return notImplemented(ctx, "SystemSharedMemoryRegister");
  }
  ServerUnaryReactor *
  SystemSharedMemoryUnregister(CallbackServerContext *ctx,
                               const inference::SystemSharedMemoryUnregisterRequest *,
                               inference::SystemSharedMemoryUnregisterResponse *) override {
    return notImplemented(ctx, "SystemSharedMemoryUnregister");
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

GrpcServer::GrpcServer(GrpcServerOptions options, runtime::InferenceService &service)
    : options_(std::move(options)), service_(service) {}

GrpcServer::~GrpcServer() { shutdown(); }

Status GrpcServer::start() {
  if (server_)
    return failedPrecondition() << "grpc server already started";
  impl_ = std::make_unique<Impl>(service_);
  std::string host = options_.host;
  if (host.find(':') != std::string::npos && host.front() != '[')
    host = "[" + host + "]"; // IPv6 literal
  std::string address = host + ":" + std::to_string(options_.port);
  auto clampInt = [](int64_t v) { return static_cast<int>(std::clamp<int64_t>(v, 0, INT_MAX)); };
  grpc::ServerBuilder builder;
  int selected_port = 0;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &selected_port);
  // gRPC sets SO_REUSEPORT by default, which would let a second server silently share a
  // busy port; a taken port must be an error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(clampInt(options_.max_recv_msg_bytes));
  builder.SetMaxSendMessageSize(clampInt(options_.max_send_msg_bytes));
  builder.RegisterService(impl_.get());
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
    evidence_.reset();
    return unavailable() << "grpc server: cannot bind " << address;
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
  evidence_.reset();
  port_ = 0;
  spdlog::info("grpc server stopped");
}

} // namespace rs::server
