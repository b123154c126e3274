//===- server/meta_infer.cc - The request path of a meta model ---------------===//
//
// A meta model (`kind: meta`, docs/hooks.md "Meta models") has no program: its model.py's
// run(inputs, call) gets the request's tensors, checked against client_inputs, and calls
// the models of `meta.calls` through call(name, inputs). Each call is a request of that
// model (its hooks, its queue, its batching, its counters) with the meta request's
// deadline, committed: queued ahead of the callee's other traffic (scheduler/scheduler.h),
// since a run waits for it; the pool thread that runs the meta waits for the answer. A
// callee not in meta.calls, or itself a meta model, is refused. run's result is checked
// against client_outputs, and the requested outputs are answered.
//
// A meta model with calls runs under its MetaGate (server/meta_gate.h): at most
// hooks.meta_concurrency runs at once, a request waiting for a slot at most until its
// deadline. A compute-only meta (no calls) holds nothing of other models and bypasses it.
//
// Also here: which models are internal to a meta model, and the check a loaded meta model
// passes before it serves (its callees, its regulated warm-up).
//
//===----------------------------------------------------------------------===//
#include "server/worker_service.h"

#include "hooks/hook_warmup.h"
#include "server/request_validation.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <future>

namespace rs::server {

Result<std::vector<protocol::NamedTensor>>
WorkerService::metaCall(const runtime::LoadedModel &meta, const std::string &callee,
                        std::vector<protocol::NamedTensor> inputs,
                        std::optional<protocol::Clock::time_point> deadline) {
  const std::vector<std::string> &calls = meta.manifest.meta_calls;
  if (std::find(calls.begin(), calls.end(), callee) == calls.end())
    return failedPrecondition() << "call of model '" << callee << "': not in meta.calls of '"
                                << meta.name << "'";
  if (std::optional<runtime::ModelState> state = repository_.state(callee))
    if (state->model && state->model->manifest.kind == bundle::BundleKind::kMeta)
      return failedPrecondition() << "call of model '" << callee
                                  << "': a meta model may not call a meta model";
  protocol::InferRequest request;
  request.model_name = callee;
  request.inputs = std::move(inputs);
  request.deadline = deadline;
  // The answer may come after the run's limit: the promise outlives this wait.
  auto answer = std::make_shared<std::promise<Result<protocol::InferResponse>>>();
  std::future<Result<protocol::InferResponse>> answered = answer->get_future();
  route(
      std::move(request),
      [answer](Result<protocol::InferResponse> r) { answer->set_value(std::move(r)); },
      Sender::kMetaCall);
  if (deadline && answered.wait_until(*deadline) != std::future_status::ready)
    return deadlineExceeded() << "call of model '" << callee << "': no answer before the meta "
                              << "model's run had to finish (hooks.timeout_ms or the request's "
                                 "deadline)";
  Result<protocol::InferResponse> r = answered.get();
  if (!r.isOk())
    return r.status();
  return std::move(r->outputs);
}

void WorkerService::inferMeta(std::shared_ptr<const runtime::LoadedModel> model,
                              std::shared_ptr<const hooks::HookPool> pool,
                              protocol::InferRequest request, std::string prefix,
                              protocol::InferCallback done) {
  const bundle::Manifest &m = model->manifest;
  Result<std::vector<protocol::NamedTensor>> wire =
      checkTensors(m.client_inputs, request.inputs, "input", StatusCode::kInvalidArgument);
  if (!wire.isOk()) {
    done(wire.status().withPrefix(prefix));
    return;
  }
  Result<std::vector<size_t>> selected = selectOutputs(m.client_outputs, request.requested_outputs);
  if (!selected.isOk()) {
    done(selected.status().withPrefix(prefix));
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
  const std::optional<protocol::Clock::time_point> deadline = request.deadline;
  // A compute-only meta bypasses the MetaGate (null).
  MetaGate *slots = m.meta_calls.empty() ? nullptr : metaGate(model->name);
  const protocol::Clock::time_point arrived = protocol::Clock::now();
  // What the run's calls took and how they ended; they come one after another from its thread.
  struct Calls {
    double seconds = 0;      // the compute time the meta's statistics record
    bool past_limit = false; // a call ended with DEADLINE_EXCEEDED (the run's limit)
  };
  auto calls = std::make_shared<Calls>();
  auto start = [this, gate, slots, model, pool, response, selected = *selected, prefix, done,
                deadline, arrived, calls, wire = std::move(*wire)](Status admitted) mutable {
    if (!admitted.isOk()) {
      leave(gate);
      done(admitted.withPrefix(prefix));
      return;
    }
    const protocol::Clock::time_point run_start = protocol::Clock::now();
    const double gate_seconds = std::chrono::duration<double>(run_start - arrived).count();
    // The run's calls end where the run must: hooks.timeout_ms from its start, or the
    // request's deadline when that comes first.
    protocol::Clock::time_point run_limit = run_start + pool->timeout();
    if (deadline && *deadline < run_limit)
      run_limit = *deadline;
    pool->run(
        hooks::HookStage::kRun, std::move(wire), deadline,
        [this, gate, slots, model, response, selected, prefix, done, calls, gate_seconds,
         run_limit](Result<std::vector<protocol::NamedTensor>> r) {
          if (slots)
            slots->release();
          Result<std::vector<protocol::NamedTensor>> checked =
              r.isOk() ? checkTensors(model->manifest.client_outputs, *r, "run output",
                                      StatusCode::kInternal)
                       : r;
          // A run that failed past its limit, or after a call of it met the limit (let
          // through as SubCallError), is the deadline's, as a run the pool stops is. The call
          // can end a little before the run's clock reaches the limit, so both are checked.
          if (!r.isOk() && r.status().code() != StatusCode::kDeadlineExceeded &&
              (calls->past_limit || protocol::Clock::now() >= run_limit))
            checked = Status(StatusCode::kDeadlineExceeded,
                             "run did not finish within hooks.timeout_ms or the request's "
                             "deadline: " +
                                 r.status().message());
          leave(gate);
          if (!checked.isOk()) {
            done(checked.status().withPrefix(prefix));
            return;
          }
          // The meta's execution, as the reference records it: batch size 0, one row, the
          // compute time of its calls.
          scheduler::DispatchStats stats;
          stats.model = model->name;
          stats.rows = 1;
          stats.compute_seconds = calls->seconds;
          stats.queue_wait_seconds = {gate_seconds};
          statistics_.observeDispatch(stats);
          for (size_t o : selected)
            response->outputs.push_back((*checked)[o]);
          done(std::move(*response));
        },
        [this, model, run_limit, calls](const std::string &callee,
                                        std::vector<protocol::NamedTensor> inputs) {
          const auto called = protocol::Clock::now();
          Result<std::vector<protocol::NamedTensor>> r =
              metaCall(*model, callee, std::move(inputs), run_limit);
          calls->seconds += std::chrono::duration<double>(protocol::Clock::now() - called).count();
          if (!r.isOk() && r.status().code() == StatusCode::kDeadlineExceeded)
            calls->past_limit = true;
          return r;
        });
  };
  if (slots)
    slots->acquire(deadline, std::move(start));
  else
    start(Status::ok());
}

Status WorkerService::checkMeta(const runtime::LoadedModel &meta) {
  for (const std::string &callee : meta.manifest.meta_calls) {
    const std::optional<runtime::ModelState> state = repository_.state(callee);
    if (!state || state->unloaded)
      return failedPrecondition() << "meta model '" << meta.name << "': meta.calls names model '"
                                  << callee << "', which is not in the repository";
    if (!state->model)
      return failedPrecondition() << "meta model '" << meta.name << "': meta.calls names model '"
                                  << callee << "', which did not load: " << state->status.message();
    if (state->model->manifest.kind == bundle::BundleKind::kMeta)
      return failedPrecondition() << "meta model '" << meta.name << "': meta.calls names model '"
                                  << callee
                                  << "', which is itself a meta model (a meta model may call "
                                     "only models with programs)";
  }
  if (!meta_warmup_)
    return Status::ok();
  auto pool = std::dynamic_pointer_cast<const hooks::HookPool>(meta.extension);
  if (!pool)
    return Status::ok();
  return hooks::checkRunDeterministic(
      *pool, meta.manifest, meta.dir,
      [this, &meta](const std::string &callee, std::vector<protocol::NamedTensor> inputs) {
        return metaCall(meta, callee, std::move(inputs), std::nullopt);
      });
}

void WorkerService::refreshInternal() {
  std::map<std::string, std::string> internal;
  for (const runtime::ModelState &s : repository_.states())
    if (s.model && s.model->manifest.kind == bundle::BundleKind::kMeta)
      for (const std::string &callee : s.model->manifest.meta_calls)
        internal.emplace(callee, s.name); // the first meta by name names it
  {
    std::lock_guard<std::mutex> lock(meta_mu_);
    internal_.swap(internal);
  }
  applyGroupResidency();
}

void WorkerService::applyGroupResidency() {
  // A callee's residency is the strongest of its own configured floor and the residency of
  // every loaded meta that calls it (reference-system.md §10: a meta's models are placed as
  // a group), so unpinning one meta keeps a callee another meta still pins.
  std::map<std::string, runtime::Residency> wanted;
  for (const runtime::ModelState &s : repository_.states())
    if (s.model && s.model->manifest.kind == bundle::BundleKind::kMeta) {
      const runtime::Residency meta = weight_cache_.residency(s.name).value_or(residencyOf(s.name));
      for (const std::string &callee : s.model->manifest.meta_calls) {
        auto [it, added] = wanted.emplace(callee, residencyOf(callee));
        it->second = std::max(it->second, meta);
      }
    }
  for (const auto &[callee, residency] : wanted) {
    std::optional<runtime::Residency> now = weight_cache_.residency(callee);
    if (!now || *now == residency)
      continue;
    if (Status set = weight_cache_.setResidency(callee, residency); !set.isOk())
      spdlog::warn("model residency of '{}' (called by a meta model) not set to {}: {}", callee,
                   runtime::residencyName(residency), set.toString());
  }
}

std::optional<std::string> WorkerService::internalTo(const std::string &name) const {
  std::lock_guard<std::mutex> lock(meta_mu_);
  auto it = internal_.find(name);
  if (it == internal_.end())
    return std::nullopt;
  return it->second;
}

Status WorkerService::servedDirectly(const std::string &name) const {
  if (std::optional<std::string> meta = internalTo(name))
    return notFound() << "model '" << name << "' is internal to meta model '" << *meta
                      << "' and is not served directly";
  return Status::ok();
}

MetaGate *WorkerService::metaGate(const std::string &name) {
  std::lock_guard<std::mutex> lock(meta_mu_);
  std::unique_ptr<MetaGate> &gate = meta_gates_[name];
  if (!gate)
    gate = std::make_unique<MetaGate>(meta_concurrency_);
  return gate.get();
}

} // namespace rs::server
