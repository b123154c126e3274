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
  return b;
}

/// "model 'digits_cnn', request 'abc'" (or without the id when empty).
std::string requestPrefix(const runtime::InferRequest &r) {
  std::string p = "model '" + r.model_name + "'";
  if (!r.id.empty())
    p += ", request '" + r.id + "'";
  return p;
}

} // namespace

WorkerService::WorkerService(runtime::ModelRepository &repository,
                             scheduler::SchedulerOptions options, std::string worker_name)
    : repository_(repository),
      scheduler_(options,
                 [this](const std::string &model, int64_t batch_size,
                        std::vector<Tensor> inputs) -> Result<std::vector<Tensor>> {
                   auto state = repository_.state(model);
                   if (!state || !state->model)
                     return notFound() << "model '" << model << "' was unloaded";
                   return state->model->run(batch_size, std::move(inputs));
                 }),
      metrics_(std::move(worker_name)) {
  scheduler_.start();
}

WorkerService::~WorkerService() { shutdown(); }

void WorkerService::registerLoadedModels() {
  for (const runtime::ModelState &s : repository_.states())
    if (s.model)
      scheduler_.addModel(s.name, batchingOf(*s.model));
}

void WorkerService::shutdown() { scheduler_.stop(); }

std::string WorkerService::renderMetrics() { return metrics_.render(repository_, scheduler_); }

bool WorkerService::serverReady() const {
  auto states = repository_.states();
  if (states.empty())
    return false;
  for (const auto &s : states)
    if (!s.model)
      return false;
  return true;
}

runtime::ServerMetadata WorkerService::serverMetadata() const {
  return {"ReactantServer", "0.1.0", {}};
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
  metrics_.requestStarted();
  const auto arrived = runtime::Clock::now();
  auto done = [this, arrived, model = request.model_name,
               user_done = std::move(user_done)](Result<runtime::InferResponse> r) {
    const double seconds = std::chrono::duration<double>(runtime::Clock::now() - arrived).count();
    metrics_.requestFinished(model, r.isOk() ? StatusCode::kOk : r.status().code(), seconds);
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

} // namespace rs::server
