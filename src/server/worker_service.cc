//===- server/worker_service.cc - One worker: models + scheduler ------------===//
#include "server/worker_service.h"

#include "server/model_batching.h"
#include "server/model_metadata.h"
#include "server/request_validation.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

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

/// "model 'digits_cnn', request 'abc'" (or without the id when empty).
std::string requestPrefix(const protocol::InferRequest &r) {
  std::string p = "model '" + r.model_name + "'";
  if (!r.id.empty())
    p += ", request '" + r.id + "'";
  return p;
}

/// A scheduler failure with the request's prefix. The scheduler names the model itself
/// ("model 'm': deadline exceeded ...", "model 'm' was unloaded"): that name is replaced by
/// the prefix (which adds the request id) instead of repeated.
Status withRequestPrefix(const Status &s, const std::string &model, const std::string &prefix) {
  const std::string named = "model '" + model + "'";
  if (std::string_view(s.message()).starts_with(named))
    return Status(s.code(), prefix + s.message().substr(named.size()));
  return s.withPrefix(prefix);
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

/// The weight cache's floor for a residency the control plane names (the same three).
runtime::Residency weightResidency(protocol::Residency r) {
  switch (r) {
  case protocol::Residency::kUnpinned: return runtime::Residency::kUnpinned;
  case protocol::Residency::kPinnedSystem: return runtime::Residency::kPinnedSystem;
  case protocol::Residency::kPinnedDevice: return runtime::Residency::kPinnedDevice;
  }
  return runtime::Residency::kUnpinned;
}

/// The control plane's name of a weight cache floor.
protocol::Residency controlResidency(runtime::Residency r) {
  switch (r) {
  case runtime::Residency::kUnpinned: return protocol::Residency::kUnpinned;
  case runtime::Residency::kPinnedSystem: return protocol::Residency::kPinnedSystem;
  case runtime::Residency::kPinnedDevice: return protocol::Residency::kPinnedDevice;
  }
  return protocol::Residency::kUnpinned;
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
      device_ordinal_(serving.device_ordinal), residency_config_(std::move(serving.residency)),
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

WorkerService::~WorkerService() { shutdown(); }

void WorkerService::registerLoadedModels() {
  for (const runtime::ModelState &s : repository_.states())
    if (s.model) {
      weight_cache_.add(s.name, s.model->weights, residencyOf(s.name));
      scheduler_.addModel(s.name, batchingOf(*s.model));
    }
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

Status WorkerService::loadModel(const std::string &name, const std::string &dir) {
  std::lock_guard<std::mutex> control(control_mu_);
  if (std::filesystem::path(dir).filename().string() != name)
    return invalidArgument() << "load of model '" << name << "': bundle directory '" << dir
                             << "' has another name (expected its basename to be '" << name << "')";
  const std::optional<runtime::ModelState> before = repository_.state(name);
  Result<std::shared_ptr<const runtime::LoadedModel>> built =
      repository_.buildModel(dir, "dynamic");
  if (!built.isOk()) {
    if (before && before->model) {
      spdlog::warn("model reload failed name={}: the loaded version keeps serving reason={}", name,
                   built.status().message());
      repository_.recordReloadFailure(name, built.status());
    } else {
      repository_.recordFailure(name, dir, built.status());
    }
    // The client gets the recorded, bundle-relative reason (the log has the full paths).
    const std::optional<runtime::ModelState> after = repository_.state(name);
    if (!after)
      return built.status();
    return after->model ? after->last_failure : after->status;
  }
  // Known to the scheduler first, so that no request admitted against the published model
  // finds it missing there; a reload keeps the queue and counters.
  // A reload keeps the floor an operator set (SetModelResidency) over the configured one.
  weight_cache_.add(name, (*built)->weights,
                    weight_cache_.residency(name).value_or(residencyOf(name)));
  scheduler_.addModel(name, batchingOf(**built));
  repository_.publish(*built);
  return Status::ok();
}

Status WorkerService::unloadModel(const std::string &name) {
  std::lock_guard<std::mutex> control(control_mu_);
  if (!repository_.contains(name)) {
    const std::optional<runtime::ModelState> state = repository_.state(name);
    if (state && state->unloaded) // Triton: unloading an unloaded model succeeds
      return Status::ok();
    return notFound() << "unload: unknown model '" << name << "'";
  }
  int64_t waited_for = 0;
  {
    std::unique_lock<std::mutex> lock(gate_mu_);
    std::shared_ptr<Gate> &gate = gates_[name];
    if (!gate)
      gate = std::make_shared<Gate>();
    gate->closing = true; // from now on: NotFound
    waited_for = gate->inflight;
    std::shared_ptr<Gate> held = gate;
    gate_cv_.wait(lock, [&] { return held->inflight == 0; });
  }
  scheduler_.removeModel(name);   // its queue is empty: every admitted request finished
  repository_.markUnloaded(name); // listed UNAVAILABLE, ModelReady false
  weight_cache_.remove(name);
  statistics_.erase(name);
  metrics_.forgetModel(name);
  {
    std::lock_guard<std::mutex> lock(gate_mu_);
    gates_.erase(name); // a later load of this name starts open
  }
  spdlog::info("model unloaded name={} inflight_finished={}", name, waited_for);
  return Status::ok();
}

Status WorkerService::renameModel(const std::string &from, const std::string &to,
                                  const std::string &dir) {
  std::lock_guard<std::mutex> control(control_mu_);
  if (repository_.contains(to))
    return StatusBuilder(StatusCode::kAlreadyExists)
           << "rename '" << from << "' -> '" << to << "': model '" << to << "' already exists";
  RS_ASSIGN_OR_RETURN(std::shared_ptr<const runtime::LoadedModel> renamed,
                      repository_.renamedCopy(from, to, dir));
  // The new name serves before the old one leaves, so a queued request (which moves with
  // its queue) always finds a model to run.
  repository_.publish(renamed);
  RS_RETURN_IF_ERROR(scheduler_.renameModel(from, to));
  repository_.removeModel(from);
  (void)weight_cache_.rename(from, to); // NotFound only for a model never registered
  statistics_.rename(from, to);
  metrics_.forgetModel(from);
  {
    std::lock_guard<std::mutex> lock(gate_mu_);
    auto it = gates_.find(from);
    if (it != gates_.end()) {
      gates_[to] = it->second;
      gates_.erase(it);
    }
  }
  spdlog::info("model renamed from={} to={} dir={} programs={} recompiled=0", from, to, dir,
               renamed->programs.size());
  return Status::ok();
}

Status WorkerService::repositoryLoad(const std::string &name) {
  if (!explicit_control_)
    return failedPrecondition() << "RepositoryModelLoad of '" << name
                                << "': model_control_mode is not explicit (load and unload "
                                   "by request need model_control_mode: explicit)";
  if (name.empty() || name.find('/') != std::string::npos || name[0] == '.')
    return invalidArgument() << "RepositoryModelLoad: bad model name '" << name << "'";
  if (!models_include_.empty() &&
      std::find(models_include_.begin(), models_include_.end(), name) == models_include_.end())
    return notFound() << "RepositoryModelLoad: model '" << name << "' is not in models_include";
  for (const std::string &root : model_dirs_) {
    const std::filesystem::path dir = std::filesystem::path(root) / name;
    std::error_code ec;
    if (std::filesystem::is_directory(dir, ec))
      return loadModel(name, dir.string());
  }
  return notFound() << "RepositoryModelLoad: no bundle directory '" << name
                    << "' in the model repository";
}

Result<std::vector<protocol::ModelStatistics>>
WorkerService::modelStatistics(const std::string &name) const {
  std::vector<protocol::ModelStatistics> out;
  if (!name.empty()) {
    auto state = repository_.state(name);
    if (!state || !state->model)
      return notFound() << "ModelStatistics: model '" << name << "' is not loaded";
    out.push_back(statistics_.get(name));
    return out;
  }
  for (const runtime::ModelState &s : repository_.states())
    if (s.model)
      out.push_back(statistics_.get(s.name));
  return out;
}

Status WorkerService::setModelPolicy(const std::string &name, std::optional<double> weight) {
  auto state = repository_.state(name);
  if (!state || !state->model)
    return notFound() << "SetModelPolicy: unknown model '" << name << "'";
  if (!weight)
    return Status::ok();
  if (!std::isfinite(*weight) || *weight <= 0)
    return failedPrecondition() << "SetModelPolicy of '" << name << "': weight " << *weight
                                << " must be a finite number > 0";
  RS_RETURN_IF_ERROR(scheduler_.setWeight(name, *weight));
  spdlog::info("model policy set name={} weight={}", name, *weight);
  return Status::ok();
}

Result<protocol::Residency> WorkerService::setModelResidency(const std::string &name,
                                                             protocol::Residency wanted) {
  const runtime::Residency target = weightResidency(wanted);
  if (!explicit_control_)
    return failedPrecondition() << "SetModelResidency of '" << name
                                << "': this worker manages residency itself (model_control_mode "
                                   "is not explicit)";
  auto state = repository_.state(name);
  if (!state || !state->model)
    return notFound() << "SetModelResidency: unknown model '" << name << "'";
  RS_RETURN_IF_ERROR(weight_cache_.setResidency(name, target));
  spdlog::info("model residency set name={} residency={}", name, runtime::residencyName(target));
  return wanted;
}

Status WorkerService::repositoryUnload(const std::string &name) {
  if (!explicit_control_)
    return failedPrecondition() << "RepositoryModelUnload of '" << name
                                << "': model_control_mode is not explicit (load and unload "
                                   "by request need model_control_mode: explicit)";
  return unloadModel(name);
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
  RS_ASSIGN_OR_RETURN(auto model, readyModel(repository_.state(model_name), model_name));
  return modelMetadataOf(*model);
}

Result<protocol::ModelConfiguration>
WorkerService::modelConfig(const std::string &model_name) const {
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
  auto state = repository_.state(model_name);
  if (!state)
    return notFound() << "unknown model '" << model_name << "'";
  if (!state->model)
    return protocol::ModelReadiness{false, state->status.message()};
  return protocol::ModelReadiness{true, ""};
}

void WorkerService::infer(protocol::InferRequest request, protocol::InferCallback user_done) {
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
  if (Status v = protocol::checkModelVersion(request.model_name, request.model_version);
      !v.isOk()) {
    done(withRequestPrefix(v, request.model_name, requestPrefix(request)));
    return;
  }
  std::shared_ptr<const runtime::LoadedModel> model = std::move(ready).value();
  Result<ValidatedInputs> valid = validateRequest(model->manifest, request);
  if (!valid.isOk()) {
    done(valid.status().withPrefix(requestPrefix(request)));
    return;
  }
  std::shared_ptr<Gate> gate = enter(request.model_name);
  if (!gate) {
    done(notFound() << "model '" << request.model_name
                    << "' was unloaded: new requests are refused while it unloads");
    return;
  }
  auto response = std::make_shared<protocol::InferResponse>();
  response->model_name = request.model_name;
  response->model_version = request.model_version;
  response->id = request.id;
  std::vector<size_t> selected = valid->outputs;
  std::string prefix = requestPrefix(request);
  CancellationPtr cancel = request.cancel;
  scheduler_.submit(
      request.model_name, std::move(valid->inputs), request.deadline,
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

std::vector<protocol::ModelIndexEntry> WorkerService::listModels() const {
  std::vector<protocol::ModelIndexEntry> out;
  for (const runtime::ModelState &s : repository_.states())
    out.push_back(
        {s.name, s.model != nullptr, s.model ? s.last_failure.message() : s.status.message()});
  return out;
}

Result<protocol::ControlStatus> WorkerService::controlStatus() const {
  protocol::ControlStatus out;
  switch (discipline_) {
  case scheduler::Discipline::kFair: out.discipline = "fair"; break;
  case scheduler::Discipline::kFifo: out.discipline = "fifo"; break;
  case scheduler::Discipline::kEdf: out.discipline = "edf"; break;
  }
  out.residency_mode = explicit_control_ ? "externally_managed" : "self_managed";
  out.weight_cache_max_bytes = static_cast<uint64_t>(weight_cache_.stats().max_bytes);
  for (const runtime::ModelState &s : repository_.states()) {
    if (!s.model)
      continue;
    protocol::ModelControlInfo m;
    m.name = s.name;
    m.residency = controlResidency(weight_cache_.residency(s.name).value_or(residencyOf(s.name)));
    m.resident = weight_cache_.resident(s.name);
    m.host_resident = true; // the weights' mapping lives as long as the model
    for (const Tensor &w : s.model->weights)
      m.weight_nbytes += w.byteSize();
    if (!s.model->batch_sizes.empty())
      m.max_batch_size = s.model->batch_sizes.back();
    if (std::optional<scheduler::ModelSchedStats> st = scheduler_.stats(s.name)) {
      m.weight = st->weight;
      m.queue_depth = st->queue_depth;
      m.total_compute_seconds = st->total_compute_seconds;
      m.requests_served = static_cast<uint64_t>(st->requests_served);
      m.dispatch_count = static_cast<uint64_t>(st->dispatch_count);
      if (st->max_batch_size > 0 && st->max_batch_size < m.max_batch_size)
        m.max_batch_size = st->max_batch_size;
    }
    out.models.push_back(std::move(m));
  }
  return out;
}

} // namespace rs::server
