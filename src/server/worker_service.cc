//===- server/worker_service.cc - One worker: models + scheduler ------------===//
#include "server/worker_service.h"

#include "runtime/request_validation.h"

#include <chrono>

namespace rs::server {
namespace {

/// The scheduler's view of a model: compiled sizes and batch axes.
scheduler::ModelBatching batchingOf(const runtime::LoadedModel &m) {
  scheduler::ModelBatching b;
  b.compiled_batch_sizes = m.batch_sizes;
  for (const auto &s : m.manifest.executable_inputs)
    b.input_batch_axes.push_back(s.batch_axis ? *s.batch_axis : -1);
  for (const auto &s : m.manifest.executable_outputs)
    b.output_batch_axes.push_back(s.batch_axis ? *s.batch_axis : -1);
  // Warmup (fair): zeros at each compiled size; none for variable dims.
  b.warmup_inputs = [specs = m.manifest.executable_inputs](int64_t batch_size) {
    std::vector<Tensor> zeros;
    for (const auto &s : specs) {
      Shape shape = s.shapeForBatch(batch_size == 0 ? 1 : batch_size);
      for (int64_t d : shape)
        if (d < 0)
          return std::vector<Tensor>{};
      zeros.push_back(Tensor::zeros(s.dtype, shape));
    }
    return zeros;
  };
  return b;
}

/// "model 'digits_cnn', request 'abc'" (or without the id when empty).
std::string requestPrefix(const runtime::InferRequest &r) {
  std::string p = "model '" + r.model_name + "'";
  if (!r.id.empty())
    p += ", request '" + r.id + "'";
  return p;
}

/// `options` with every dispatch reported to `metrics`.
scheduler::SchedulerOptions observedBy(scheduler::SchedulerOptions options,
                                       WorkerMetrics &metrics) {
  options.on_dispatch = [&metrics](const scheduler::DispatchStats &s) {
    metrics.observeDispatch(s);
  };
  return options;
}

} // namespace

WorkerService::WorkerService(runtime::ModelRepository &repository,
                             scheduler::SchedulerOptions options, std::string worker_name,
                             ServingOptions serving)
    : repository_(repository), discipline_(options.discipline),
      admission_(serving.max_concurrent_requests), request_log_(serving.log),
      metrics_(std::move(worker_name), serving.info),
      scheduler_(observedBy(std::move(options), metrics_),
                 [this](const std::string &model, int64_t batch_size,
                        std::vector<Tensor> inputs) -> Result<std::vector<Tensor>> {
                   auto state = repository_.state(model);
                   if (!state || !state->model)
                     return notFound() << "model '" << model << "' was unloaded";
                   return state->model->run(batch_size, std::move(inputs));
                 }) {
  scheduler_.start();
}

WorkerService::~WorkerService() { shutdown(); }

void WorkerService::registerLoadedModels() {
  for (const runtime::ModelState &s : repository_.states())
    if (s.model)
      scheduler_.addModel(s.name, batchingOf(*s.model));
}

void WorkerService::shutdown() { scheduler_.stop(); }

std::string WorkerService::renderMetrics() {
  MetricsSnapshot snapshot;
  snapshot.inflight = admission_.inflight();
  snapshot.shed = admission_.shed();
  snapshot.max_concurrent = admission_.maxConcurrent();
  snapshot.shared_memory_regions = shared_memory_.regionCount();
  snapshot.shared_memory_bytes = shared_memory_.registeredBytes();
  snapshot.log_suppressed = request_log_.suppressed();
  return metrics_.render(repository_, scheduler_, snapshot);
}

void WorkerService::beginDrain() { admission_.beginDrain(); }

bool WorkerService::waitIdle(std::chrono::steady_clock::time_point deadline) {
  return admission_.waitIdle(deadline);
}

std::string WorkerService::metricsModel(const std::string &name) const {
  return repository_.state(name) ? name : std::string();
}

void WorkerService::requestFailed(const FailedRequest &request, const Status &status,
                                  bool in_service) {
  request_log_.log(request, status);
  if (!in_service)
    metrics_.requestRejected(metricsModel(std::string(request.model)), status.code());
}

bool WorkerService::serverReady() const {
  if (admission_.draining())
    return false;
  auto states = repository_.states();
  if (states.empty())
    return false;
  for (const auto &s : states)
    if (!s.model)
      return false;
  return true;
}

runtime::ServerMetadata WorkerService::serverMetadata() const {
  return {"ReactantServer", "0.1.0", {"system_shared_memory"}};
}

Result<runtime::ModelMetadata> WorkerService::modelMetadata(const std::string &model_name) const {
  auto state = repository_.state(model_name);
  if (!state)
    return notFound() << "unknown model '" << model_name << "'";
  if (!state->model)
    return unavailable() << "model '" << model_name
                         << "' is not ready: " << state->status.message();
  return state->model->metadata;
}

Result<runtime::ModelReadiness> WorkerService::modelReady(const std::string &model_name) const {
  auto state = repository_.state(model_name);
  if (!state)
    return notFound() << "unknown model '" << model_name << "'";
  if (!state->model)
    return runtime::ModelReadiness{false, state->status.message()};
  return runtime::ModelReadiness{true, ""};
}

void WorkerService::infer(runtime::InferRequest request, runtime::InferCallback user_done) {
  // Every answer passes through here once: count it and time it.
  const auto arrived = runtime::Clock::now();
  const std::string model_label = metricsModel(request.model_name);
  if (Status admitted = admission_.acquire(); !admitted.isOk()) {
    metrics_.requestFinished(model_label, admitted.code(), 0);
    user_done(admitted.withPrefix(requestPrefix(request)));
    return;
  }
  auto done = [this, arrived, model_label,
               user_done = std::move(user_done)](Result<runtime::InferResponse> r) {
    const double seconds = std::chrono::duration<double>(runtime::Clock::now() - arrived).count();
    metrics_.requestFinished(model_label, r.isOk() ? StatusCode::kOk : r.status().code(), seconds);
    // Released before the reply goes out, so a client that sends its next request as soon
    // as it has the answer finds the slot free.
    admission_.release();
    user_done(std::move(r));
  };
  if (request.model_name.empty()) {
    done(invalidArgument() << "model name is empty");
    return;
  }
  auto state = repository_.state(request.model_name);
  if (!state) {
    done(notFound() << "unknown model '" << request.model_name << "'");
    return;
  }
  if (!state->model) {
    done(unavailable() << "model '" << request.model_name
                       << "' is not ready: " << state->status.message());
    return;
  }
  std::shared_ptr<const runtime::LoadedModel> model = state->model;
  Result<runtime::ValidatedInputs> valid = runtime::validateRequest(model->manifest, request);
  if (!valid.isOk()) {
    done(valid.status().withPrefix(requestPrefix(request)));
    return;
  }
  auto response = std::make_shared<runtime::InferResponse>();
  response->model_name = request.model_name;
  response->model_version = request.model_version;
  response->id = request.id;
  std::vector<size_t> selected = valid->outputs;
  std::string prefix = requestPrefix(request);
  scheduler_.submit(
      request.model_name, std::move(valid->inputs), request.deadline,
      [model, response, selected, prefix, done](Result<std::vector<Tensor>> outputs) {
        if (!outputs.isOk()) {
          done(outputs.status().withPrefix(prefix));
          return;
        }
        for (size_t o : selected)
          response->outputs.push_back({model->manifest.executable_outputs[o].name, (*outputs)[o]});
        done(std::move(*response));
      });
}

std::vector<runtime::ModelIndexEntry> WorkerService::listModels() const {
  std::vector<runtime::ModelIndexEntry> out;
  for (const runtime::ModelState &s : repository_.states())
    out.push_back({s.name, s.model != nullptr, s.model ? "" : s.status.message()});
  return out;
}

Result<runtime::ControlStatus> WorkerService::controlStatus() const {
  runtime::ControlStatus out;
  switch (discipline_) {
  case scheduler::Discipline::kFair: out.discipline = "fair"; break;
  case scheduler::Discipline::kFifo: out.discipline = "fifo"; break;
  case scheduler::Discipline::kEdf: out.discipline = "edf"; break;
  }
  for (const runtime::ModelState &s : repository_.states()) {
    if (!s.model)
      continue;
    runtime::ModelControlInfo m;
    m.name = s.name;
    m.resident = true;
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
