//===- frontend/grpc_repository.cc - Repository and statistics RPCs -------===//
//
// GrpcServer's RepositoryIndex, RepositoryModelLoad, RepositoryModelUnload and
// ModelStatistics handlers (frontend/grpc_server.h), answered by protocol::ModelControl:
// KServe's repository extension and Triton's statistics extension.
//
//===----------------------------------------------------------------------===//
#include "frontend/grpc_server.h"

#include "frontend/grpc_server_impl.h"

#include "protocol/grpc_statistics.h"
#include "protocol/model_config.h"
#include "protocol/status_mapping.h"

namespace rs::frontend {

grpc::Status GrpcServer::Impl::RepositoryIndex(const inference::RepositoryIndexRequest *req,
                                               inference::RepositoryIndexResponse *resp) {
  // reference-system.md 5.1: state READY | UNAVAILABLE, ready=true filters; the version
  // is the one every model has (protocol/model_config.h).
  for (const protocol::ModelIndexEntry &m : control_.listModels()) {
    if (req->ready() && !m.ready)
      continue;
    inference::RepositoryIndexResponse::ModelIndex *entry = resp->add_models();
    entry->set_name(m.name);
    entry->set_version(protocol::kModelVersion);
    entry->set_state(m.ready ? "READY" : "UNAVAILABLE");
    entry->set_reason(m.reason);
  }
  return grpc::Status::OK;
}

// KServe repository extension (model_control_mode explicit; docs/model_repository.md).
// The load compiles on the handler thread; the reply is sent once the model serves.
grpc::Status GrpcServer::Impl::RepositoryModelLoad(const inference::RepositoryModelLoadRequest *req,
                                                   inference::RepositoryModelLoadResponse *) {
  if (req->model_name().empty())
    return protocol::toGrpcStatus(invalidArgument() << "RepositoryModelLoad: model_name is empty");
  return protocol::toGrpcStatus(control_.repositoryLoad(req->model_name()));
}

grpc::Status
GrpcServer::Impl::RepositoryModelUnload(const inference::RepositoryModelUnloadRequest *req,
                                        inference::RepositoryModelUnloadResponse *) {
  if (req->model_name().empty())
    return protocol::toGrpcStatus(invalidArgument()
                                  << "RepositoryModelUnload: model_name is empty");
  return protocol::toGrpcStatus(control_.repositoryUnload(req->model_name()));
}

grpc::Status GrpcServer::Impl::ModelStatistics(const inference::ModelStatisticsRequest *req,
                                               inference::ModelStatisticsResponse *resp) {
  Result<std::vector<protocol::ModelStatistics>> stats = control_.modelStatistics(req->name());
  if (!stats.isOk())
    return protocol::toGrpcStatus(stats.status());
  if (Status v = protocol::checkModelVersion(req->name(), req->version()); !v.isOk())
    return protocol::toGrpcStatus(v);
  protocol::encodeModelStatistics(*stats, resp);
  return grpc::Status::OK;
}

} // namespace rs::frontend
