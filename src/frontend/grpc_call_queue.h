//===- frontend/grpc_call_queue.h - The gRPC front-end's completion queue (private) ===//
//
// GrpcCallQueue: the one completion queue every RPC of frontend/grpc_server.h goes
// through, the threads that poll it, and the unary calls it serves (a generated
// AsyncService's RequestXxx method, a handler, and the call's life from request to answer).
// Shared by grpc_server.cc, which registers the methods, and the RPC handlers
// (grpc_server_impl.h). Not API.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/grpc_call_step.h"
#include "support/cancellation.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace rs::frontend {

/// Answers a call: OK sends the response the handler filled, any other status the error.
using Reply = std::function<void(const grpc::Status &)>;

/// The error of a request message of `bytes` over grpc.max_recv_msg_bytes (`limit`).
std::string oversizeMessage(size_t bytes, int64_t limit);

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
  void startThreads(int n, std::chrono::microseconds spin);

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
  void close();

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

} // namespace rs::frontend
