//===- frontend/grpc_shared_memory.cc - Shared memory RPCs ----------------===//
//
// GrpcServer's SystemSharedMemoryStatus, SystemSharedMemoryRegister and
// SystemSharedMemoryUnregister handlers (frontend/grpc_server.h) over
// protocol::SharedMemoryRegistry: only loopback peers (frontend/peer.h) may use them, and
// without GrpcServerOptions::shared_memory they answer UNIMPLEMENTED. Beside them Triton's
// CUDA shared-memory RPCs, as the HTTP routes answer them (protocol/shared_memory.h): no
// region, nothing to unregister, registering refused; UNIMPLEMENTED without shared memory.
//
//===----------------------------------------------------------------------===//
#include "frontend/grpc_server.h"

#include "frontend/grpc_server_impl.h"
#include "frontend/peer.h"
#include "protocol/shared_memory.h"
#include "protocol/status_mapping.h"

#include <spdlog/spdlog.h>

#include <optional>

namespace rs::frontend {

grpc::Status
GrpcServer::Impl::SystemSharedMemoryStatus(const grpc::ServerContext &ctx,
                                           const inference::SystemSharedMemoryStatusRequest *req,
                                           inference::SystemSharedMemoryStatusResponse *resp) {
  if (!shared_memory_)
    return notImplemented("SystemSharedMemoryStatus");
  Result<std::string> owner = sharedMemoryPeer(ctx);
  if (!owner.isOk())
    return protocol::toGrpcStatus(owner.status());
  Result<std::vector<protocol::SharedMemoryRegionInfo>> regions =
      shared_memory_->status(*owner, req->name());
  if (!regions.isOk())
    return protocol::toGrpcStatus(regions.status());
  for (const protocol::SharedMemoryRegionInfo &r : *regions) {
    auto &entry = (*resp->mutable_regions())[r.name];
    entry.set_name(r.name);
    entry.set_key(r.key);
    entry.set_offset(r.offset);
    entry.set_byte_size(r.byte_size);
  }
  return grpc::Status::OK;
}

grpc::Status GrpcServer::Impl::SystemSharedMemoryRegister(
    const grpc::ServerContext &ctx, const inference::SystemSharedMemoryRegisterRequest *req,
    inference::SystemSharedMemoryRegisterResponse *) {
  if (!shared_memory_)
    return notImplemented("SystemSharedMemoryRegister");
  Result<std::string> owner = sharedMemoryPeer(ctx);
  if (!owner.isOk())
    return protocol::toGrpcStatus(owner.status());
  std::string cause;
  Status s = shared_memory_->registerRegion(
      *owner, {req->name(), req->key(), req->offset(), req->byte_size()}, &cause);
  if (s.isOk())
    spdlog::info("shared memory region registered name={} key={} offset={} byte_size={} "
                 "peer={}",
                 req->name(), req->key(), req->offset(), req->byte_size(), *owner);
  else
    spdlog::warn("shared memory region refused name={} key={} peer={} cause={}", req->name(),
                 req->key(), *owner, cause.empty() ? s.message() : cause);
  return protocol::toGrpcStatus(s);
}

grpc::Status GrpcServer::Impl::SystemSharedMemoryUnregister(
    const grpc::ServerContext &ctx, const inference::SystemSharedMemoryUnregisterRequest *req,
    inference::SystemSharedMemoryUnregisterResponse *) {
  if (!shared_memory_)
    return notImplemented("SystemSharedMemoryUnregister");
  Result<std::string> owner = sharedMemoryPeer(ctx);
  if (!owner.isOk())
    return protocol::toGrpcStatus(owner.status());
  shared_memory_->unregisterRegion(*owner, req->name());
  return grpc::Status::OK;
}

grpc::Status
GrpcServer::Impl::CudaSharedMemoryStatus(const inference::CudaSharedMemoryStatusRequest *req,
                                         inference::CudaSharedMemoryStatusResponse *) {
  if (!shared_memory_)
    return notImplemented("CudaSharedMemoryStatus");
  if (!req->name().empty())
    return protocol::toGrpcStatus(protocol::cudaSharedMemoryNotRegistered(req->name()));
  return grpc::Status::OK;
}

grpc::Status
GrpcServer::Impl::CudaSharedMemoryRegister(const inference::CudaSharedMemoryRegisterRequest *req,
                                           inference::CudaSharedMemoryRegisterResponse *) {
  if (!shared_memory_)
    return notImplemented("CudaSharedMemoryRegister");
  return protocol::toGrpcStatus(protocol::cudaSharedMemoryRefused(req->name()));
}

grpc::Status
GrpcServer::Impl::CudaSharedMemoryUnregister(const inference::CudaSharedMemoryUnregisterRequest *,
                                             inference::CudaSharedMemoryUnregisterResponse *) {
  if (!shared_memory_)
    return notImplemented("CudaSharedMemoryUnregister");
  return grpc::Status::OK;
}

Result<std::string> GrpcServer::Impl::sharedMemoryPeer(const grpc::ServerContext &ctx) {
  std::optional<std::string> owner = localPeerIdentity(ctx.peer());
  if (!owner)
    return Status(StatusCode::kPermissionDenied,
                  "system shared memory is accepted only from loopback peers, not from " +
                      ctx.peer());
  return *owner;
}

grpc::Status GrpcServer::Impl::notImplemented(const char *rpc) {
  return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, std::string(rpc) + " is not implemented");
}

} // namespace rs::frontend
