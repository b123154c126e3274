//===- frontend/grpc_stream.cc - Triton's ModelStreamInfer --------------------===//
#include "frontend/grpc_stream.h"

#include "frontend/grpc_call_step.h"

#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>

namespace rs::frontend {
namespace {

/// One ModelStreamInfer stream. Created requested; deletes itself once it has ended and no
/// completion-queue operation or inference of it is outstanding.
class StreamCall {
public:
  explicit StreamCall(std::shared_ptr<const StreamInferMethod> method)
      : method_(std::move(method)), stream_(&ctx_) {
    method_->service->RequestModelStreamInfer(&ctx_, &stream_, method_->cq, method_->cq,
                                              &accepted_);
  }

private:
  using Response = inference::ModelStreamInferResponse;
  using Request = inference::ModelInferRequest;

  /// A completion-queue tag that calls one member of the stream.
  class Step final : public CallStep {
  public:
    Step(StreamCall *call, void (StreamCall::*fn)(bool)) : call_(call), fn_(fn) {}
    void proceed(bool ok) override { (call_->*fn_)(ok); }

  private:
    StreamCall *call_;
    void (StreamCall::*fn_)(bool);
  };

  /// An answer in the making: the response the inference fills, and whether it is done.
  struct Slot {
    std::unique_ptr<Response> response = std::make_unique<Response>();
    bool done = false;
  };

  void onAccepted(bool ok) {
    if (!ok) { // the server is shutting down: no stream arrived
      delete this;
      return;
    }
    new StreamCall(method_); // the next stream, before this one runs
    if (method_->started)
      method_->started();
    started_ = true;
    std::lock_guard<std::mutex> lock(mu_);
    startRead();
  }

  // Locked.
  void startRead() {
    reading_ = std::make_shared<Request>();
    ++ops_;
    stream_.Read(reading_.get(), &read_);
  }

  void onRead(bool ok) {
    std::unique_lock<std::mutex> lock(mu_);
    --ops_;
    if (!ok) { // the client half-closed, cancelled, or the server shuts down
      reading_.reset();
      reading_done_ = true;
      advance(lock);
      return;
    }
    const uint64_t seq = next_read_++;
    Slot &slot = slots_[seq];
    inference::ModelInferResponse *resp = slot.response->mutable_infer_response();
    std::shared_ptr<const Request> request = std::move(reading_);
    ++inflight_;
    startRead();
    lock.unlock();
    // The answer may come on this thread before infer() returns.
    method_->infer(ctx_, request, resp, [this, seq, request](const grpc::Status &status) {
      onAnswered(seq, *request, status);
    });
  }

  void onAnswered(uint64_t seq, const Request &request, const grpc::Status &status) {
    std::unique_lock<std::mutex> lock(mu_);
    --inflight_;
    Slot &slot = slots_[seq];
    if (!status.ok()) {
      Response &r = *slot.response;
      r.Clear();
      r.set_error_message(status.error_message());
      inference::ModelInferResponse *ir = r.mutable_infer_response();
      ir->set_model_name(request.model_name());
      ir->set_model_version(request.model_version());
      ir->set_id(request.id());
    }
    slot.done = true;
    advance(lock);
  }

  void onWritten(bool ok) {
    std::unique_lock<std::mutex> lock(mu_);
    --ops_;
    writing_ = false;
    writing_response_.reset();
    if (!ok)
      broken_ = true; // the client has gone: nothing more can be written
    advance(lock);
  }

  void onFinished(bool) {
    std::unique_lock<std::mutex> lock(mu_);
    --ops_;
    finished_ = true;
    advance(lock);
  }

  /// Writes the next answer in order when it is done and no write is outstanding; finishes
  /// the stream once the client half-closed and every answer is written; deletes the call
  /// once nothing of it is outstanding. Releases `lock`.
  void advance(std::unique_lock<std::mutex> &lock) {
    if (broken_) {
      // Nothing more can be written: drop the answers that are done (those still running
      // write into theirs, and are dropped once they are done).
      for (auto it = slots_.begin(); it != slots_.end();)
        it = it->second.done ? slots_.erase(it) : std::next(it);
    } else if (!writing_ && !finishing_) {
      auto next = slots_.find(next_write_);
      if (next != slots_.end() && next->second.done) {
        writing_response_ = std::move(next->second.response);
        slots_.erase(next);
        ++next_write_;
        writing_ = true;
        ++ops_;
        stream_.Write(*writing_response_, &written_);
      } else if (reading_done_ && inflight_ == 0 && slots_.empty()) {
        finishing_ = true;
        ++ops_;
        stream_.Finish(grpc::Status::OK, &finished_step_);
      }
    }
    const bool ended = ops_ == 0 && inflight_ == 0 && (finished_ || (broken_ && reading_done_));
    lock.unlock();
    if (ended) {
      std::shared_ptr<const StreamInferMethod> method = method_;
      const bool started = started_;
      delete this;
      if (started && method->ended)
        method->ended();
    }
  }

  std::shared_ptr<const StreamInferMethod> method_;
  grpc::ServerContext ctx_;
  grpc::ServerAsyncReaderWriter<Response, Request> stream_;
  Step accepted_{this, &StreamCall::onAccepted};
  Step read_{this, &StreamCall::onRead};
  Step written_{this, &StreamCall::onWritten};
  Step finished_step_{this, &StreamCall::onFinished};
  bool started_ = false; // set once, before any other step can run

  std::mutex mu_;
  std::shared_ptr<Request> reading_;           // GUARDED_BY(mu_): the message being read
  std::map<uint64_t, Slot> slots_;             // GUARDED_BY(mu_): answers not yet written
  std::unique_ptr<Response> writing_response_; // GUARDED_BY(mu_): the answer being written
  uint64_t next_read_ = 0;                     // GUARDED_BY(mu_): sequence of the next request
  uint64_t next_write_ = 0;                    // GUARDED_BY(mu_): sequence of the next answer
  int64_t inflight_ = 0;                       // GUARDED_BY(mu_): inferences not yet answered
  int64_t ops_ = 0;                            // GUARDED_BY(mu_): reads, writes, finish pending
  bool reading_done_ = false;                  // GUARDED_BY(mu_)
  bool writing_ = false;                       // GUARDED_BY(mu_)
  bool finishing_ = false;                     // GUARDED_BY(mu_)
  bool finished_ = false;                      // GUARDED_BY(mu_)
  bool broken_ = false;                        // GUARDED_BY(mu_)
};

} // namespace

void serveModelStreamInfer(std::shared_ptr<const StreamInferMethod> method) {
  new StreamCall(std::move(method));
}

} // namespace rs::frontend
