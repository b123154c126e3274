//===- test/server/fake_service.h - An InferenceService for front-end tests -===//
//
// Models:
//   "double"        ready; input "x" (FP32, FP64, INT32 or INT64, any shape); outputs
//                   "y" = 2x and "z" = x + 1, same dtype and shape; completes inline
//   "double_async"  the same, completed later on the fake's own worker thread
//   "gate"          like "double", but holds every request until release() is called
//   "broken"        known, not ready (reason "load failed: bad mlir"); infer Unavailable
// Anything else is NotFound. Validation mirrors the real service's wording: a missing or
// unexpected input and an unknown requested output are InvalidArgument naming the tensor.
// The last request seen is recorded for deadline, version and cancellation checks.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/service.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace rs::server::testing {

class FakeService final : public protocol::InferenceService {
public:
  FakeService() : worker_([this] { workLoop(); }) {}
  ~FakeService() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }

  bool serverLive() const override { return true; }
  bool serverReady() const override { return ready_; }
  protocol::ServerMetadata serverMetadata() const override {
    return {"ReactantServer", "0.1.0", {"system_shared_memory"}};
  }
  Result<protocol::ModelMetadata> modelMetadata(const std::string &name) const override {
    if (!known(name))
      return notFound() << "model '" << name << "' not found";
    return protocol::ModelMetadata{name,
                                   {},
                                   "cpu",
                                   {{"x", DType::kF32, {-1, 2}}},
                                   {{"y", DType::kF32, {-1, 2}}, {"z", DType::kF32, {-1, 2}}}};
  }
  Result<protocol::ModelReadiness> modelReady(const std::string &name) const override {
    if (!known(name))
      return notFound() << "model '" << name << "' not found";
    if (name == "broken")
      return protocol::ModelReadiness{false, "load failed: bad mlir"};
    return protocol::ModelReadiness{true, ""};
  }

  void infer(protocol::InferRequest request, protocol::InferCallback done) override {
    {
      std::lock_guard lock(mu_);
      last_deadline_ = request.deadline;
      last_version_ = request.model_version;
      last_cancel_ = request.cancel;
      ++requests_;
    }
    if (!known(request.model_name))
      return done(notFound() << "model '" << request.model_name << "' not found");
    if (request.model_name == "broken")
      return done(unavailable() << "model 'broken' is not loaded: load failed: bad mlir");
    if (request.model_name == "double")
      return done(compute(request));
    std::lock_guard lock(mu_);
    (request.model_name == "gate" ? held_ : queue_)
        .push_back({std::move(request), std::move(done)});
    cv_.notify_all();
  }

  /// Lets every held "gate" request complete (on the worker thread).
  void release() {
    std::lock_guard lock(mu_);
    for (auto &job : held_)
      queue_.push_back(std::move(job));
    held_.clear();
    cv_.notify_all();
  }
  /// Blocks until `n` "gate" requests are held.
  void waitForHeld(size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return held_.size() >= n; });
  }

  void setReady(bool ready) { ready_ = ready; }
  std::optional<protocol::Clock::time_point> lastDeadline() {
    std::lock_guard lock(mu_);
    return last_deadline_;
  }
  std::string lastVersion() {
    std::lock_guard lock(mu_);
    return last_version_;
  }
  int requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  /// Whether the last request's cancellation flag is raised (false when it has none).
  bool lastCancelled() {
    std::lock_guard lock(mu_);
    return isCancelled(last_cancel_);
  }

private:
  struct Job {
    protocol::InferRequest request;
    protocol::InferCallback done;
  };

  static bool known(const std::string &name) {
    return name == "double" || name == "double_async" || name == "gate" || name == "broken";
  }

  template <typename T> static Tensor affine(const Tensor &x, T mul, T add) {
    Tensor out = Tensor::zeros(x.dtype(), x.shape());
    for (int64_t i = 0; i < x.numElements(); ++i)
      out.mutableDataAs<T>()[i] = add ? x.dataAs<T>()[i] * mul + add : x.dataAs<T>()[i] * mul;
    return out;
  }

  static Result<Tensor> apply(const Tensor &x, int mul, int add) {
    switch (x.dtype()) {
    case DType::kF32: return affine<float>(x, float(mul), float(add));
    case DType::kF64: return affine<double>(x, double(mul), double(add));
    case DType::kI32: return affine<int32_t>(x, mul, add);
    case DType::kI64: return affine<int64_t>(x, mul, add);
    default:
      return invalidArgument() << "input 'x': datatype " << dtypeWireName(x.dtype())
                               << " is not one of FP32, FP64, INT32, INT64";
    }
  }

  static Result<protocol::InferResponse> compute(const protocol::InferRequest &r) {
    std::string prefix = "model '" + r.model_name + "'";
    const Tensor *x = nullptr;
    for (const auto &in : r.inputs) {
      if (in.name != "x")
        return invalidArgument() << prefix << ": unexpected input '" << in.name << "'";
      x = &in.tensor;
    }
    if (!x)
      return invalidArgument() << prefix << ": input 'x' is missing";
    std::vector<std::string> names = r.requested_outputs;
    if (names.empty())
      names = {"y", "z"};
    protocol::InferResponse resp{r.model_name, r.model_version, r.id, {}};
    for (const std::string &name : names) {
      if (name != "y" && name != "z")
        return invalidArgument() << prefix << ": unknown output '" << name << "'";
      Result<Tensor> t = name == "y" ? apply(*x, 2, 0) : apply(*x, 1, 1);
      if (!t.isOk())
        return t.status().withPrefix(prefix);
      resp.outputs.push_back({name, std::move(t).value()});
    }
    return resp;
  }

  void workLoop() {
    std::unique_lock lock(mu_);
    while (true) {
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty() && stopping_)
        return;
      Job job = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      job.done(compute(job.request));
      lock.lock();
    }
  }

  std::atomic<bool> ready_{true};
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_, held_;
  bool stopping_ = false;
  std::optional<protocol::Clock::time_point> last_deadline_;
  std::string last_version_;
  CancellationPtr last_cancel_;
  int requests_ = 0;
  std::thread worker_;
};

} // namespace rs::server::testing
