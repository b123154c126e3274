//===- frontend/grpc_server.cc - KServe V2 gRPC front-end ---------------------===//
//
// GrpcServer (frontend/grpc_server.h): binds the port, registers every RPC of
// grpc_server_impl.h on the completion queue (frontend/grpc_call_queue.h) and starts its
// threads; shuts it all down again.
//
//===----------------------------------------------------------------------===//
#include "frontend/grpc_server.h"

#include "frontend/grpc_call_queue.h"
#include "frontend/grpc_health.h"
#include "frontend/grpc_reflection_v1.h"
#include "frontend/grpc_server_impl.h"
#include "frontend/grpc_stream.h"

#include "protocol/proto/grpc_service.grpc.pb.h"
#include "protocol/proto/reactant_control_v1.grpc.pb.h"
#include "protocol/proto/reactant_evidence_v1.grpc.pb.h"
#include "support/net.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

namespace rs::frontend {

namespace {

/// gRPC's own receive limit: above grpc.max_recv_msg_bytes, so that a message up to twice
/// that size reaches the server, which refuses it itself (counted and logged); a larger
/// one gRPC refuses before any handler sees it (no metric or log can count it).
int grpcLibraryReceiveLimit(int64_t max_recv_msg_bytes) {
  return static_cast<int>(std::clamp<int64_t>(max_recv_msg_bytes * 2, 0, INT_MAX));
}

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

GrpcServer::GrpcServer(GrpcServerOptions options, protocol::InferenceService &service,
                       protocol::ModelControl &control)
    : options_(std::move(options)), service_(service), model_control_(control) {}

GrpcServer::~GrpcServer() { shutdown(); }

Status GrpcServer::start() {
  if (server_)
    return failedPrecondition() << "grpc server already started";
  impl_ = std::make_unique<Impl>(service_, model_control_, options_);
  control_ = std::make_unique<ControlImpl>(model_control_);
  if (options_.evidence)
    evidence_ = std::make_unique<EvidenceImpl>(options_.evidence);
  auto inference_service = std::make_unique<inference::GRPCInferenceService::AsyncService>();
  auto control_service = std::make_unique<reactant_control::ControlService::AsyncService>();
  auto evidence_service = std::make_unique<reactant_evidence::EvidenceService::AsyncService>();
  std::string address = formatHostPort(options_.host, options_.port);
  // grpc.health.v1.Health (grpc++'s implementation, fed by GrpcHealthPublisher) and server
  // reflection (grpc++_reflection) on the same port; both read process-wide switches at
  // BuildAndStart.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  auto clampInt = [](int64_t v) { return static_cast<int>(std::clamp<int64_t>(v, 0, INT_MAX)); };
  grpc::ServerBuilder builder;
  addReflectionV1(builder); // grpc.reflection.v1 beside grpc++_reflection's v1alpha
  int selected_port = 0;
  Result<std::shared_ptr<grpc::ServerCredentials>> credentials =
      grpcServerCredentials(options_.tls);
  if (!credentials.isOk())
    return credentials.status().withPrefix("grpc server");
  builder.AddListeningPort(address, *credentials, &selected_port);
  // gRPC sets SO_REUSEPORT by default, which would let a second server silently share a
  // busy port; a taken port must be an error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(grpcLibraryReceiveLimit(options_.max_recv_msg_bytes));
  builder.SetMaxSendMessageSize(clampInt(options_.max_send_msg_bytes));
  builder.RegisterService(inference_service.get());
  builder.RegisterService(control_service.get());
  if (evidence_)
    builder.RegisterService(evidence_service.get());
  queue_ =
      std::make_unique<GrpcCallQueue>(builder.AddCompletionQueue(), options_.max_recv_msg_bytes);
  server_ = builder.BuildAndStart();
  if (!server_ || selected_port == 0) {
    if (server_)
      server_->Shutdown();
    server_.reset();
    queue_->close();
    queue_.reset();
    impl_.reset();
    control_.reset();
    evidence_.reset();
    return unavailable() << "grpc server: cannot bind " << address
                         << bindFailureReason(options_.host, options_.port);
  }
  port_ = selected_port;
  const int threads = std::max(options_.threads, 1);

  using G = inference::GRPCInferenceService::AsyncService;
  GrpcCallQueue &q = *queue_;
  G *g = inference_service.get();
  Impl *impl = impl_.get();
  q.serve(g, &G::RequestServerLive, impl, &Impl::ServerLive);
  q.serve(g, &G::RequestServerReady, impl, &Impl::ServerReady);
  q.serve(g, &G::RequestModelReady, impl, &Impl::ModelReady);
  q.serve(g, &G::RequestServerMetadata, impl, &Impl::ServerMetadata);
  q.serve(g, &G::RequestModelMetadata, impl, &Impl::ModelMetadata);
  q.serve(g, &G::RequestModelConfig, impl, &Impl::ModelConfig);
  // One requested ModelInfer per polling thread, so that each can take a new call.
  q.serveCancellable(
      g, &G::RequestModelInfer,
      [impl](const grpc::ServerContext &ctx,
             std::shared_ptr<const inference::ModelInferRequest> req,
             inference::ModelInferResponse *resp, Reply reply, CancellationPtr cancel) {
        impl->ModelInfer(ctx, std::move(req), resp, std::move(reply), std::move(cancel));
      },
      threads);
  auto stream_method = std::make_shared<StreamInferMethod>();
  stream_method->service = g;
  stream_method->cq = q.cq();
  stream_method->infer = [impl](const grpc::ServerContext &ctx,
                                std::shared_ptr<const inference::ModelInferRequest> req,
                                inference::ModelInferResponse *resp,
                                std::function<void(const grpc::Status &)> reply) {
    // A stream's requests end with the stream: grpc_stream.h answers a cancelled stream.
    impl->ModelInfer(ctx, std::move(req), resp, std::move(reply), nullptr);
  };
  stream_method->started = [&q] { q.started(); };
  stream_method->ended = [&q] { q.answered(); };
  serveModelStreamInfer(std::move(stream_method));
  q.serve(g, &G::RequestRepositoryIndex, impl, &Impl::RepositoryIndex);
  q.serve(g, &G::RequestRepositoryModelLoad, impl, &Impl::RepositoryModelLoad);
  q.serve(g, &G::RequestRepositoryModelUnload, impl, &Impl::RepositoryModelUnload);
  q.serve(g, &G::RequestModelStatistics, impl, &Impl::ModelStatistics);
  q.serve(g, &G::RequestSystemSharedMemoryStatus, impl, &Impl::SystemSharedMemoryStatus);
  q.serve(g, &G::RequestSystemSharedMemoryRegister, impl, &Impl::SystemSharedMemoryRegister);
  q.serve(g, &G::RequestSystemSharedMemoryUnregister, impl, &Impl::SystemSharedMemoryUnregister);
  q.serve(g, &G::RequestCudaSharedMemoryStatus, impl, &Impl::CudaSharedMemoryStatus);
  q.serve(g, &G::RequestCudaSharedMemoryRegister, impl, &Impl::CudaSharedMemoryRegister);
  q.serve(g, &G::RequestCudaSharedMemoryUnregister, impl, &Impl::CudaSharedMemoryUnregister);
  using C = reactant_control::ControlService::AsyncService;
  C *c = control_service.get();
  q.serve(c, &C::RequestModelControlStatus, control_.get(), &ControlImpl::ModelControlStatus);
  q.serve(c, &C::RequestSetModelResidency, control_.get(), &ControlImpl::SetModelResidency);
  q.serve(c, &C::RequestSetModelPolicy, control_.get(), &ControlImpl::SetModelPolicy);
  q.serve(c, &C::RequestCompactMemory, control_.get(), &ControlImpl::CompactMemory);
  if (evidence_) {
    using E = reactant_evidence::EvidenceService::AsyncService;
    q.serve(evidence_service.get(), &E::RequestDeploymentEvidence, evidence_.get(),
            &EvidenceImpl::DeploymentEvidence);
  }
  services_.push_back(std::move(inference_service));
  services_.push_back(std::move(control_service));
  services_.push_back(std::move(evidence_service));
  q.startThreads(threads, options_.busy_poll);
  if (grpc::HealthCheckServiceInterface *health = server_->GetHealthCheckService())
    health_ = std::make_unique<GrpcHealthPublisher>(*health, service_, model_control_,
                                                    options_.health_refresh);
  spdlog::info("grpc server listening on {}:{} polling_threads={} busy_poll_us={}", options_.host,
               port_, threads, options_.busy_poll.count());
  return Status::ok();
}

void GrpcServer::refreshHealth() {
  if (health_)
    health_->refresh();
}

void GrpcServer::shutdown() {
  if (!server_)
    return;
  health_.reset(); // grpc++ turns every status NOT_SERVING as the server shuts down
  server_->Shutdown(std::chrono::system_clock::now() + options_.shutdown_grace);
  // A call whose inference still runs answers later (cancelled past the grace); its answer
  // goes through the completion queue, so the queue closes only after it.
  queue_->waitAnswered();
  server_->Wait();
  queue_->close();
  server_.reset();
  queue_.reset();
  services_.clear();
  impl_.reset();
  control_.reset();
  evidence_.reset();
  port_ = 0;
  spdlog::info("grpc server stopped");
}

} // namespace rs::frontend
