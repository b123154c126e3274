//===- frontend/grpc_metadata.cc - Health, readiness and metadata RPCs ----===//
//
// GrpcServer's ServerLive, ServerReady, ModelReady, ServerMetadata, ModelMetadata and
// ModelConfig handlers (frontend/grpc_server.h): the service's answers encoded by
// protocol/grpc_codec.h and protocol/model_config.h. An empty model name is
// INVALID_ARGUMENT, a version other than "" and protocol::kModelVersion NOT_FOUND.
//
//===----------------------------------------------------------------------===//
#include "frontend/grpc_server.h"

#include "frontend/grpc_server_impl.h"

#include "protocol/grpc_codec.h"
#include "protocol/model_config.h"
#include "protocol/status_mapping.h"

namespace rs::frontend {

grpc::Status GrpcServer::Impl::ServerLive(const inference::ServerLiveRequest *,
                                          inference::ServerLiveResponse *resp) {
  resp->set_live(service_.serverLive());
  return grpc::Status::OK;
}

grpc::Status GrpcServer::Impl::ServerReady(const inference::ServerReadyRequest *,
                                           inference::ServerReadyResponse *resp) {
  resp->set_ready(service_.serverReady());
  return grpc::Status::OK;
}

grpc::Status GrpcServer::Impl::ModelReady(const inference::ModelReadyRequest *req,
                                          inference::ModelReadyResponse *resp) {
  if (req->name().empty())
    return protocol::toGrpcStatus(invalidArgument() << "model name is empty");
  Result<protocol::ModelReadiness> r = service_.modelReady(req->name());
  if (!r.isOk())
    return protocol::toGrpcStatus(r.status());
  if (Status v = protocol::checkModelVersion(req->name(), req->version()); !v.isOk())
    return protocol::toGrpcStatus(v);
  resp->set_ready(r->ready);
  return grpc::Status::OK;
}

grpc::Status GrpcServer::Impl::ServerMetadata(const inference::ServerMetadataRequest *,
                                              inference::ServerMetadataResponse *resp) {
  protocol::encodeServerMetadata(service_.serverMetadata(), resp);
  return grpc::Status::OK;
}

grpc::Status GrpcServer::Impl::ModelMetadata(const inference::ModelMetadataRequest *req,
                                             inference::ModelMetadataResponse *resp) {
  if (req->name().empty())
    return protocol::toGrpcStatus(invalidArgument() << "model name is empty");
  Result<protocol::ModelMetadata> r = service_.modelMetadata(req->name());
  if (!r.isOk())
    return protocol::toGrpcStatus(r.status());
  if (Status v = protocol::checkModelVersion(req->name(), req->version()); !v.isOk())
    return protocol::toGrpcStatus(v);
  protocol::encodeModelMetadata(*r, resp);
  return grpc::Status::OK;
}

grpc::Status GrpcServer::Impl::ModelConfig(const inference::ModelConfigRequest *req,
                                           inference::ModelConfigResponse *resp) {
  if (req->name().empty())
    return protocol::toGrpcStatus(invalidArgument() << "model name is empty");
  Result<protocol::ModelConfiguration> r = service_.modelConfig(req->name());
  if (!r.isOk())
    return protocol::toGrpcStatus(r.status());
  if (Status v = protocol::checkModelVersion(req->name(), req->version()); !v.isOk())
    return protocol::toGrpcStatus(v);
  protocol::encodeModelConfig(*r, resp->mutable_config());
  return grpc::Status::OK;
}

} // namespace rs::frontend
