//===- frontend/grpc_server.cc - KServe V2 gRPC front-end ---------------------===//
#include "frontend/grpc_server.h"

#include "frontend/grpc_call_step.h"
#include "frontend/grpc_health.h"
#include "frontend/grpc_stream.h"
#include "frontend/peer.h"

#include "protocol/deadline.h"
#include "protocol/grpc_codec.h"
#include "protocol/proto/grpc_service.grpc.pb.h"
#include "protocol/proto/reactant_control_v1.grpc.pb.h"
#include "protocol/proto/reactant_evidence_v1.grpc.pb.h"
#include "protocol/status_mapping.h"
#include "support/net.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

namespace rs::frontend {

namespace {

/// Answers a call: OK sends the response the handler filled, any other status the error.
using Reply = std::function<void(const grpc::Status &)>;

/// The error of a request message over grpc.max_recv_msg_bytes.
std::string oversizeMessage(size_t bytes, int64_t limit) {
  return "request message of " + std::to_string(bytes) +
         " bytes exceeds grpc.max_recv_msg_bytes (" + std::to_string(limit) + ")";
}

/// gRPC's own receive limit: above grpc.max_recv_msg_bytes, so that a message up to twice
/// that size reaches the server, which refuses it itself (counted and logged); a larger
/// one gRPC refuses before any handler sees it (no metric or log can count it).
int grpcLibraryReceiveLimit(int64_t max_recv_msg_bytes) {
  return static_cast<int>(std::clamp<int64_t>(max_recv_msg_bytes * 2, 0, INT_MAX));
}

} // namespace

/// Every RPC of the server goes through gRPC's async API on this one completion queue,
/// polled by the server's own threads: the thread that receives a call runs its handler
/// (and, for ModelInfer, the inference when the scheduler dispatches it on the caller's
/// thread) and sends the answer, so a request passes between no threads: handing a call to
/// another thread would cost a thread wake-up per request (gRPC's callback API does that;
/// docs/performance.md, "Against jaxlib, and where the 1-client overhead goes").
class GrpcCallQueue {
public:
  /// A generated AsyncService's RequestXxx member: asks for the next call of method Xxx.
  template <class Service, class Req, class Resp>
  using RequestFn = void (Service::*)(grpc::ServerContext *, Req *,
                                      grpc::ServerAsyncResponseWriter<Resp> *,
                                      grpc::CompletionQueue *, grpc::ServerCompletionQueue *,
                                      void *);
  /// Runs one call: fills *resp and calls the Reply exactly once, before it returns or later.
  template <class Req, class Resp>
  using Handler =
      std::function<void(const grpc::ServerContext &, std::shared_ptr<const Req>, Resp *, Reply)>;
  /// The same for a call that can be cancelled: the Cancellation is raised when the client
  /// cancels the call or its deadline ends it (gRPC's AsyncNotifyWhenDone and IsCancelled).
  template <class Req, class Resp>
  using CancellableHandler =
      std::function<void(const grpc::ServerContext &, std::shared_ptr<const Req>, Resp *, Reply,
                         std::shared_ptr<const Cancellation>)>;

  /// `max_request_bytes` (> 0): the largest request message a handler is given; a larger
  /// one (gRPC reads up to its own, higher limit) is answered RESOURCE_EXHAUSTED here, except
  /// for a method that checks the size itself.
  GrpcCallQueue(std::unique_ptr<grpc::ServerCompletionQueue> cq, int64_t max_request_bytes)
      : cq_(std::move(cq)), max_request_bytes_(max_request_bytes) {}

  /// The queue (for the streaming calls of frontend/grpc_stream.h, whose steps are CallSteps).
  grpc::ServerCompletionQueue *cq() { return cq_.get(); }

  /// Serves method `request` of `service` (registered on the started server) with `handler`:
  /// keeps `outstanding` calls requested (a call arriving while none is requested waits in
  /// gRPC until one is).
  template <class Service, class Req, class Resp>
  void serve(std::type_identity_t<Service> *service, RequestFn<Service, Req, Resp> request,
             std::type_identity_t<Handler<Req, Resp>> handler, int outstanding) {
    serveMethod<Service, Req, Resp>(
        service, request,
        [handler = std::move(handler)](const grpc::ServerContext &ctx,
                                       std::shared_ptr<const Req> req, Resp *resp, Reply reply,
                                       std::shared_ptr<const Cancellation>) {
          handler(ctx, std::move(req), resp, std::move(reply));
        },
        outstanding, false);
  }

  /// Serves a method whose handler watches for the call's cancellation and checks the
  /// request's size against max_request_bytes itself (ModelInfer: it counts and logs the
  /// refusal).
  template <class Service, class Req, class Resp>
  void
  serveCancellable(std::type_identity_t<Service> *service, RequestFn<Service, Req, Resp> request,
                   std::type_identity_t<CancellableHandler<Req, Resp>> handler, int outstanding) {
    serveMethod<Service, Req, Resp>(service, request, std::move(handler), outstanding, true);
  }

  /// Serves a method whose handler answers before it returns: `fn` fills the response and
  /// returns the call's status.
  template <class Service, class Req, class Resp, class Obj>
  void serve(std::type_identity_t<Service> *service, RequestFn<Service, Req, Resp> request,
             Obj *obj, grpc::Status (Obj::*fn)(const Req *, Resp *)) {
    serve<Service, Req, Resp>(
        service, request,
        [obj, fn](const grpc::ServerContext &, std::shared_ptr<const Req> req, Resp *resp,
                  Reply reply) { reply((obj->*fn)(req.get(), resp)); },
        1);
  }
  /// The same for a handler that reads the call's context (its peer).
  template <class Service, class Req, class Resp, class Obj>
  void serve(std::type_identity_t<Service> *service, RequestFn<Service, Req, Resp> request,
             Obj *obj, grpc::Status (Obj::*fn)(const grpc::ServerContext &, const Req *, Resp *)) {
    serve<Service, Req, Resp>(
        service, request,
        [obj, fn](const grpc::ServerContext &ctx, std::shared_ptr<const Req> req, Resp *resp,
                  Reply reply) { reply((obj->*fn)(ctx, req.get(), resp)); },
        1);
  }

  /// Starts `n` threads that poll the queue and run the calls. With `spin` > 0 a thread
  /// that has just run a step polls the queue without sleeping (AsyncNext with a past
  /// deadline) until `spin` has passed with nothing to do, then sleeps in Next(): a call or
  /// an answer arriving within that time is taken at once, with no thread to wake.
  void startThreads(int n, std::chrono::microseconds spin) {
    for (int i = 0; i < n; ++i)
      threads_.emplace_back([this, spin] {
        void *tag = nullptr;
        bool ok = false;
        auto last = std::chrono::steady_clock::now();
        while (true) {
          if (spin.count() > 0) {
            const auto st = cq_->AsyncNext(&tag, &ok, gpr_inf_past(GPR_CLOCK_MONOTONIC));
            if (st == grpc::CompletionQueue::SHUTDOWN)
              break;
            if (st == grpc::CompletionQueue::GOT_EVENT) {
              static_cast<CallStep *>(tag)->proceed(ok);
              last = std::chrono::steady_clock::now();
              continue;
            }
            if (std::chrono::steady_clock::now() - last < spin)
              continue;
          }
          if (!cq_->Next(&tag, &ok))
            break;
          static_cast<CallStep *>(tag)->proceed(ok);
          last = std::chrono::steady_clock::now();
        }
      });
  }

  /// A call began to run / was answered.
  void started() { unanswered_.fetch_add(1); }
  void answered() {
    if (unanswered_.fetch_sub(1) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      all_answered_.notify_all();
    }
  }

  /// Returns once every call that began to run has been answered (the threads keep polling:
  /// an answer goes through the queue).
  void waitAnswered() {
    std::unique_lock<std::mutex> lock(mutex_);
    all_answered_.wait(lock, [this] { return unanswered_.load() == 0; });
  }

  /// Keeps a call that cannot be deleted yet until close() has drained the queue.
  void retire(CallStep *call) {
    std::lock_guard<std::mutex> lock(mutex_);
    retired_.emplace_back(call);
  }

  /// Shuts the queue down and joins the threads once it is drained; after the server's
  /// Shutdown() and waitAnswered().
  void close() {
    cq_->Shutdown();
    if (threads_.empty()) {
      void *tag = nullptr;
      bool ok = false;
      while (cq_->Next(&tag, &ok))
        static_cast<CallStep *>(tag)->proceed(false);
    }
    for (std::thread &t : threads_)
      t.join();
    threads_.clear();
    std::lock_guard<std::mutex> lock(mutex_);
    retired_.clear();
  }

private:
  template <class Service, class Req, class Resp>
  void serveMethod(Service *service, RequestFn<Service, Req, Resp> request,
                   CancellableHandler<Req, Resp> handler, int outstanding, bool cancellable);

  template <class Service, class Req, class Resp> struct Method {
    Service *service;
    RequestFn<Service, Req, Resp> request;
    CancellableHandler<Req, Resp> handler;
    GrpcCallQueue *queue;
    /// Watches for cancellation and checks the request's size itself.
    bool cancellable = false;
  };

  /// One call: requested on construction; proceed(true) requests the next call of the method
  /// and runs this one. It is deleted once its answer's completion and, for a cancellable
  /// method, gRPC's done notification have both come (the latter comes only for a call that
  /// started: grpc/grpc#10136).
  template <class Service, class Req, class Resp> class UnaryCall final : public CallStep {
  public:
    explicit UnaryCall(const Method<Service, Req, Resp> &method)
        : method_(method), responder_(&ctx_), done_(this) {
      if (method_.cancellable) {
        cancel_ = std::make_shared<Cancellation>();
        refs_.store(2);
        ctx_.AsyncNotifyWhenDone(&done_);
      }
      (method_.service->*method_.request)(&ctx_, request_.get(), &responder_,
                                          method_.queue->cq_.get(), method_.queue->cq_.get(), this);
    }

    void proceed(bool ok) override {
      if (!ok && !started_) { // the server shut down before a call came
        // gRPC does not deliver the done notification for a call that never started
        // (grpc/grpc#10136), but the issue reports cases where it did: the queue deletes
        // such a call once it has delivered every tag.
        if (method_.cancellable)
          method_.queue->retire(this);
        else
          delete this;
        return;
      }
      if (answered_ || !ok) {
        release();
        return;
      }
      started_ = true;
      new UnaryCall(method_); // the next call, before this one runs
      GrpcCallQueue &queue = *method_.queue;
      queue.started();
      auto reply = [this, &queue](const grpc::Status &status) {
        // Finish's completion may reach another polling thread and delete this call at
        // once: nothing of `this` is touched after it.
        answered_ = true;
        if (status.ok())
          responder_.Finish(response_, status, this);
        else
          responder_.FinishWithError(status, this);
        queue.answered();
      };
      if (!method_.cancellable && queue.max_request_bytes_ > 0) {
        const size_t bytes = request_->ByteSizeLong();
        if (bytes > static_cast<size_t>(queue.max_request_bytes_))
          return reply(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                    oversizeMessage(bytes, queue.max_request_bytes_)));
      }
      method_.handler(ctx_, request_, &response_, std::move(reply), cancel_);
    }

  private:
    /// gRPC's done notification of a cancellable call: raises the cancellation when the call
    /// ended without the server's answer (client cancel, deadline, broken connection).
    class DoneStep final : public CallStep {
    public:
      explicit DoneStep(UnaryCall *call) : call_(call) {}
      void proceed(bool) override {
        if (call_->ctx_.IsCancelled())
          call_->cancel_->cancel();
        call_->release();
      }

    private:
      UnaryCall *call_;
    };

    void release() {
      if (refs_.fetch_sub(1) == 1)
        delete this;
    }

    const Method<Service, Req, Resp> &method_;
    grpc::ServerContext ctx_;
    // Shared: ModelInfer's input tensors view the request's bytes and hold it.
    std::shared_ptr<Req> request_ = std::make_shared<Req>();
    Resp response_;
    grpc::ServerAsyncResponseWriter<Resp> responder_;
    DoneStep done_;
    std::shared_ptr<Cancellation> cancel_; // cancellable methods only
    std::atomic<int> refs_{1};             // the answer, and gRPC's done notification
    bool started_ = false;
    bool answered_ = false;
  };

  std::unique_ptr<grpc::ServerCompletionQueue> cq_;
  int64_t max_request_bytes_ = 0;
  std::vector<std::thread> threads_;
  std::vector<std::shared_ptr<void>> methods_; // Method<...>, for as long as calls may run
  std::atomic<int64_t> unanswered_{0};
  std::mutex mutex_; // with all_answered_; guards retired_
  std::condition_variable all_answered_;
  std::vector<std::unique_ptr<CallStep>> retired_;
};

template <class Service, class Req, class Resp>
void GrpcCallQueue::serveMethod(Service *service, RequestFn<Service, Req, Resp> request,
                                CancellableHandler<Req, Resp> handler, int outstanding,
                                bool cancellable) {
  auto method = std::make_shared<Method<Service, Req, Resp>>(
      Method<Service, Req, Resp>{service, request, std::move(handler), this, cancellable});
  methods_.push_back(method);
  for (int i = 0; i < outstanding; ++i)
    new UnaryCall<Service, Req, Resp>(*method);
}

/// inference.GRPCInferenceService's handlers (GrpcCallQueue serves them).
class GrpcServer::Impl final {
public:
  Impl(protocol::InferenceService &service, protocol::ModelControl &control,
       const GrpcServerOptions &options)
      : service_(service), control_(control), shared_memory_(options.shared_memory),
        reporter_(options.reporter), max_shm_input_bytes_(options.max_recv_msg_bytes),
        max_recv_bytes_(options.max_recv_msg_bytes), max_send_bytes_(options.max_send_msg_bytes) {}

  grpc::Status ServerLive(const inference::ServerLiveRequest *,
                          inference::ServerLiveResponse *resp) {
    resp->set_live(service_.serverLive());
    return grpc::Status::OK;
  }

  grpc::Status ServerReady(const inference::ServerReadyRequest *,
                           inference::ServerReadyResponse *resp) {
    resp->set_ready(service_.serverReady());
    return grpc::Status::OK;
  }

  grpc::Status ModelReady(const inference::ModelReadyRequest *req,
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

  grpc::Status ServerMetadata(const inference::ServerMetadataRequest *,
                              inference::ServerMetadataResponse *resp) {
    protocol::encodeServerMetadata(service_.serverMetadata(), resp);
    return grpc::Status::OK;
  }

  grpc::Status ModelMetadata(const inference::ModelMetadataRequest *req,
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

  /// Triton's ModelConfig (protocol/model_config.h).
  grpc::Status ModelConfig(const inference::ModelConfigRequest *req,
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

  /// Decodes one ModelInfer request and hands it to the service; `finish` is called exactly
  /// once, with the status and, when OK, the encoded response in `resp` (which must stay
  /// valid until then). Raw inputs are views of `req`'s bytes and hold it.
  void ModelInfer(const grpc::ServerContext &ctx,
                  std::shared_ptr<const inference::ModelInferRequest> req,
                  inference::ModelInferResponse *resp, Reply finish, CancellationPtr cancel) {
    if (const size_t bytes = req->ByteSizeLong();
        max_recv_bytes_ > 0 && bytes > static_cast<size_t>(max_recv_bytes_)) {
      Status too_big = resourceExhausted() << oversizeMessage(bytes, max_recv_bytes_);
      report(req->model_name(), req->id(), too_big, false);
      finish(protocol::toGrpcStatus(too_big));
      return;
    }
    protocol::Clock::time_point now = protocol::Clock::now();
    protocol::DecodeOptions options;
    options.now = now;
    options.shared_memory = shared_memory_;
    options.max_shared_memory_input_bytes = max_shm_input_bytes_;
    options.message_owner = req; // raw inputs are read in place (no copy of the payload)
    options.expected_datatype = protocol::expectedDatatypes(service_, req->model_name());
    options.shared_memory_owner = localPeerIdentity(ctx.peer()).value_or("");
    Result<protocol::DecodedInferRequest> decoded =
        protocol::decodeModelInferRequest(*req, options);
    if (!decoded.isOk()) {
      report(req->model_name(), req->id(), decoded.status(), false);
      finish(protocol::toGrpcStatus(decoded.status()));
      return;
    }
    protocol::InferRequest request = std::move(decoded->request);
    request.received = now;
    request.cancel = std::move(cancel);
    request.deadline = protocol::tighterDeadline(
        request.deadline,
        protocol::steadyDeadline(ctx.deadline(), std::chrono::system_clock::now(), now));
    // The shared-memory outputs hold their regions until the reply is written. The
    // service delivers (writes them, encodes the reply, checks its size) before it counts
    // the answer; `delivered` says whether it did.
    auto shm = std::make_shared<std::vector<protocol::SharedMemoryOutput>>(
        std::move(decoded->shared_memory_outputs));
    auto delivered = std::make_shared<bool>(false);
    request.deliver = [this, resp, shm, delivered, model = req->model_name(),
                       id = req->id()](const protocol::InferResponse &r) {
      *delivered = true;
      Status s = deliverReply(r, *shm, resp);
      return s.isOk() ? s : s.withPrefix(requestPrefix(model, id));
    };
    std::function<Status(const protocol::InferResponse &)> deliver = request.deliver;
    service_.infer(std::move(request), [this, finish = std::move(finish), shm, delivered,
                                        deliver = std::move(deliver), model = req->model_name(),
                                        id = req->id()](Result<protocol::InferResponse> result) {
      if (result.isOk() && !*delivered)
        if (Status s = deliver(*result); !s.isOk())
          result = s;
      if (!result.isOk()) {
        report(model, id, result.status(), true);
        finish(protocol::toGrpcStatus(result.status()));
        return;
      }
      finish(grpc::Status::OK);
    });
  }

  /// Writes `r`'s shared-memory outputs and encodes it into `resp`. ResourceExhausted when
  /// the encoded reply is larger than grpc.max_send_msg_bytes (gRPC would refuse to send it).
  Status deliverReply(const protocol::InferResponse &r,
                      const std::vector<protocol::SharedMemoryOutput> &shm,
                      inference::ModelInferResponse *resp) const {
    RS_RETURN_IF_ERROR(protocol::writeSharedMemoryOutputs(shm, r));
    protocol::encodeModelInferResponse(r, shm, resp);
    const size_t bytes = resp->ByteSizeLong();
    if (max_send_bytes_ > 0 && bytes > static_cast<size_t>(max_send_bytes_)) {
      resp->Clear();
      return StatusBuilder(StatusCode::kResourceExhausted)
             << "response of " << bytes << " bytes exceeds grpc.max_send_msg_bytes ("
             << max_send_bytes_ << ")";
    }
    return Status::ok();
  }

  grpc::Status RepositoryIndex(const inference::RepositoryIndexRequest *req,
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
  grpc::Status RepositoryModelLoad(const inference::RepositoryModelLoadRequest *req,
                                   inference::RepositoryModelLoadResponse *) {
    if (req->model_name().empty())
      return protocol::toGrpcStatus(invalidArgument()
                                    << "RepositoryModelLoad: model_name is empty");
    return protocol::toGrpcStatus(control_.repositoryLoad(req->model_name()));
  }
  grpc::Status RepositoryModelUnload(const inference::RepositoryModelUnloadRequest *req,
                                     inference::RepositoryModelUnloadResponse *) {
    if (req->model_name().empty())
      return protocol::toGrpcStatus(invalidArgument()
                                    << "RepositoryModelUnload: model_name is empty");
    return protocol::toGrpcStatus(control_.repositoryUnload(req->model_name()));
  }
  grpc::Status ModelStatistics(const inference::ModelStatisticsRequest *req,
                               inference::ModelStatisticsResponse *resp) {
    Result<std::vector<protocol::ModelStatistics>> stats = control_.modelStatistics(req->name());
    if (!stats.isOk())
      return protocol::toGrpcStatus(stats.status());
    if (Status v = protocol::checkModelVersion(req->name(), req->version()); !v.isOk())
      return protocol::toGrpcStatus(v);
    auto duration = [](const protocol::DurationStat &d, inference::StatisticDuration *out) {
      out->set_count(d.count);
      out->set_ns(d.ns);
    };
    for (const protocol::ModelStatistics &m : *stats) {
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
      for (const protocol::BatchStatistics &b : m.batch_stats) {
        inference::InferBatchStatistics *bs = out->add_batch_stats();
        bs->set_batch_size(b.batch_size);
        duration(b.compute_input, bs->mutable_compute_input());
        duration(b.compute_infer, bs->mutable_compute_infer());
        duration(b.compute_output, bs->mutable_compute_output());
      }
    }
    return grpc::Status::OK;
  }
  grpc::Status SystemSharedMemoryStatus(const grpc::ServerContext &ctx,
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
  grpc::Status SystemSharedMemoryRegister(const grpc::ServerContext &ctx,
                                          const inference::SystemSharedMemoryRegisterRequest *req,
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
  grpc::Status
  SystemSharedMemoryUnregister(const grpc::ServerContext &ctx,
                               const inference::SystemSharedMemoryUnregisterRequest *req,
                               inference::SystemSharedMemoryUnregisterResponse *) {
    if (!shared_memory_)
      return notImplemented("SystemSharedMemoryUnregister");
    Result<std::string> owner = sharedMemoryPeer(ctx);
    if (!owner.isOk())
      return protocol::toGrpcStatus(owner.status());
    shared_memory_->unregisterRegion(*owner, req->name());
    return grpc::Status::OK;
  }

private:
  /// The shared-memory owner of the call's peer (frontend/peer.h), or PermissionDenied.
  static Result<std::string> sharedMemoryPeer(const grpc::ServerContext &ctx) {
    std::optional<std::string> owner = localPeerIdentity(ctx.peer());
    if (!owner)
      return Status(StatusCode::kPermissionDenied,
                    "system shared memory is accepted only from loopback peers, not from " +
                        ctx.peer());
    return *owner;
  }

  static grpc::Status notImplemented(const char *rpc) {
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, std::string(rpc) + " is not implemented");
  }

  static std::string requestPrefix(const std::string &model, const std::string &id) {
    return "model '" + model + "'" + (id.empty() ? "" : ", request '" + id + "'");
  }
  void report(const std::string &model, const std::string &id, const Status &status,
              bool in_service) const {
    if (reporter_)
      reporter_->requestFailed({"grpc", model, id}, status, in_service);
  }

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

  /// reference-system.md §5.3: an UNSPECIFIED target is INVALID_ARGUMENT, an unknown
  /// model NOT_FOUND, anything else (a self-managed worker) FAILED_PRECONDITION.
  grpc::Status SetModelResidency(const reactant_control::SetModelResidencyRequest *req,
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

  grpc::Status SetModelPolicy(const reactant_control::SetModelPolicyRequest *req,
                              reactant_control::SetModelPolicyResponse *) {
    return protocol::toGrpcStatus(control_.setModelPolicy(
        req->name(), req->has_weight() ? std::optional<double>(req->weight()) : std::nullopt));
  }

  grpc::Status CompactMemory(const reactant_control::CompactMemoryRequest *,
                             reactant_control::CompactMemoryResponse *) {
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "CompactMemory is not implemented");
  }

private:
  protocol::ModelControl &control_;
};

/// reactant_evidence.EvidenceService: the deployment-identity document from the worker.
class GrpcServer::EvidenceImpl final {
public:
  explicit EvidenceImpl(std::function<std::string()> evidence) : evidence_(std::move(evidence)) {}

  grpc::Status DeploymentEvidence(const reactant_evidence::DeploymentEvidenceRequest *,
                                  reactant_evidence::DeploymentEvidenceResponse *resp) {
    std::string text = evidence_();
    const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_object() && doc.contains("format") && doc["format"].is_string())
      resp->set_format(doc["format"].get<std::string>());
    resp->set_json(std::move(text));
    return grpc::Status::OK;
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
