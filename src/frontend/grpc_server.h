//===- frontend/grpc_server.h - KServe V2 gRPC front-end ----------------------===//
//
// Serves `inference.GRPCInferenceService` (protocol/proto/grpc_service.proto) over
// cleartext HTTP/2 (or TLS). Every RPC goes through gRPC's async API on one completion queue
// that the server's own threads poll (GrpcServerOptions::threads, optionally without
// sleeping between calls: GrpcServerOptions::busy_poll): the thread that
// receives a call decodes it (protocol/grpc_codec.h), sets InferRequest::deadline to the
// tighter of the client's gRPC deadline and its `reactant_timeout_ns` parameter, and calls
// InferenceService::infer(); when the device is idle the scheduler runs the batch on that
// same thread, and the answer is sent from the completion callback. So a request is received,
// run and answered without passing between threads (each hand-over is a thread wake-up, tens
// of microseconds on a virtual machine; docs/performance.md). Inputs sent as
// raw_input_contents are not copied: each request message is held by a shared pointer, and
// the input tensors are views of its bytes that hold it. Every other RPC goes through the same
// queue and threads.
//
// RPCs: ServerLive, ServerReady, ModelReady, ServerMetadata, ModelMetadata, ModelConfig
// (Triton's model configuration, protocol/model_config.h), ModelInfer, ModelStreamInfer
// (frontend/grpc_stream.h), RepositoryIndex (ModelControl::listModels; state READY |
// UNAVAILABLE, `ready` filters), and on the same port
// reactant_control.ControlService/ModelControlStatus (ModelControl::controlStatus), which the
// gateway polls, and, when GrpcServerOptions::evidence is set,
// reactant_evidence.EvidenceService/DeploymentEvidence (the deployment-identity document,
// server/evidence.h). With GrpcServerOptions::shared_memory set,
// SystemSharedMemoryStatus/Register/Unregister manage its regions (protocol/shared_memory.h:
// Register errors INVALID_ARGUMENT / ALREADY_EXISTS / RESOURCE_EXHAUSTED, Status of an unknown
// region NOT_FOUND, Unregister of an unknown one OK, an empty name means every region) and
// ModelInfer tensors may name them, and Triton's CudaSharedMemoryStatus/Register/Unregister
// answer that no CUDA region exists (Status empty, a named region NOT_FOUND; Register
// INVALID_ARGUMENT; Unregister OK); without it all six RPCs answer UNIMPLEMENTED.
// RepositoryModelLoad/Unload call ModelControl::repositoryLoad/repositoryUnload
// (FAILED_PRECONDITION unless model_control_mode is explicit; the reply comes once the model serves
// or has gone), ModelStatistics ModelControl::modelStatistics (Triton's statistics extension), and
// ControlService SetModelResidency / SetModelPolicy the service's setModelResidency /
// setModelPolicy (reference-system.md §5.3); CompactMemory answers UNIMPLEMENTED. Every
// failed ModelInfer is told
// to GrpcServerOptions::reporter (logged once, counted). Error codes are the service's
// Status codes,
// passed through unchanged (protocol/status_mapping.h); ModelReady for an unknown model is
// NOT_FOUND, an empty model name INVALID_ARGUMENT. Every RPC that takes a model version
// (ModelReady, ModelMetadata, ModelConfig, ModelInfer, ModelStreamInfer, ModelStatistics)
// answers NOT_FOUND for one other than "" and protocol::kModelVersion. The same port also
// serves grpc.health.v1.Health (frontend/grpc_health.h) and gRPC server reflection
// (grpc.reflection.v1alpha.ServerReflection, grpc++_reflection), which lists every service
// above with its messages. A request message larger than max_recv_msg_bytes is answered
// RESOURCE_EXHAUSTED (`request message of N bytes exceeds grpc.max_recv_msg_bytes (M)`; a
// ModelInfer is told to the reporter): gRPC itself is given twice that limit so that such a
// message reaches the server; a larger one gRPC refuses before any handler. A ModelInfer
// call that ends without the server's answer (the client cancelled it, its deadline passed,
// the connection broke; gRPC's AsyncNotifyWhenDone) raises its request's
// InferRequest::cancel.
//
// Source: KServe V2 gRPC protocol; reference-system.md section 5.1-5.2.
// Thread safety: start() and shutdown() from one controlling thread; RPCs run on the
// server's polling threads and call the InferenceService and ModelControl concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/request_log.h"
#include "frontend/tls.h"
#include "protocol/service.h"
#include "protocol/shared_memory.h"
#include "support/status.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace grpc {
class Server;
class Service;
} // namespace grpc

namespace rs::frontend {

class GrpcCallQueue;       // grpc_call_queue.h
class GrpcHealthPublisher; // grpc_health.h

struct GrpcServerOptions {
  /// Address to bind: "0.0.0.0" (all IPv4 interfaces), "127.0.0.1", "::" ...
  std::string host = "0.0.0.0";
  /// TCP port; 0 picks a free port, read back with GrpcServer::port().
  int port = 8001;
  /// Largest request message accepted, in bytes (config key grpc.max_recv_msg_bytes; see
  /// the file comment).
  int64_t max_recv_msg_bytes = int64_t{512} << 20;
  /// Largest response message sent, in bytes (config key grpc.max_send_msg_bytes).
  int64_t max_send_msg_bytes = int64_t{512} << 20;
  /// How long shutdown() lets in-flight calls finish before cancelling them.
  std::chrono::milliseconds shutdown_grace{30000};
  /// TLS (frontend/tls.h; the `tls:` keys); off by default.
  TlsOptions tls;
  /// When set, reactant_evidence.EvidenceService/DeploymentEvidence is served on the same
  /// port and answers with this document (JSON text; server/evidence.h). Called per RPC,
  /// from gRPC threads.
  std::function<std::string()> evidence;
  /// The system shared memory regions; nullptr: the extension is not offered.
  protocol::SharedMemoryRegistry *shared_memory = nullptr;
  /// Told about every failed ModelInfer; may be null.
  RequestReporter *reporter = nullptr;
  /// Threads that poll the server's completion queue and run the calls they receive (for
  /// ModelInfer: the decode, and the inference when the scheduler dispatches it on the
  /// caller's thread); config key grpc.polling_threads, at least 1.
  int threads = 4;
  /// How long a polling thread keeps polling without sleeping after it last had work
  /// (config key grpc.busy_poll_us); 0 = sleep at once. Polling costs a busy core per
  /// thread while it lasts and saves the wake-up of a sleeping one per call (costly on a
  /// virtual machine whose idle cores halt; docs/performance.md).
  std::chrono::microseconds busy_poll{0};
  /// How often the grpc.health.v1 statuses are refreshed from the service besides
  /// refreshHealth() (frontend/grpc_health.h); zero: only at start and by refreshHealth().
  std::chrono::milliseconds health_refresh{500};
};

class GrpcServer {
public:
  /// `service` and `control` (protocol/service.h) must outlive the server (or at least its
  /// shutdown()).
  GrpcServer(GrpcServerOptions options, protocol::InferenceService &service,
             protocol::ModelControl &control);
  /// Calls shutdown().
  ~GrpcServer();
  GrpcServer(const GrpcServer &) = delete;
  GrpcServer &operator=(const GrpcServer &) = delete;

  /// Binds and starts serving. Unavailable if the address cannot be bound,
  /// FailedPrecondition if already started.
  Status start();
  /// The bound port after a successful start(), else 0.
  int port() const { return port_; }
  /// Publishes the service's readiness to grpc.health.v1.Health now (after a change the
  /// caller made: a load, an unload, the start of a drain). No-op before start().
  void refreshHealth();
  /// Stops accepting calls, lets in-flight calls finish (up to shutdown_grace, then
  /// cancels them), and returns when every call is done. Idempotent.
  void shutdown();

private:
  class Impl;
  class ControlImpl;
  class EvidenceImpl;
  GrpcServerOptions options_;
  protocol::InferenceService &service_;
  protocol::ModelControl &model_control_;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<ControlImpl> control_;
  std::unique_ptr<EvidenceImpl> evidence_;
  std::vector<std::unique_ptr<grpc::Service>> services_; // the generated AsyncServices
  std::unique_ptr<GrpcCallQueue> queue_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<GrpcHealthPublisher> health_;
  int port_ = 0;
};

} // namespace rs::frontend
