//===- gateway/gateway_stream.cc - ModelStreamInfer on the gateway ----------===//
//
// Triton's ModelStreamInfer as the worker answers it (frontend/grpc_stream.h: one
// ModelStreamInferResponse per request, in arrival order; a failed request answered with
// its error in `error_message` and only its model name, version and id; the stream ends OK
// once the client half-closed and every answer is written), on the gateway's callback
// API: each request is one InferCall through Gateway::Impl::forward(), so the inbound cap,
// routing, failover and the gateway's metrics (rpc "ModelStreamInfer") apply to it as to a
// unary ModelInfer, and the stream's gRPC deadline bounds every request on it. The next
// request is read while earlier ones are forwarded. A client that cancels or goes away
// ends the stream CANCELLED: requests already forwarded finish and their answers are
// dropped.
//
// Thread safety: the reactions of one stream and the answers of its requests are
// serialized by the stream's mutex.
//
//===----------------------------------------------------------------------===//
#include "gateway/gateway_impl.h"

#include <grpcpp/grpcpp.h>

#include <deque>

namespace rs::gateway {
namespace {

using Request = inference::ModelInferRequest;
using Response = inference::ModelStreamInferResponse;

/// One stream. Deletes itself once gRPC is done with it and no request of it is still
/// being forwarded.
class StreamReactor final : public grpc::ServerBidiReactor<Request, Response> {
public:
  StreamReactor(Gateway::Impl &gateway, const grpc::CallbackServerContext *ctx) : gw_(gateway) {
    if (ctx->deadline() != std::chrono::system_clock::time_point::max())
      deadline_ = ctx->deadline();
    std::lock_guard lock(mu_);
    startRead();
  }

  void OnReadDone(bool ok) override {
    std::unique_lock lock(mu_);
    if (!ok) { // the client half-closed, cancelled, or the server shuts down
      reading_.reset();
      reading_done_ = true;
      advance(lock);
      return;
    }
    std::shared_ptr<Exchange> exchange = std::move(reading_);
    pending_.push_back(exchange);
    ++forwarding_;
    startRead();
    lock.unlock();
    // The answer may come on this thread before forward() returns.
    auto call = std::make_shared<InferCall>();
    call->request = &exchange->request;
    call->response = exchange->response.mutable_infer_response();
    call->owner = exchange;
    call->model = exchange->request.model_name();
    call->deadline = deadline_;
    call->rpc = "ModelStreamInfer";
    call->started = Clock::now();
    call->done = [this, exchange](const grpc::Status &s) { answered(*exchange, s); };
    gw_.forward(std::move(call));
  }

  void OnWriteDone(bool ok) override {
    std::unique_lock lock(mu_);
    writing_ = false;
    pending_.pop_front();
    if (!ok)
      broken_ = true; // the client has gone: nothing more can be written
    advance(lock);
  }

  void OnCancel() override {
    std::unique_lock lock(mu_);
    broken_ = true;
    advance(lock);
  }

  void OnDone() override {
    std::unique_lock lock(mu_);
    grpc_done_ = true;
    advance(lock);
  }

private:
  /// A request and its answer, from its read until its answer is written or dropped.
  struct Exchange {
    Request request;
    Response response;
    bool answered = false;
  };

  // Locked.
  void startRead() {
    reading_ = std::make_shared<Exchange>();
    StartRead(&reading_->request);
  }

  void answered(Exchange &exchange, const grpc::Status &status) {
    std::unique_lock lock(mu_);
    --forwarding_;
    if (!status.ok()) {
      exchange.response.Clear();
      exchange.response.set_error_message(status.error_message());
      inference::ModelInferResponse *r = exchange.response.mutable_infer_response();
      r->set_model_name(exchange.request.model_name());
      r->set_model_version(exchange.request.model_version());
      r->set_id(exchange.request.id());
    }
    exchange.answered = true;
    advance(lock);
  }

  /// Writes the oldest answer once it is in and no write is outstanding; finishes the
  /// stream once the client half-closed and every answer is written (or, broken, at once
  /// when no read or write is outstanding); deletes the stream once gRPC is done with it and
  /// nothing is being forwarded. Releases `lock`.
  void advance(std::unique_lock<std::mutex> &lock) {
    if (broken_ && !writing_)
      while (!pending_.empty() && pending_.front()->answered)
        pending_.pop_front(); // dropped; those still forwarded are dropped once answered
    if (!finishing_ && !writing_ && reading_done_) {
      if (broken_) {
        finishing_ = true;
        Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the client cancelled the stream"));
      } else if (pending_.empty()) {
        finishing_ = true;
        Finish(grpc::Status::OK);
      }
    }
    if (!finishing_ && !writing_ && !broken_ && !pending_.empty() && pending_.front()->answered) {
      writing_ = true;
      StartWrite(&pending_.front()->response);
    }
    const bool ended = grpc_done_ && forwarding_ == 0;
    lock.unlock();
    if (ended)
      delete this;
  }

  Gateway::Impl &gw_;
  std::optional<std::chrono::system_clock::time_point> deadline_;
  std::mutex mu_;
  std::shared_ptr<Exchange> reading_;             // GUARDED_BY(mu_): the message being read
  std::deque<std::shared_ptr<Exchange>> pending_; // GUARDED_BY(mu_): unwritten, in order
  int64_t forwarding_ = 0;                        // GUARDED_BY(mu_): requests not yet answered
  bool reading_done_ = false;                     // GUARDED_BY(mu_)
  bool writing_ = false;                          // GUARDED_BY(mu_)
  bool broken_ = false;                           // GUARDED_BY(mu_)
  bool finishing_ = false;                        // GUARDED_BY(mu_)
  bool grpc_done_ = false;                        // GUARDED_BY(mu_): OnDone ran
};

} // namespace

grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse> *
GrpcFrontend::ModelStreamInfer(grpc::CallbackServerContext *ctx) {
  return new StreamReactor(gw_, ctx);
}

} // namespace rs::gateway
