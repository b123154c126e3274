//===- gateway/gateway_fanout.cc - Calls the gateway sends to many workers --===//
//
// The RPCs the gateway answers from several workers' answers (Gateway::Impl::fanOut):
// Triton's ModelStatistics, summed over the workers that serve the model, and system shared
// memory, registered with and unregistered from every worker (docs/gateway.md
// "Statistics", "Shared memory").
//
//===----------------------------------------------------------------------===//
#include "gateway/gateway_impl.h"

#include "frontend/peer.h"
#include "gateway/statistics_sum.h"
#include "protocol/grpc_statistics.h"
#include "protocol/status_mapping.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

namespace rs::gateway {

namespace {

/// `s`, a worker's error, with the worker's name in front.
grpc::Status fromWorker(const std::string &worker, const grpc::Status &s) {
  return grpc::Status(s.error_code(), "worker '" + worker + "': " + s.error_message());
}

/// OK when `peer` (ServerContext::peer()) is on the gateway's host, as a worker requires of
/// its own shared-memory clients (frontend/peer.h); else PERMISSION_DENIED.
grpc::Status localPeer(const std::string &peer) {
  if (frontend::localPeerIdentity(peer))
    return grpc::Status::OK;
  return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                      "system shared memory is accepted only from loopback peers, not from " +
                          peer);
}

} // namespace

std::vector<size_t> Gateway::Impl::allWorkers() const {
  std::vector<size_t> out(links_.size());
  for (size_t w = 0; w < out.size(); ++w)
    out[w] = w;
  return out;
}

void Gateway::Impl::gatherStatistics(
    const inference::ModelStatisticsRequest &req,
    std::function<void(Result<std::vector<protocol::ModelStatistics>>)> done) {
  using Stats = Result<std::vector<protocol::ModelStatistics>>;
  const Clock::time_point started = Clock::now();
  const std::string model = req.name();
  auto reply = [this, model, started, done](Stats r) {
    recordDone("ModelStatistics", model,
               r.isOk() ? grpc::Status::OK : protocol::toGrpcStatus(r.status()), started);
    done(std::move(r));
  };
  std::vector<size_t> workers;
  if (model.empty()) {
    for (size_t w = 0; w < links_.size(); ++w)
      if (router_.workerReady(w))
        workers.push_back(w);
    if (workers.empty())
      return reply(unavailable() << "ModelStatistics: no worker is ready");
  } else {
    workers = router_.workersFor(model);
    if (workers.empty() && !router_.knowsModel(model))
      return reply(notFound() << "model '" << model << "' is not served by any worker");
    if (workers.empty())
      return reply(protocol::fromGrpcStatus(noReadyWorkerError(model)));
  }
  struct Answers {
    inference::ModelStatisticsRequest request;
    std::vector<inference::ModelStatisticsResponse> responses;
  };
  auto a = std::make_shared<Answers>();
  a->request = req;
  a->responses.resize(workers.size());
  auto start = [a](size_t i, AsyncStub *async, grpc::ClientContext *ctx,
                   std::function<void(grpc::Status)> cb) {
    async->ModelStatistics(ctx, &a->request, &a->responses[i], std::move(cb));
  };
  auto then = [this, a, workers, named = !model.empty(),
               reply](std::vector<grpc::Status> statuses) {
    std::vector<std::vector<protocol::ModelStatistics>> per_worker;
    std::optional<grpc::Status> not_found;
    for (size_t i = 0; i < workers.size(); ++i) {
      const grpc::Status &s = statuses[i];
      if (s.ok())
        per_worker.push_back(protocol::decodeModelStatistics(a->responses[i]));
      else if (named && s.error_code() == grpc::StatusCode::NOT_FOUND)
        not_found = not_found.value_or(s);
      else
        return reply(protocol::fromGrpcStatus(fromWorker(links_[workers[i]]->name(), s)));
    }
    if (per_worker.empty() && not_found)
      return reply(protocol::fromGrpcStatus(*not_found));
    reply(sumModelStatistics(per_worker));
  };
  fanOut(std::move(workers), start, then);
}

// ---- System shared memory -------------------------------------------------------------

template <typename Req, typename Resp, typename Then>
void Gateway::Impl::sharedMemoryToEveryWorker(const char *rpc, const std::string &peer,
                                              const Req &req, AsyncMethod<Req, Resp> method,
                                              Then then,
                                              std::function<void(const grpc::Status &)> done) {
  const Clock::time_point started = Clock::now();
  std::function<void(const grpc::Status &)> reply = [this, rpc = std::string(rpc), started,
                                                     done](const grpc::Status &s) {
    recordDone(rpc, "", s, started);
    done(s);
  };
  if (grpc::Status local = localPeer(peer); !local.ok())
    return reply(local);
  auto request = std::make_shared<Req>(req);
  auto responses = std::make_shared<std::vector<Resp>>(links_.size());
  auto start = [request, responses, method](size_t i, AsyncStub *async, grpc::ClientContext *ctx,
                                            std::function<void(grpc::Status)> cb) {
    (async->*method)(ctx, request.get(), &(*responses)[i], std::move(cb));
  };
  fanOut(allWorkers(), start, [then, responses, reply](std::vector<grpc::Status> statuses) {
    then(statuses, *responses, reply);
  });
}

void Gateway::Impl::forwardSharedMemoryRegister(
    const std::string &peer, const inference::SystemSharedMemoryRegisterRequest &req,
    std::function<void(const grpc::Status &)> done) {
  using Reply = std::function<void(const grpc::Status &)>;
  auto then = [this, req](const std::vector<grpc::Status> &statuses,
                          const std::vector<inference::SystemSharedMemoryRegisterResponse> &,
                          Reply reply) {
    std::vector<size_t> registered;
    std::optional<grpc::Status> failed;
    for (size_t w = 0; w < statuses.size(); ++w) {
      if (statuses[w].ok())
        registered.push_back(w);
      else if (!failed)
        failed = fromWorker(links_[w]->name(), statuses[w]);
    }
    if (!failed) {
      spdlog::info("gateway: shared memory region registered with every worker name={} key={} "
                   "offset={} byte_size={}",
                   req.name(), req.key(), req.offset(), req.byte_size());
      return reply(grpc::Status::OK);
    }
    if (registered.empty())
      return reply(*failed);
    // All or nothing: the workers that registered it forget it again before the answer, so
    // that a retry finds no half-registered region.
    spdlog::warn("gateway: shared memory region refused name={}: {}; unregistering it from the "
                 "{} worker(s) that took it",
                 req.name(), failed->error_message(), registered.size());
    auto undo = std::make_shared<inference::SystemSharedMemoryUnregisterRequest>();
    undo->set_name(req.name());
    auto undone = std::make_shared<std::vector<inference::SystemSharedMemoryUnregisterResponse>>(
        registered.size());
    auto start_undo = [undo, undone](size_t i, AsyncStub *async, grpc::ClientContext *ctx,
                                     std::function<void(grpc::Status)> cb) {
      async->SystemSharedMemoryUnregister(ctx, undo.get(), &(*undone)[i], std::move(cb));
    };
    fanOut(std::move(registered), start_undo,
           [reply, failed = *failed, undo, undone](std::vector<grpc::Status>) { reply(failed); });
  };
  sharedMemoryToEveryWorker("SystemSharedMemoryRegister", peer, req,
                            &AsyncStub::SystemSharedMemoryRegister, then, std::move(done));
}

void Gateway::Impl::forwardSharedMemoryUnregister(
    const std::string &peer, const inference::SystemSharedMemoryUnregisterRequest &req,
    std::function<void(const grpc::Status &)> done) {
  // Unregistering cannot half-fail in a way a retry would not mend: OK when any worker
  // forgot it (a worker that cannot be reached lost its regions, or keeps them until the
  // client unregisters again).
  auto then = [this](const std::vector<grpc::Status> &statuses,
                     const std::vector<inference::SystemSharedMemoryUnregisterResponse> &,
                     std::function<void(const grpc::Status &)> reply) {
    for (const grpc::Status &s : statuses)
      if (s.ok())
        return reply(grpc::Status::OK);
    reply(statuses.empty() ? grpc::Status::OK : fromWorker(links_[0]->name(), statuses[0]));
  };
  sharedMemoryToEveryWorker("SystemSharedMemoryUnregister", peer, req,
                            &AsyncStub::SystemSharedMemoryUnregister, then, std::move(done));
}

void Gateway::Impl::forwardSharedMemoryStatus(const std::string &peer,
                                              const inference::SystemSharedMemoryStatusRequest &req,
                                              inference::SystemSharedMemoryStatusResponse *resp,
                                              std::function<void(const grpc::Status &)> done) {
  // A region is usable through the gateway only where every worker has it, with the same
  // window: the answer lists those (a named region missing on one worker is its NOT_FOUND).
  auto then = [this, resp](const std::vector<grpc::Status> &statuses,
                           const std::vector<inference::SystemSharedMemoryStatusResponse> &answers,
                           std::function<void(const grpc::Status &)> reply) {
    for (size_t w = 0; w < statuses.size(); ++w)
      if (!statuses[w].ok())
        return reply(fromWorker(links_[w]->name(), statuses[w]));
    if (answers.empty())
      return reply(grpc::Status::OK);
    for (const auto &entry : answers[0].regions()) {
      const auto &region = entry.second;
      bool everywhere = true;
      for (size_t w = 1; w < answers.size() && everywhere; ++w) {
        const auto &other = answers[w].regions();
        auto it = other.find(entry.first);
        everywhere = it != other.end() && it->second.key() == region.key() &&
                     it->second.offset() == region.offset() &&
                     it->second.byte_size() == region.byte_size();
      }
      if (everywhere)
        (*resp->mutable_regions())[entry.first] = region;
    }
    reply(grpc::Status::OK);
  };
  sharedMemoryToEveryWorker("SystemSharedMemoryStatus", peer, req,
                            &AsyncStub::SystemSharedMemoryStatus, then, std::move(done));
}

} // namespace rs::gateway
