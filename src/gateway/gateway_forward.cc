//===- gateway/gateway_forward.cc - The gateway's data path -----------------===//
#include "gateway/gateway_impl.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace rs::gateway {
namespace {

/// Deadline of the metadata calls forwarded to a worker.
constexpr auto kMetadataTimeout = std::chrono::seconds(5);

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// True when a failed call never reached the worker, so trying another one is safe: gRPC
/// could not connect (refused, unreachable, name not resolved).
bool neverDelivered(const grpc::Status &s) {
  if (s.error_code() != grpc::StatusCode::UNAVAILABLE)
    return false;
  const std::string &m = s.error_message();
  for (const char *text : {"failed to connect", "Failed to connect", "Connection refused",
                           "DNS resolution failed", "No route to host"})
    if (m.find(text) != std::string::npos)
      return true;
  return false;
}

} // namespace

// ---- Impl: data path ---------------------------------------------------------------

void Gateway::Impl::callStarted() {
  std::lock_guard lock(calls_mu_);
  ++calls_;
}

void Gateway::Impl::callEnded() {
  std::lock_guard lock(calls_mu_);
  if (--calls_ == 0)
    calls_cv_.notify_all();
}

std::optional<grpc::Status> Gateway::Impl::unservedError(const std::string &model) const {
  std::optional<UnservedModel> unserved = router_.unservedModel(model);
  if (!unserved)
    return std::nullopt;
  return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                      "model '" + model + "' is not ready: " + unserved->reason);
}

grpc::Status Gateway::Impl::noReadyWorkerError(const std::string &model) const {
  return unservedError(model).value_or(grpc::Status(
      grpc::StatusCode::UNAVAILABLE, "model '" + model + "' is not served by any ready worker"));
}

std::optional<inference::ModelMetadataResponse>
Gateway::Impl::cachedMetadata(const std::string &model) const {
  std::lock_guard lock(meta_mu_);
  auto it = metadata_.find(model);
  if (it == metadata_.end())
    return std::nullopt;
  return it->second;
}

int64_t Gateway::Impl::itemsOf(const inference::ModelInferRequest &req) const {
  // The batch axis is the first variable (-1) axis of the model's first input.
  std::string input;
  int64_t axis = -1;
  {
    std::lock_guard lock(meta_mu_);
    auto it = metadata_.find(req.model_name());
    if (it == metadata_.end() || it->second.inputs().empty())
      return 1;
    const auto &spec = it->second.inputs(0);
    input = spec.name();
    for (int i = 0; i < spec.shape_size(); ++i)
      if (spec.shape(i) < 0) {
        axis = i;
        break;
      }
  }
  if (axis < 0)
    return 1;
  for (const auto &in : req.inputs())
    if (in.name() == input) {
      if (axis < in.shape_size() && in.shape(static_cast<int>(axis)) > 0)
        return in.shape(static_cast<int>(axis));
      return 1;
    }
  return 1;
}

void Gateway::Impl::recordDone(const std::string &rpc, const std::string &model,
                               const grpc::Status &s, Clock::time_point started) {
  metrics_.requestDone(rpc, model, static_cast<StatusCode>(s.error_code()), secondsSince(started));
}

void Gateway::Impl::forward(std::shared_ptr<InferCall> call) {
  const int64_t before = inflight_.fetch_add(1);
  if (inbound_cap_ > 0 && before >= inbound_cap_) {
    inflight_.fetch_sub(1);
    metrics_.shed();
    grpc::Status s(grpc::StatusCode::RESOURCE_EXHAUSTED,
                   "gateway: " + std::to_string(inbound_cap_) +
                       " requests in flight (grpc.max_concurrent_requests_per_worker x workers)");
    recordDone(call->rpc, call->model, s, call->started);
    call->done(s);
    return;
  }
  metrics_.inflightAdd(1);
  if (call->model.empty()) {
    finish(call, grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "model name is empty"));
    return;
  }
  call->items = itemsOf(*call->request);
  routeCall(std::move(call));
}

void Gateway::Impl::routeCall(std::shared_ptr<InferCall> call) {
  Charge charge;
  std::vector<size_t> order = router_.route(call->model, call->items, &charge);
  if (order.empty()) {
    if (!call->refreshed) {
      call->refreshed = true;
      refreshThen([this, call] { routeCall(call); });
      return;
    }
    finish(call, unservedError(call->model)
                     .value_or(grpc::Status(grpc::StatusCode::NOT_FOUND,
                                            "model '" + call->model +
                                                "' is not served by any ready worker")));
    return;
  }
  call->order = std::move(order);
  call->attempt = 0;
  send(std::move(call), std::move(charge));
}

void Gateway::Impl::send(std::shared_ptr<InferCall> call, Charge charge) {
  const size_t w = call->order[call->attempt];
  const auto now = std::chrono::system_clock::now();
  if (call->deadline && *call->deadline <= now) {
    router_.release(charge);
    finish(call, grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                              "gateway: the deadline passed before the request reached a worker"));
    return;
  }
  auto cap = now + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                       std::chrono::duration<double>(config_.request_timeout_seconds));
  auto ctx = std::make_shared<grpc::ClientContext>();
  ctx->set_deadline(call->deadline ? std::min(*call->deadline, cap) : cap);
  std::shared_ptr<Connection> conn = links_[w]->connection();
  const Clock::time_point sent = Clock::now();
  callStarted();
  conn->inference->async()->ModelInfer(
      ctx.get(), call->request, call->response,
      [this, call, ctx, conn, charge, w, sent](grpc::Status s) {
        router_.release(charge);
        metrics_.workerCall("ModelInfer", links_[w]->name(), secondsSince(sent));
        const bool undelivered = neverDelivered(s);
        if (s.error_code() == grpc::StatusCode::UNAVAILABLE) {
          router_.markDown(w, Clock::now());
          if (!undelivered)
            spdlog::warn("gateway: worker '{}' failed a request in flight: {}", links_[w]->name(),
                         s.error_message());
        }
        const bool not_found = s.error_code() == grpc::StatusCode::NOT_FOUND;
        if (not_found) {
          std::lock_guard lock(probe_mu_);
          round_wanted_ = true;
          probe_cv_.notify_all();
        }
        if ((undelivered || not_found) && call->attempt + 1 < call->order.size()) {
          call->last_error = s;
          ++call->attempt;
          Charge next = router_.charge(call->model, call->order[call->attempt], call->items);
          send(call, std::move(next));
        } else {
          finish(call, s);
        }
        callEnded();
      });
}

void Gateway::Impl::finish(const std::shared_ptr<InferCall> &call, const grpc::Status &status) {
  recordDone(call->rpc, call->model, status, call->started);
  inflight_.fetch_sub(1);
  metrics_.inflightAdd(-1);
  call->done(status);
}

namespace {

/// Tries `candidates` in order with `invoke(worker, done)` until one answers or a failure
/// is not a connection failure; then `finish(status)`.
void tryInOrder(std::vector<size_t> candidates, size_t i,
                std::function<void(size_t, std::function<void(grpc::Status)>)> invoke,
                std::function<void(const grpc::Status &)> finish) {
  const size_t w = candidates[i];
  invoke(w, [candidates, i, invoke, finish](grpc::Status s) {
    if (neverDelivered(s) && i + 1 < candidates.size()) {
      tryInOrder(candidates, i + 1, invoke, finish);
      return;
    }
    finish(s);
  });
}

} // namespace

template <typename Start>
std::function<void(size_t, std::function<void(grpc::Status)>)>
Gateway::Impl::unaryInvoke(Start start) {
  return [this, start](size_t w, std::function<void(grpc::Status)> cb) {
    auto ctx = std::make_shared<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + kMetadataTimeout);
    std::shared_ptr<Connection> conn = links_[w]->connection();
    callStarted();
    start(conn->inference->async(), ctx.get(),
          std::function<void(grpc::Status)>([this, ctx, conn, cb](grpc::Status s) {
            cb(s);
            callEnded();
          }));
  };
}

template <typename Req, typename Resp>
void Gateway::Impl::forwardToModel(const char *rpc, const Req *req, Resp *resp,
                                   AsyncMethod<Req, Resp> method,
                                   std::function<grpc::Status()> unrouted,
                                   std::function<void(const grpc::Status &)> done) {
  const Clock::time_point started = Clock::now();
  const std::string model = req->name();
  auto reply = [this, rpc = std::string(rpc), model, started, done](const grpc::Status &s) {
    recordDone(rpc, model, s, started);
    done(s);
  };
  if (model.empty())
    return reply(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "model name is empty"));
  std::vector<size_t> cands = router_.workersFor(model);
  if (cands.empty())
    return reply(router_.knowsModel(model)
                     ? unrouted()
                     : grpc::Status(grpc::StatusCode::NOT_FOUND,
                                    "model '" + model + "' is not served by any worker"));
  auto start = [method, req, resp](auto *async, grpc::ClientContext *ctx, auto cb) {
    (async->*method)(ctx, req, resp, std::move(cb));
  };
  tryInOrder(cands, 0, unaryInvoke(start), reply);
}

void Gateway::Impl::forwardToAnyWorker(
    const char *rpc,
    std::function<void(AsyncStub *, grpc::ClientContext *, std::function<void(grpc::Status)>)>
        start,
    std::function<void(const grpc::Status &)> done) {
  const Clock::time_point started = Clock::now();
  auto reply = [this, rpc = std::string(rpc), started, done](const grpc::Status &s) {
    recordDone(rpc, "", s, started);
    done(s);
  };
  std::vector<size_t> ready;
  for (size_t w = 0; w < links_.size(); ++w)
    if (router_.workerReady(w))
      ready.push_back(w);
  if (ready.empty())
    return reply(
        grpc::Status(grpc::StatusCode::UNAVAILABLE, std::string(rpc) + ": no worker is ready"));
  tryInOrder(std::move(ready), 0, unaryInvoke(std::move(start)), reply);
}

void Gateway::Impl::forwardMetadata(const inference::ModelMetadataRequest *req,
                                    inference::ModelMetadataResponse *resp,
                                    std::function<void(const grpc::Status &)> done) {
  auto cached = [this, req, resp] {
    if (std::optional<grpc::Status> unserved = unservedError(req->name()))
      return *unserved;
    std::optional<inference::ModelMetadataResponse> md = cachedMetadata(req->name());
    if (!md)
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          "model '" + req->name() + "' is not served by any worker");
    *resp = std::move(*md);
    return grpc::Status::OK;
  };
  forwardToModel("ModelMetadata", req, resp, &AsyncStub::ModelMetadata, cached, std::move(done));
}

void Gateway::Impl::forwardModelReady(const inference::ModelReadyRequest *req,
                                      inference::ModelReadyResponse *resp,
                                      std::function<void(const grpc::Status &)> done) {
  auto not_ready = [resp] {
    resp->set_ready(false);
    return grpc::Status::OK;
  };
  forwardToModel("ModelReady", req, resp, &AsyncStub::ModelReady, not_ready, std::move(done));
}

void Gateway::Impl::forwardModelConfig(const inference::ModelConfigRequest *req,
                                       inference::ModelConfigResponse *resp,
                                       std::function<void(const grpc::Status &)> done) {
  auto unavailable = [this, req] { return noReadyWorkerError(req->name()); };
  forwardToModel("ModelConfig", req, resp, &AsyncStub::ModelConfig, unavailable, std::move(done));
}

void Gateway::Impl::fanOut(std::vector<size_t> workers,
                           std::function<void(size_t, AsyncStub *, grpc::ClientContext *,
                                              std::function<void(grpc::Status)>)>
                               start,
                           std::function<void(std::vector<grpc::Status>)> then) {
  if (workers.empty())
    return then({});
  // Every worker's status lands in its slot; the last one to answer calls `then`.
  struct Gather {
    std::vector<grpc::Status> statuses;
    std::mutex mu;
    size_t left = 0; // GUARDED_BY(mu)
  };
  auto g = std::make_shared<Gather>();
  g->statuses.resize(workers.size());
  g->left = workers.size();
  for (size_t i = 0; i < workers.size(); ++i) {
    auto begin = [start, i](AsyncStub *async, grpc::ClientContext *ctx,
                            std::function<void(grpc::Status)> cb) {
      start(i, async, ctx, std::move(cb));
    };
    unaryInvoke(begin)(workers[i], [g, i, then](grpc::Status s) {
      {
        std::lock_guard lock(g->mu);
        g->statuses[i] = std::move(s);
        if (--g->left > 0)
          return;
      }
      then(std::move(g->statuses));
    });
  }
}

} // namespace rs::gateway
