//===- server/worker_control.cc - The worker's model control --------------===//
//
// WorkerService's ModelControl side: loading, reloading, unloading and renaming a model
// (with the per-model gate that lets admitted requests finish), the KServe repository
// extension, the model index, statistics, and the scheduling policy and weight residency
// an operator sets.
//
//===----------------------------------------------------------------------===//
#include "server/worker_service.h"

#include "server/model_batching.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace rs::server {

namespace {

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

Status WorkerService::loadModel(const std::string &name, const std::string &dir) {
  std::lock_guard<std::mutex> control(control_mu_);
  if (std::filesystem::path(dir).filename().string() != name)
    return invalidArgument() << "load of model '" << name << "': bundle directory '" << dir
                             << "' has another name (expected its basename to be '" << name << "')";
  const std::optional<runtime::ModelState> before = repository_.state(name);
  Result<std::shared_ptr<const runtime::LoadedModel>> built =
      repository_.buildModel(dir, "dynamic");
  // A meta model serves only once its callees fit (and its regulated warm-up passes).
  if (built.isOk() && (*built)->manifest.kind == bundle::BundleKind::kMeta)
    if (Status checked = checkMeta(**built); !checked.isOk()) {
      repository_.reportLoadFailure(name, dir, "dynamic", checked);
      built = checked;
    }
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
  refreshInternal();
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
  refreshInternal();
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
  refreshInternal();
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
    RS_RETURN_IF_ERROR(servedDirectly(name));
    auto state = repository_.state(name);
    if (!state || !state->model)
      return notFound() << "ModelStatistics: model '" << name << "' is not loaded";
    out.push_back(statistics_.get(name));
    return out;
  }
  for (const runtime::ModelState &s : repository_.states())
    if (s.model && !internalTo(s.name))
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
  if (std::optional<std::string> meta = internalTo(name))
    return notFound() << "SetModelResidency of '" << name << "': the model is internal to meta "
                      << "model '" << *meta << "'; set the meta model's residency, which its "
                      << "callees follow";
  RS_RETURN_IF_ERROR(weight_cache_.setResidency(name, target));
  spdlog::info("model residency set name={} residency={}", name, runtime::residencyName(target));
  if (state->model->manifest.kind == bundle::BundleKind::kMeta)
    applyGroupResidency();
  return wanted;
}

Status WorkerService::repositoryUnload(const std::string &name) {
  if (!explicit_control_)
    return failedPrecondition() << "RepositoryModelUnload of '" << name
                                << "': model_control_mode is not explicit (load and unload "
                                   "by request need model_control_mode: explicit)";
  // A callee of a loaded meta model is the meta's: unloading it would leave the meta listed
  // ready with every call failing.
  if (std::optional<std::string> meta = internalTo(name))
    return failedPrecondition() << "RepositoryModelUnload of '" << name << "': the model is "
                                << "internal to meta model '" << *meta
                                << "'; unload the meta model first";
  return unloadModel(name);
}

std::vector<protocol::ModelIndexEntry> WorkerService::listModels() const {
  std::vector<protocol::ModelIndexEntry> out;
  for (const runtime::ModelState &s : repository_.states())
    if (!internalTo(s.name))
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
    if (!s.model || internalTo(s.name))
      continue;
    protocol::ModelControlInfo m;
    m.name = s.name;
    m.residency = controlResidency(weight_cache_.residency(s.name).value_or(residencyOf(s.name)));
    m.resident = weight_cache_.resident(s.name);
    m.host_resident = true; // the weights' mapping lives as long as the model
    for (const Tensor &w : s.model->weights)
      m.weight_nbytes += w.byteSize();
    // A meta model is reported as a group: its footprint is its callees' (its own is none).
    for (const std::string &callee : s.model->manifest.meta_calls)
      m.weight_nbytes += weight_cache_.weightBytes(callee);
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
