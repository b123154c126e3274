//===- server/worker_service.cc - One worker: models + scheduler ----------===//
//
// WorkerService's InferenceService side: the scheduler wired to the metrics, statistics
// and weight cache, registration of the loaded models, readiness and metadata, the
// metrics exposition, drain, and the path of one inference request from admission to
// its answer.
//
//===----------------------------------------------------------------------===//
#include "server/worker_service.h"

#include "server/model_batching.h"
#include "server/model_metadata.h"
#include "server/request_validation.h"

#include <chrono>

namespace rs::server {

namespace {

/// The answer for a model unloaded through the repository extension: NOT_FOUND (Triton's
/// semantics, docs/protocols.md "Errors") on every route that names it, until it is loaded.
Status unloadedError(const std::string &model) {
  return notFound() << "model '" << model
                    << "' was unloaded: new requests are refused until it is loaded again";
}

/// The loaded model of `state` (the repository's state of model `name`), or the error a
/// request for it gets: NOT_FOUND when unknown or unloaded, UNAVAILABLE with the load
/// failure when not ready.
Result<std::shared_ptr<const runtime::LoadedModel>>
readyModel(const std::optional<runtime::ModelState> &state, const std::string &name) {
  if (!state)
    return notFound() << "unknown model '" << name << "'";
  if (state->unloaded)
    return unloadedError(name);
  if (!state->model)
    return unavailable() << "model '" << name << "' is not ready: " << state->status.message();
  return state->model;
}

/// `options` with every dispatch reported to `metrics` and `statistics`, and the weight
/// cache acquired before each dispatch (after the options' own prepare_run, if any).
scheduler::SchedulerOptions observedBy(scheduler::SchedulerOptions options, WorkerMetrics &metrics,
                                       ModelStatisticsTable &statistics,
                                       runtime::WeightCache &cache) {
  options.on_dispatch = [&metrics, &statistics](const scheduler::DispatchStats &s) {
    metrics.observeDispatch(s);
    statistics.observeDispatch(s);
  };
  options.prepare_run = [&cache, first = std::move(options.prepare_run)](const std::string &model) {
    if (first)
      RS_RETURN_IF_ERROR(first(model));
    return cache.acquire(model);
  };
  return options;
}

} // namespace

WorkerService::WorkerService(runtime::ModelRepository &repository,
                             scheduler::SchedulerOptions options, std::string worker_name,
                             ServingOptions serving)
    : repository_(repository), discipline_(options.discipline),
      admission_(serving.max_concurrent_requests), request_log_(serving.log),
      shared_memory_(std::move(serving.shared_memory)),
      metrics_(std::move(worker_name), serving.info), model_dirs_(std::move(serving.model_dirs)),
      models_include_(std::move(serving.models_include)),
      explicit_control_(serving.control_mode == "explicit"),
      system_shared_memory_(serving.system_shared_memory),
      max_queue_delay_us_(options.max_queue_delay_us.count()),
      device_ordinal_(serving.device_ordinal), meta_concurrency_(serving.meta_concurrency),
      meta_warmup_(serving.meta_warmup), residency_config_(std::move(serving.residency)),
      default_residency_(serving.weight_pool_bytes > 0 ? runtime::Residency::kPinnedSystem
                                                       : runtime::Residency::kUnpinned),
      weight_cache_(runtime::WeightCacheOptions{serving.weight_pool_bytes}),
      scheduler_(observedBy(std::move(options), metrics_, statistics_, weight_cache_),
                 [this](const std::string &model, int64_t batch_size,
                        std::vector<Tensor> inputs) -> Result<std::vector<Tensor>> {
                   auto state = repository_.state(model);
                   if (!state || !state->model)
                     return notFound() << "model '" << model << "' was unloaded";
                   return state->model->run(batch_size, std::move(inputs));
                 }) {
  metrics_.setIsKnown([this](const std::string &m) { return repository_.contains(m); });
  scheduler_.start();
}

WorkerService::~WorkerService() {
  shutdown();
  // The gates answer their waiters while the statistics and metrics those answers touch
  // are still alive.
  std::map<std::string, std::unique_ptr<MetaGate>> gates;
  {
    std::lock_guard<std::mutex> lock(meta_mu_);
    gates.swap(meta_gates_);
  }
}

void WorkerService::registerLoadedModels() {
  // The models with programs first: a meta model's check calls them.
  std::vector<std::shared_ptr<const runtime::LoadedModel>> metas;
  for (const runtime::ModelState &s : repository_.states()) {
    if (!s.model)
      continue;
    if (s.model->manifest.kind == bundle::BundleKind::kMeta)
      metas.push_back(s.model);
    weight_cache_.add(s.name, s.model->weights, residencyOf(s.name));
    scheduler_.addModel(s.name, batchingOf(*s.model));
  }
  for (const std::shared_ptr<const runtime::LoadedModel> &meta : metas)
    if (Status checked = checkMeta(*meta); !checked.isOk()) {
      repository_.reportLoadFailure(meta->name, meta->dir, "startup", checked);
      repository_.recordFailure(meta->name, meta->dir, checked);
      scheduler_.removeModel(meta->name);
      weight_cache_.remove(meta->name);
    }
  refreshInternal();
}

runtime::Residency WorkerService::residencyOf(const std::string &name) const {
  auto it = residency_config_.find(name);
  return it == residency_config_.end() ? default_residency_ : it->second;
}

void WorkerService::shutdown() { scheduler_.stop(); }

std::shared_ptr<WorkerService::Gate> WorkerService::enter(const std::string &name) {
  std::lock_guard<std::mutex> lock(gate_mu_);
  std::shared_ptr<Gate> &gate = gates_[name];
  if (!gate)
    gate = std::make_shared<Gate>();
  if (gate->closing)
    return nullptr;
  ++gate->inflight;
  return gate;
}

void WorkerService::leave(const std::shared_ptr<Gate> &gate) {
  std::lock_guard<std::mutex> lock(gate_mu_);
  if (--gate->inflight == 0 && gate->closing)
    gate_cv_.notify_all();
}

std::string WorkerService::renderMetrics() {
  MetricsSnapshot snapshot;
  snapshot.inflight = admission_.inflight();
  snapshot.shed = admission_.shed();
  snapshot.max_concurrent = admission_.maxConcurrent();
  snapshot.shared_memory_regions = shared_memory_.regionCount();
  snapshot.shared_memory_bytes = shared_memory_.registeredBytes();
  snapshot.log_suppressed = request_log_.suppressed();
  snapshot.weight_cache = &weight_cache_;
  return metrics_.render(repository_, scheduler_, snapshot);
}

void WorkerService::beginDrain() { admission_.beginDrain(); }

bool WorkerService::waitIdle(std::chrono::steady_clock::time_point deadline) {
  return admission_.waitIdle(deadline);
}

std::string WorkerService::metricsModel(const std::string &name) const {
  return repository_.contains(name) ? name : std::string();
}

void WorkerService::requestFailed(const frontend::FailedRequest &request, const Status &status,
                                  bool in_service) {
  request_log_.log(request, status);
  if (!in_service)
    metrics_.requestRejected(std::string(request.model), status.code()); // "" if unknown
}

bool WorkerService::serverReady() const {
  if (admission_.draining() || !startup_done_.load())
    return false;
  for (const auto &s : repository_.states())
    if (s.model)
      return true;
  return false;
}

protocol::ServerMetadata WorkerService::serverMetadata() const {
  // Triton's extension names for what this worker implements: the binary tensor data
  // extension (HTTP), the model repository extension (index, load/unload), Triton's
  // statistics extension (ModelStatistics) and, with endpoints.shared_memory system, system
  // shared memory.
  protocol::ServerMetadata metadata{
      "ReactantServer", "0.1.0", {"binary_tensor_data", "model_repository", "statistics"}};
  if (system_shared_memory_)
    metadata.extensions.push_back("system_shared_memory");
  return metadata;
}

Result<protocol::ModelMetadata> WorkerService::modelMetadata(const std::string &model_name) const {
  RS_RETURN_IF_ERROR(servedDirectly(model_name));
  RS_ASSIGN_OR_RETURN(auto model, readyModel(repository_.state(model_name), model_name));
  return modelMetadataOf(*model);
}

Result<protocol::ModelConfiguration>
WorkerService::modelConfig(const std::string &model_name) const {
  RS_RETURN_IF_ERROR(servedDirectly(model_name));
  RS_ASSIGN_OR_RETURN(auto model, readyModel(repository_.state(model_name), model_name));
  ModelConfigSettings settings;
  settings.max_queue_delay_us = max_queue_delay_us_;
  settings.device_ordinal = device_ordinal_;
  if (std::optional<scheduler::ModelSchedStats> st = scheduler_.stats(model_name))
    if (st->max_batch_size > 0)
      settings.max_batch_size = st->max_batch_size;
  return modelConfigOf(*model, settings);
}

Result<protocol::ModelReadiness> WorkerService::modelReady(const std::string &model_name) const {
  RS_RETURN_IF_ERROR(servedDirectly(model_name));
  auto state = repository_.state(model_name);
  if (!state)
    return notFound() << "unknown model '" << model_name << "'";
  if (!state->model)
    return protocol::ModelReadiness{false, state->status.message()};
  return protocol::ModelReadiness{true, ""};
}

void WorkerService::infer(protocol::InferRequest request, protocol::InferCallback done) {
  route(std::move(request), std::move(done), Sender::kClient);
}

void WorkerService::schedule(Sender sender, const std::string &model, std::vector<Tensor> inputs,
                             std::optional<protocol::Clock::time_point> deadline,
                             scheduler::DoneFn done, CancellationPtr cancel) {
  if (sender == Sender::kMetaCall)
    scheduler_.submitCommitted(model, std::move(inputs), deadline, std::move(done),
                               std::move(cancel));
  else
    scheduler_.submit(model, std::move(inputs), deadline, std::move(done), std::move(cancel));
}

void WorkerService::route(protocol::InferRequest request, protocol::InferCallback user_done,
                          Sender sender) {
  // Every answer passes through here once: count it and time it.
  const auto arrived = protocol::Clock::now();
  const std::string model_label = metricsModel(request.model_name);
  if (Status admitted = admission_.acquire(); !admitted.isOk()) {
    metrics_.requestFinished(model_label, admitted.code(), 0);
    user_done(admitted.withPrefix(requestPrefix(request)));
    return;
  }
  // The front-end's delivery runs before the answer is counted: a response it cannot send
  // counts under the error the client gets.
  const double decode_seconds =
      request.received ? std::chrono::duration<double>(arrived - *request.received).count() : 0;
  auto done = [this, arrived, decode_seconds, model_label, deliver = std::move(request.deliver),
               cancel = request.cancel, deadline = request.deadline,
               user_done = std::move(user_done)](Result<protocol::InferResponse> r) {
    // The client has gone: nothing is delivered (no shared-memory output is written) and
    // the answer counts as what the client saw: DeadlineExceeded when the deadline ended
    // the call, else Cancelled.
    if (isCancelled(cancel) && (r.isOk() || (r.status().code() != StatusCode::kCancelled &&
                                             r.status().code() != StatusCode::kDeadlineExceeded))) {
      if (deadline && protocol::Clock::now() >= *deadline)
        r = Status(deadlineExceeded() << "deadline exceeded; the answer was dropped");
      else
        r = Status(StatusBuilder(StatusCode::kCancelled)
                   << "the client cancelled the request; its answer was dropped");
    }
    const auto delivering = protocol::Clock::now();
    if (r.isOk() && deliver)
      if (Status s = deliver(*r); !s.isOk())
        r = s;
    const auto answered = protocol::Clock::now();
    const double seconds = std::chrono::duration<double>(answered - arrived).count();
    metrics_.requestFinished(model_label, r.isOk() ? StatusCode::kOk : r.status().code(), seconds);
    if (r.isOk())
      metrics_.observeRequestStages(model_label, decode_seconds,
                                    std::chrono::duration<double>(answered - delivering).count());
    if (!model_label.empty())
      statistics_.requestFinished(model_label, r.isOk(), seconds);
    // Released before the reply goes out, so a client that sends its next request as soon
    // as it has the answer finds the slot free.
    admission_.release();
    user_done(std::move(r));
  };
  if (request.model_name.empty()) {
    done(invalidArgument() << "model name is empty");
    return;
  }
  Result<std::shared_ptr<const runtime::LoadedModel>> ready =
      readyModel(repository_.state(request.model_name), request.model_name);
  if (!ready.isOk()) {
    done(ready.status());
    return;
  }
  if (sender == Sender::kClient)
    if (Status direct = servedDirectly(request.model_name); !direct.isOk()) {
      done(direct);
      return;
    }
  if (Status v = protocol::checkModelVersion(request.model_name, request.model_version);
      !v.isOk()) {
    done(withRequestPrefix(v, request.model_name, requestPrefix(request)));
    return;
  }
  std::shared_ptr<const runtime::LoadedModel> model = std::move(ready).value();
  if (auto pool = std::dynamic_pointer_cast<const hooks::HookPool>(model->extension)) {
    std::string prefix = requestPrefix(request);
    if (pool->has(hooks::HookStage::kRun)) {
      inferMeta(std::move(model), std::move(pool), std::move(request), std::move(prefix),
                std::move(done));
      return;
    }
    inferWithHooks(std::move(model), std::move(pool), std::move(request), std::move(prefix),
                   std::move(done), sender);
    return;
  }
  Result<ValidatedInputs> valid = validateRequest(model->manifest, request);
  if (!valid.isOk()) {
    done(valid.status().withPrefix(requestPrefix(request)));
    return;
  }
  std::shared_ptr<Gate> gate = enter(request.model_name);
  if (!gate) {
    done(closingError(request.model_name));
    return;
  }
  auto response = std::make_shared<protocol::InferResponse>();
  response->model_name = request.model_name;
  response->model_version = request.model_version;
  response->id = request.id;
  std::vector<size_t> selected = valid->outputs;
  std::string prefix = requestPrefix(request);
  CancellationPtr cancel = request.cancel;
  schedule(
      sender, request.model_name, std::move(valid->inputs), request.deadline,
      [this, gate, model, response, selected, prefix, done](Result<std::vector<Tensor>> outputs) {
        if (!outputs.isOk()) {
          leave(gate);
          done(withRequestPrefix(outputs.status(), response->model_name, prefix));
          return;
        }
        for (size_t o : selected)
          response->outputs.push_back({model->manifest.executable_outputs[o].name, (*outputs)[o]});
        leave(gate);
        done(std::move(*response));
      },
      std::move(cancel));
}

} // namespace rs::server
