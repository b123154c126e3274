//===- frontend/grpc_server_impl.h - GrpcServer's RPC handlers (private) -----===//
//
// The handler classes GrpcServer (frontend/grpc_server.h) registers on its completion
// queue (frontend/grpc_call_queue.h), one file per RPC family: grpc_metadata.cc (health,
// readiness, metadata, model configuration), grpc_infer.cc (ModelInfer), grpc_repository.cc
// (repository and statistics), grpc_shared_memory.cc (system and CUDA shared memory),
// grpc_control.cc (reactant_control.ControlService) and grpc_evidence.cc
// (reactant_evidence.EvidenceService). grpc_server.cc starts and stops the server. Not API.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/grpc_call_queue.h"
#include "frontend/grpc_server.h"

#include "protocol/proto/grpc_service.grpc.pb.h"
#include "protocol/proto/reactant_control_v1.grpc.pb.h"
#include "protocol/proto/reactant_evidence_v1.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace rs::frontend {

/// inference.GRPCInferenceService's handlers (GrpcCallQueue serves them).
class GrpcServer::Impl final {
public:
  Impl(protocol::InferenceService &service, protocol::ModelControl &control,
       const GrpcServerOptions &options)
      : service_(service), control_(control), shared_memory_(options.shared_memory),
        reporter_(options.reporter), max_shm_input_bytes_(options.max_recv_msg_bytes),
        max_recv_bytes_(options.max_recv_msg_bytes), max_send_bytes_(options.max_send_msg_bytes) {}

  // ---- Health, readiness and metadata (grpc_metadata.cc) --------------------

  grpc::Status ServerLive(const inference::ServerLiveRequest *,
                          inference::ServerLiveResponse *resp);
  grpc::Status ServerReady(const inference::ServerReadyRequest *,
                           inference::ServerReadyResponse *resp);
  grpc::Status ModelReady(const inference::ModelReadyRequest *req,
                          inference::ModelReadyResponse *resp);
  grpc::Status ServerMetadata(const inference::ServerMetadataRequest *,
                              inference::ServerMetadataResponse *resp);
  grpc::Status ModelMetadata(const inference::ModelMetadataRequest *req,
                             inference::ModelMetadataResponse *resp);
  /// Triton's ModelConfig (protocol/model_config.h).
  grpc::Status ModelConfig(const inference::ModelConfigRequest *req,
                           inference::ModelConfigResponse *resp);

  // ---- Inference (grpc_infer.cc) --------------------------------------------

  /// Decodes one ModelInfer request and hands it to the service; `finish` is called exactly
  /// once, with the status and, when OK, the encoded response in `resp` (which must stay
  /// valid until then). Raw inputs are views of `req`'s bytes and hold it.
  void ModelInfer(const grpc::ServerContext &ctx,
                  std::shared_ptr<const inference::ModelInferRequest> req,
                  inference::ModelInferResponse *resp, Reply finish, CancellationPtr cancel);
  /// Writes `r`'s shared-memory outputs and encodes it into `resp`. ResourceExhausted when
  /// the encoded reply is larger than grpc.max_send_msg_bytes (gRPC would refuse to send it).
  Status deliverReply(const protocol::InferResponse &r,
                      const std::vector<protocol::SharedMemoryOutput> &shm,
                      inference::ModelInferResponse *resp) const;

  // ---- Repository and statistics (grpc_repository.cc) ----------------------

  grpc::Status RepositoryIndex(const inference::RepositoryIndexRequest *req,
                               inference::RepositoryIndexResponse *resp);
  grpc::Status RepositoryModelLoad(const inference::RepositoryModelLoadRequest *req,
                                   inference::RepositoryModelLoadResponse *);
  grpc::Status RepositoryModelUnload(const inference::RepositoryModelUnloadRequest *req,
                                     inference::RepositoryModelUnloadResponse *);
  grpc::Status ModelStatistics(const inference::ModelStatisticsRequest *req,
                               inference::ModelStatisticsResponse *resp);

  // ---- System shared memory (grpc_shared_memory.cc) -------------------------

  grpc::Status SystemSharedMemoryStatus(const grpc::ServerContext &ctx,
                                        const inference::SystemSharedMemoryStatusRequest *req,
                                        inference::SystemSharedMemoryStatusResponse *resp);
  grpc::Status SystemSharedMemoryRegister(const grpc::ServerContext &ctx,
                                          const inference::SystemSharedMemoryRegisterRequest *req,
                                          inference::SystemSharedMemoryRegisterResponse *);
  grpc::Status
  SystemSharedMemoryUnregister(const grpc::ServerContext &ctx,
                               const inference::SystemSharedMemoryUnregisterRequest *req,
                               inference::SystemSharedMemoryUnregisterResponse *);

  // ---- CUDA shared memory, no region ever registered (grpc_shared_memory.cc) --

  /// Every region: none; a named one: NOT_FOUND (protocol::cudaSharedMemoryNotRegistered).
  grpc::Status CudaSharedMemoryStatus(const inference::CudaSharedMemoryStatusRequest *req,
                                      inference::CudaSharedMemoryStatusResponse *);
  /// INVALID_ARGUMENT (protocol::cudaSharedMemoryRefused): no CUDA IPC handle is taken.
  grpc::Status CudaSharedMemoryRegister(const inference::CudaSharedMemoryRegisterRequest *req,
                                        inference::CudaSharedMemoryRegisterResponse *);
  /// OK: nothing to unregister.
  grpc::Status CudaSharedMemoryUnregister(const inference::CudaSharedMemoryUnregisterRequest *,
                                          inference::CudaSharedMemoryUnregisterResponse *);

private:
  /// The shared-memory owner of the call's peer (frontend/peer.h), or PermissionDenied.
  static Result<std::string> sharedMemoryPeer(const grpc::ServerContext &ctx);
  /// UNIMPLEMENTED for `rpc` (a shared-memory RPC of a server without the extension).
  static grpc::Status notImplemented(const char *rpc);

  /// "model 'm'" or "model 'm', request 'id'": the prefix of a request's errors.
  static std::string requestPrefix(const std::string &model, const std::string &id);
  /// Tells the reporter (when set) about a failed ModelInfer.
  void report(const std::string &model, const std::string &id, const Status &status,
              bool in_service) const;

  protocol::InferenceService &service_;
  protocol::ModelControl &control_;
  protocol::SharedMemoryRegistry *shared_memory_;
  RequestReporter *reporter_;
  int64_t max_shm_input_bytes_;
  int64_t max_recv_bytes_; // grpc.max_recv_msg_bytes
  int64_t max_send_bytes_; // grpc.max_send_msg_bytes
};

/// reactant_control.ControlService: ModelControlStatus, SetModelResidency and
/// SetModelPolicy from the service; CompactMemory is not implemented (UNIMPLEMENTED: the
/// CPU backend has no device arena to compact).
class GrpcServer::ControlImpl final {
public:
  explicit ControlImpl(protocol::ModelControl &control) : control_(control) {}

  grpc::Status ModelControlStatus(const reactant_control::ModelControlStatusRequest *,
                                  reactant_control::ModelControlStatusResponse *resp);
  /// reference-system.md §5.3: an UNSPECIFIED target is INVALID_ARGUMENT, an unknown
  /// model NOT_FOUND, anything else (a self-managed worker) FAILED_PRECONDITION.
  grpc::Status SetModelResidency(const reactant_control::SetModelResidencyRequest *req,
                                 reactant_control::SetModelResidencyResponse *resp);
  grpc::Status SetModelPolicy(const reactant_control::SetModelPolicyRequest *req,
                              reactant_control::SetModelPolicyResponse *);
  grpc::Status CompactMemory(const reactant_control::CompactMemoryRequest *,
                             reactant_control::CompactMemoryResponse *);

private:
  protocol::ModelControl &control_;
};

/// reactant_evidence.EvidenceService: the deployment-identity document from the worker.
class GrpcServer::EvidenceImpl final {
public:
  explicit EvidenceImpl(std::function<std::string()> evidence) : evidence_(std::move(evidence)) {}

  grpc::Status DeploymentEvidence(const reactant_evidence::DeploymentEvidenceRequest *,
                                  reactant_evidence::DeploymentEvidenceResponse *resp);

private:
  std::function<std::string()> evidence_;
};

} // namespace rs::frontend
