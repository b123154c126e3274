//===- gateway/gateway_services.cc - The gateway's gRPC and REST front-ends -===//
#include "gateway/gateway_impl.h"

#include "protocol/grpc_codec.h"
#include "protocol/grpc_statistics.h"
#include "protocol/model_config.h"
#include "protocol/proto/model_config.pb.h"
#include "protocol/status_mapping.h"
#include "support/dtype.h"

#include <fmt/ranges.h>
#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>

namespace rs::gateway {
namespace {

grpc::ServerUnaryReactor *finishNow(grpc::CallbackServerContext *ctx, const grpc::Status &s) {
  grpc::ServerUnaryReactor *reactor = ctx->DefaultReactor();
  reactor->Finish(s);
  return reactor;
}

/// The call's reactor, finished when the gateway answers: `forward(finish)` starts the
/// forwarding, which calls `finish` once.
template <typename Forward>
grpc::ServerUnaryReactor *forwarded(grpc::CallbackServerContext *ctx, Forward forward) {
  grpc::ServerUnaryReactor *reactor = ctx->DefaultReactor();
  forward(std::function<void(const grpc::Status &)>(
      [reactor](const grpc::Status &s) { reactor->Finish(s); }));
  return reactor;
}

/// The call's reactor, finished when a ready worker answers `method` (forwardToAnyWorker).
template <typename Req, typename Resp>
grpc::ServerUnaryReactor *toAnyWorker(Gateway::Impl &gw, grpc::CallbackServerContext *ctx,
                                      const char *rpc, const Req *req, Resp *resp,
                                      AsyncMethod<Req, Resp> method) {
  return forwarded(ctx, [&](auto finish) {
    gw.forwardToAnyWorker(
        rpc,
        [method, req, resp](AsyncStub *stub, grpc::ClientContext *c,
                            std::function<void(grpc::Status)> cb) {
          (stub->*method)(c, req, resp, std::move(cb));
        },
        std::move(finish));
  });
}

/// Runs `start(answer)`, which calls `answer(T)` once on any thread, and waits for that
/// value (the REST front-end's handlers are synchronous).
template <typename T, typename Start> T waitFor(Start start) {
  std::promise<T> answered;
  std::future<T> value = answered.get_future();
  start([&answered](T v) { answered.set_value(std::move(v)); });
  return value.get();
}

/// One model of the gateway's repository index.
struct ModelState {
  std::string name, state, reason;
};

/// Every model a worker listed, sorted: READY when a ready worker serves it; a model no
/// worker serves with the state and reason a worker gave; else UNAVAILABLE "no ready worker
/// serves the model".
std::vector<ModelState> modelStates(const Router &router) {
  std::vector<ModelState> out;
  for (const std::string &model : router.knownModels()) {
    if (router.modelReady(model))
      out.push_back({model, "READY", ""});
    else if (std::optional<UnservedModel> u = router.unservedModel(model))
      out.push_back({model, u->state, u->reason});
    else
      out.push_back({model, "UNAVAILABLE", "no ready worker serves the model"});
  }
  return out;
}

std::optional<std::chrono::system_clock::time_point>
clientDeadline(const grpc::CallbackServerContext *ctx) {
  const auto d = ctx->deadline();
  if (d == std::chrono::system_clock::time_point::max())
    return std::nullopt;
  return d;
}

} // namespace

protocol::ServerMetadata gatewayServerMetadata() {
  // Triton's extension names for what the gateway answers on both protocols: the binary tensor
  // data extension (its REST frontend is the worker's codec) and the statistics extension
  // (summed over the workers). System shared memory is forwarded over gRPC only, and the
  // repository's load and unload are not forwarded, so neither is advertised.
  return {"ReactantServerGateway", "0.1.0", {"binary_tensor_data", "statistics"}};
}

Status restSharedMemoryRefusal() {
  return Status(StatusCode::kUnimplemented,
                "system shared memory: the gateway forwards it over gRPC only "
                "(SystemSharedMemoryRegister reaches every worker); over HTTP, send it, and the "
                "requests that name the region, to a worker's own endpoint");
}

// ---- inference.GRPCInferenceService ------------------------------------------------

grpc::ServerUnaryReactor *GrpcFrontend::ServerLive(grpc::CallbackServerContext *ctx,
                                                   const inference::ServerLiveRequest *,
                                                   inference::ServerLiveResponse *resp) {
  resp->set_live(true);
  return finishNow(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor *GrpcFrontend::ServerReady(grpc::CallbackServerContext *ctx,
                                                    const inference::ServerReadyRequest *,
                                                    inference::ServerReadyResponse *resp) {
  resp->set_ready(gw_.router().anyReady());
  return finishNow(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor *GrpcFrontend::ServerMetadata(grpc::CallbackServerContext *ctx,
                                                       const inference::ServerMetadataRequest *,
                                                       inference::ServerMetadataResponse *resp) {
  protocol::encodeServerMetadata(gatewayServerMetadata(), resp);
  return finishNow(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor *GrpcFrontend::ModelReady(grpc::CallbackServerContext *ctx,
                                                   const inference::ModelReadyRequest *req,
                                                   inference::ModelReadyResponse *resp) {
  return forwarded(ctx, [&](auto finish) { gw_.forwardModelReady(req, resp, std::move(finish)); });
}

grpc::ServerUnaryReactor *GrpcFrontend::ModelMetadata(grpc::CallbackServerContext *ctx,
                                                      const inference::ModelMetadataRequest *req,
                                                      inference::ModelMetadataResponse *resp) {
  return forwarded(ctx, [&](auto finish) { gw_.forwardMetadata(req, resp, std::move(finish)); });
}

grpc::ServerUnaryReactor *GrpcFrontend::ModelConfig(grpc::CallbackServerContext *ctx,
                                                    const inference::ModelConfigRequest *req,
                                                    inference::ModelConfigResponse *resp) {
  return forwarded(ctx, [&](auto finish) { gw_.forwardModelConfig(req, resp, std::move(finish)); });
}

grpc::ServerUnaryReactor *GrpcFrontend::ModelInfer(grpc::CallbackServerContext *ctx,
                                                   const inference::ModelInferRequest *req,
                                                   inference::ModelInferResponse *resp) {
  grpc::ServerUnaryReactor *reactor = ctx->DefaultReactor();
  auto call = std::make_shared<InferCall>();
  call->request = req;
  call->response = resp;
  call->model = req->model_name();
  call->deadline = clientDeadline(ctx);
  call->started = Clock::now();
  call->done = [reactor](const grpc::Status &s) { reactor->Finish(s); };
  gw_.forward(std::move(call));
  return reactor;
}

grpc::ServerUnaryReactor *
GrpcFrontend::RepositoryIndex(grpc::CallbackServerContext *ctx,
                              const inference::RepositoryIndexRequest *req,
                              inference::RepositoryIndexResponse *resp) {
  for (const ModelState &m : modelStates(gw_.router())) {
    if (req->ready() && m.state != "READY")
      continue;
    auto *entry = resp->add_models();
    entry->set_name(m.name);
    entry->set_version(protocol::kModelVersion);
    entry->set_state(m.state);
    entry->set_reason(m.reason);
  }
  return finishNow(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor *
GrpcFrontend::ModelStatistics(grpc::CallbackServerContext *ctx,
                              const inference::ModelStatisticsRequest *req,
                              inference::ModelStatisticsResponse *resp) {
  return forwarded(ctx, [&](auto finish) {
    gw_.gatherStatistics(*req,
                         [resp, finish](Result<std::vector<protocol::ModelStatistics>> stats) {
                           if (!stats.isOk())
                             return finish(protocol::toGrpcStatus(stats.status()));
                           protocol::encodeModelStatistics(*stats, resp);
                           finish(grpc::Status::OK);
                         });
  });
}

grpc::ServerUnaryReactor *
GrpcFrontend::SystemSharedMemoryStatus(grpc::CallbackServerContext *ctx,
                                       const inference::SystemSharedMemoryStatusRequest *req,
                                       inference::SystemSharedMemoryStatusResponse *resp) {
  return forwarded(ctx, [&](auto finish) {
    gw_.forwardSharedMemoryStatus(ctx->peer(), *req, resp, std::move(finish));
  });
}

grpc::ServerUnaryReactor *
GrpcFrontend::SystemSharedMemoryRegister(grpc::CallbackServerContext *ctx,
                                         const inference::SystemSharedMemoryRegisterRequest *req,
                                         inference::SystemSharedMemoryRegisterResponse *) {
  return forwarded(ctx, [&](auto finish) {
    gw_.forwardSharedMemoryRegister(ctx->peer(), *req, std::move(finish));
  });
}

grpc::ServerUnaryReactor *GrpcFrontend::SystemSharedMemoryUnregister(
    grpc::CallbackServerContext *ctx, const inference::SystemSharedMemoryUnregisterRequest *req,
    inference::SystemSharedMemoryUnregisterResponse *) {
  return forwarded(ctx, [&](auto finish) {
    gw_.forwardSharedMemoryUnregister(ctx->peer(), *req, std::move(finish));
  });
}

grpc::ServerUnaryReactor *
GrpcFrontend::CudaSharedMemoryStatus(grpc::CallbackServerContext *ctx,
                                     const inference::CudaSharedMemoryStatusRequest *req,
                                     inference::CudaSharedMemoryStatusResponse *resp) {
  return toAnyWorker(gw_, ctx, "CudaSharedMemoryStatus", req, resp,
                     &AsyncStub::CudaSharedMemoryStatus);
}

grpc::ServerUnaryReactor *
GrpcFrontend::CudaSharedMemoryRegister(grpc::CallbackServerContext *ctx,
                                       const inference::CudaSharedMemoryRegisterRequest *req,
                                       inference::CudaSharedMemoryRegisterResponse *resp) {
  return toAnyWorker(gw_, ctx, "CudaSharedMemoryRegister", req, resp,
                     &AsyncStub::CudaSharedMemoryRegister);
}

grpc::ServerUnaryReactor *
GrpcFrontend::CudaSharedMemoryUnregister(grpc::CallbackServerContext *ctx,
                                         const inference::CudaSharedMemoryUnregisterRequest *req,
                                         inference::CudaSharedMemoryUnregisterResponse *resp) {
  return toAnyWorker(gw_, ctx, "CudaSharedMemoryUnregister", req, resp,
                     &AsyncStub::CudaSharedMemoryUnregister);
}

// ---- reactant_control.GatewayControlService ----------------------------------------

grpc::ServerUnaryReactor *
ControlFrontend::GetSchedulingStatus(grpc::CallbackServerContext *ctx,
                                     const reactant_control::GetSchedulingStatusRequest *,
                                     reactant_control::GetSchedulingStatusResponse *resp) {
  gw_.router().fillStatus(resp);
  return finishNow(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor *
ControlFrontend::SetSchedulingPolicy(grpc::CallbackServerContext *ctx,
                                     const reactant_control::SetSchedulingPolicyRequest *req,
                                     reactant_control::SetSchedulingPolicyResponse *resp) {
  std::vector<std::string> mask(req->update_mask().begin(), req->update_mask().end());
  std::vector<std::string> warnings;
  Result<RuntimePolicy> applied = gw_.router().setPolicy(mask, req->policy(), &warnings);
  if (!applied.isOk())
    return finishNow(ctx, protocol::toGrpcStatus(applied.status()));
  spdlog::info("gateway: scheduling policy changed generation={} fields=[{}]", applied->generation,
               fmt::join(mask, ", "));
  fillPolicyProto(*applied, resp->mutable_applied());
  for (const std::string &w : warnings)
    resp->add_warnings(w);
  resp->set_persisted(false);
  return finishNow(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor *
ControlFrontend::SetModelPlacement(grpc::CallbackServerContext *ctx,
                                   const reactant_control::SetModelPlacementRequest *req,
                                   reactant_control::SetModelPlacementResponse *resp) {
  Result<Router::PlacementReply> r =
      gw_.router().setModelPlacement(req->name(), req->replicas(), req->fill_mode(),
                                     req->fill_factor(), req->allow_unknown_model());
  if (!r.isOk())
    return finishNow(ctx, protocol::toGrpcStatus(r.status()));
  spdlog::info("gateway: model '{}' placement override replicas={} fill_mode={} quantum={} (at "
               "the next repack)",
               req->name(), r->configured_replicas, r->fill_mode, r->fill_quantum);
  resp->set_name(req->name());
  resp->set_configured_replicas(r->configured_replicas);
  resp->set_effective_replicas(r->effective_replicas);
  resp->set_fill_mode(r->fill_mode);
  resp->set_fill_quantum(r->fill_quantum);
  for (const std::string &w : r->warnings)
    resp->add_warnings(w);
  resp->set_persisted(false);
  return finishNow(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor *ControlFrontend::Repack(grpc::CallbackServerContext *ctx,
                                                  const reactant_control::RepackRequest *req,
                                                  reactant_control::RepackResponse *resp) {
  // The repack runs here, at once, so the clamped wait (<= 120 s) is never needed.
  const double wait = std::clamp(req->wait_seconds(), 0.0, 120.0);
  if (gw_.router().mode() == config::SchedulingMode::kLptPacking && wait > 0 &&
      !gw_.router().anyReady())
    return finishNow(ctx, grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                       "Repack: no worker is ready to place models on"));
  Result<RepackOutcome> outcome = gw_.router().repackNow(Clock::now());
  if (!outcome.isOk())
    return finishNow(ctx, protocol::toGrpcStatus(outcome.status()));
  gw_.afterRepack(*outcome);
  reactant_control::GetSchedulingStatusResponse status;
  gw_.router().fillStatus(&status);
  resp->set_sequence(status.repack().operator_repacks_requested());
  resp->set_completed_sequence(status.repack().operator_repacks_completed());
  resp->set_completed(true);
  resp->set_waited_seconds(0);
  *resp->mutable_repack() = status.repack();
  for (const std::string &w : outcome->warnings)
    resp->add_warnings(w);
  return finishNow(ctx, grpc::Status::OK);
}

// ---- REST ------------------------------------------------------------------------------

bool RestService::serverReady() const { return gw_.router().anyReady(); }

protocol::ServerMetadata RestService::serverMetadata() const { return gatewayServerMetadata(); }

Result<protocol::ModelMetadata> RestService::modelMetadata(const std::string &model_name) const {
  if (std::optional<grpc::Status> unserved = gw_.unservedError(model_name))
    return protocol::fromGrpcStatus(*unserved);
  std::optional<inference::ModelMetadataResponse> md = gw_.cachedMetadata(model_name);
  if (!md || !gw_.router().knowsModel(model_name))
    return notFound() << "model '" << model_name << "' is not served by any worker";
  protocol::ModelMetadata out;
  out.name = md->name();
  out.versions.assign(md->versions().begin(), md->versions().end());
  out.platform = md->platform();
  auto specs = [](const auto &list, std::vector<protocol::TensorSpec> *dst) {
    for (const auto &t : list) {
      protocol::TensorSpec spec;
      spec.name = t.name();
      spec.dtype = dtypeFromWireName(t.datatype()).value_or(DType::kInvalid);
      spec.bytes = t.datatype() == protocol::kBytesDatatype; // a model.py hook's text
      spec.shape.assign(t.shape().begin(), t.shape().end());
      dst->push_back(std::move(spec));
    }
  };
  specs(md->inputs(), &out.inputs);
  specs(md->outputs(), &out.outputs);
  return out;
}

Result<protocol::ModelReadiness> RestService::modelReady(const std::string &model_name) const {
  if (gw_.router().modelReady(model_name))
    return protocol::ModelReadiness{true, ""};
  if (std::optional<UnservedModel> u = gw_.router().unservedModel(model_name))
    return protocol::ModelReadiness{false, u->reason};
  if (gw_.router().knowsModel(model_name))
    return protocol::ModelReadiness{false, "no ready worker serves the model"};
  return notFound() << "model '" << model_name << "' is not served by any worker";
}

Result<protocol::ModelConfiguration> RestService::modelConfig(const std::string &model_name) const {
  inference::ModelConfigRequest req;
  req.set_name(model_name);
  inference::ModelConfigResponse resp;
  const grpc::Status s = waitFor<grpc::Status>(
      [&](auto answer) { gw_.forwardModelConfig(&req, &resp, std::move(answer)); });
  if (!s.ok())
    return protocol::fromGrpcStatus(s);
  return protocol::decodeModelConfig(resp.config());
}

Result<std::vector<protocol::ModelStatistics>>
RestService::modelStatistics(const std::string &name) const {
  inference::ModelStatisticsRequest req;
  req.set_name(name);
  return waitFor<Result<std::vector<protocol::ModelStatistics>>>(
      [&](auto answer) { gw_.gatherStatistics(req, std::move(answer)); });
}

std::vector<protocol::ModelIndexEntry> RestService::listModels() const {
  std::vector<protocol::ModelIndexEntry> out;
  for (const ModelState &m : modelStates(gw_.router()))
    out.push_back({m.name, m.state == "READY", m.reason});
  return out;
}

void RestService::infer(protocol::InferRequest request, protocol::InferCallback done) {
  struct Owned {
    inference::ModelInferRequest request;
    inference::ModelInferResponse response;
  };
  auto owned = std::make_shared<Owned>();
  owned->request = protocol::encodeModelInferRequest(request);
  auto call = std::make_shared<InferCall>();
  call->request = &owned->request;
  call->response = &owned->response;
  call->owner = owned;
  call->model = request.model_name;
  call->started = Clock::now();
  if (request.deadline) {
    const auto left = *request.deadline - protocol::Clock::now();
    call->deadline = std::chrono::system_clock::now() +
                     std::chrono::duration_cast<std::chrono::system_clock::duration>(left);
  }
  call->rpc = "ModelInfer";
  call->done = [owned, done = std::move(done)](const grpc::Status &s) {
    if (!s.ok()) {
      done(protocol::fromGrpcStatus(s));
      return;
    }
    done(protocol::decodeModelInferResponse(owned->response));
  };
  gw_.forward(std::move(call));
}

} // namespace rs::gateway
