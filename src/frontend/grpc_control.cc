//===- frontend/grpc_control.cc - reactant_control.ControlService ---------===//
//
// GrpcServer's ControlService handlers (frontend/grpc_server.h): ModelControlStatus, which
// the gateway polls, SetModelResidency and SetModelPolicy from protocol::ModelControl;
// CompactMemory answers UNIMPLEMENTED.
//
//===----------------------------------------------------------------------===//
#include "frontend/grpc_server.h"

#include "frontend/grpc_server_impl.h"

#include "protocol/status_mapping.h"

#include <optional>

namespace rs::frontend {

grpc::Status
GrpcServer::ControlImpl::ModelControlStatus(const reactant_control::ModelControlStatusRequest *,
                                            reactant_control::ModelControlStatusResponse *resp) {
  Result<protocol::ControlStatus> status = control_.controlStatus();
  if (!status.isOk()) {
    return protocol::toGrpcStatus(status.status());
  }
  resp->set_residency_mode(status->residency_mode);
  resp->set_discipline(status->discipline);
  resp->set_weight_cache_max_bytes(status->weight_cache_max_bytes);
  for (const protocol::ModelControlInfo &m : status->models) {
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
  return grpc::Status::OK;
}

grpc::Status
GrpcServer::ControlImpl::SetModelResidency(const reactant_control::SetModelResidencyRequest *req,
                                           reactant_control::SetModelResidencyResponse *resp) {
  const int target = req->target();
  if (target < reactant_control::UNPINNED || target > reactant_control::PINNED_DEVICE) {
    return protocol::toGrpcStatus(
        invalidArgument() << "SetModelResidency of '" << req->name() << "': target " << target
                          << " is not UNPINNED (1), PINNED_SYSTEM (2) or PINNED_DEVICE (3)");
  }
  Result<protocol::Residency> r =
      control_.setModelResidency(req->name(), static_cast<protocol::Residency>(target));
  if (!r.isOk()) {
    return protocol::toGrpcStatus(r.status());
  }
  resp->set_residency(static_cast<reactant_control::Residency>(*r));
  return grpc::Status::OK;
}

grpc::Status
GrpcServer::ControlImpl::SetModelPolicy(const reactant_control::SetModelPolicyRequest *req,
                                        reactant_control::SetModelPolicyResponse *) {
  return protocol::toGrpcStatus(control_.setModelPolicy(
      req->name(), req->has_weight() ? std::optional<double>(req->weight()) : std::nullopt));
}

grpc::Status GrpcServer::ControlImpl::CompactMemory(const reactant_control::CompactMemoryRequest *,
                                                    reactant_control::CompactMemoryResponse *) {
  return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "CompactMemory is not implemented");
}

} // namespace rs::frontend
