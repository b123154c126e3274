//===- server/meta_infer.cc - The request path of a meta model ---------------===//
//
// A meta model (`kind: meta`, docs/hooks.md "Meta models") has no program: its model.py's
// run(inputs, call) gets the request's tensors, checked against client_inputs, and calls
// the models of `meta.calls` through call(name, inputs). Each call is an ordinary request
// of that model (WorkerService::infer: its hooks, its queue, its batching, its counters)
// with the meta request's deadline; the pool thread that runs the meta waits for it. A
// callee not in meta.calls, or itself a meta model, is refused. run's result is checked
// against client_outputs, and the requested outputs are answered.
//
//===----------------------------------------------------------------------===//
#include "server/worker_service.h"

#include "server/request_validation.h"

#include <algorithm>
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
  std::promise<Result<protocol::InferResponse>> answer;
  infer(std::move(request),
        [&answer](Result<protocol::InferResponse> r) { answer.set_value(std::move(r)); });
  Result<protocol::InferResponse> r = answer.get_future().get();
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
  pool->run(
      hooks::HookStage::kRun, std::move(*wire), deadline,
      [this, gate, model, response, selected = *selected, prefix,
       done](Result<std::vector<protocol::NamedTensor>> r) {
        Result<std::vector<protocol::NamedTensor>> checked =
            r.isOk() ? checkTensors(model->manifest.client_outputs, *r, "run output",
                                    StatusCode::kInternal)
                     : r;
        leave(gate);
        if (!checked.isOk()) {
          done(checked.status().withPrefix(prefix));
          return;
        }
        for (size_t o : selected)
          response->outputs.push_back((*checked)[o]);
        done(std::move(*response));
      },
      [this, model, deadline](const std::string &callee,
                              std::vector<protocol::NamedTensor> inputs) {
        return metaCall(*model, callee, std::move(inputs), deadline);
      });
}

} // namespace rs::server
