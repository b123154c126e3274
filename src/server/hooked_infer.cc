//===- server/hooked_infer.cc - The request path of a model with hooks -------===//
//
// A model whose bundle has model.py (docs/hooks.md) serves a request in up to three steps,
// each on the thread that finished the one before, so that no front-end or dispatch
// thread waits on Python:
//   1. the wire tensors are checked against the wire-facing inputs (client_inputs, or the
//      executable's), BYTES allowed where declared; preprocess (when registered) runs on a
//      hook process and its result is checked against the executable inputs;
//   2. the scheduler runs the program as for any model (a meta model's call as a committed
//      request, server/meta_infer.cc);
//   3. postprocess (when registered) runs on every executable output; its result (or the
//      executable's outputs) is checked against the wire-facing outputs, and the requested
//      ones are answered.
// A request that does not fit the wire-facing inputs, or that preprocess refuses by
// raising, is InvalidArgument; a hook result that does not fit what follows it is
// Internal, naming the tensor and the expected dtype and shape; the hook processes' own
// errors are hooks/hook_process.h's.
//
//===----------------------------------------------------------------------===//
#include "server/worker_service.h"

#include "server/request_validation.h"

namespace rs::server {

void WorkerService::inferWithHooks(std::shared_ptr<const runtime::LoadedModel> model,
                                   std::shared_ptr<const hooks::HookPool> pool,
                                   protocol::InferRequest request, std::string prefix,
                                   protocol::InferCallback done, Sender sender) {
  const bundle::Manifest &m = model->manifest;
  Result<std::vector<protocol::NamedTensor>> wire =
      checkTensors(m.wireInputs(), request.inputs, "input", StatusCode::kInvalidArgument);
  if (!wire.isOk()) {
    done(wire.status().withPrefix(prefix));
    return;
  }
  Result<std::vector<size_t>> selected = selectOutputs(m.wireOutputs(), request.requested_outputs);
  if (!selected.isOk()) {
    done(selected.status().withPrefix(prefix));
    return;
  }
  std::shared_ptr<Gate> gate = enter(request.model_name);
  if (!gate) {
    done(closingError(request.model_name));
    return;
  }
  // Every answer from here on lets go of the gate first.
  auto finish = [this, gate, done](Result<protocol::InferResponse> r) {
    leave(gate);
    done(std::move(r));
  };
  auto response = std::make_shared<protocol::InferResponse>();
  response->model_name = request.model_name;
  response->model_version = request.model_version;
  response->id = request.id;
  const std::optional<protocol::Clock::time_point> deadline = request.deadline;

  // Step 3: the executable's outputs, through postprocess, to the answer.
  auto answer = [model, pool, response, selected = *selected, prefix, deadline,
                 finish](std::vector<protocol::NamedTensor> outputs) {
    auto respond = [model, response, selected, prefix,
                    finish](Result<std::vector<protocol::NamedTensor>> tensors, bool hooked) {
      if (!tensors.isOk()) {
        finish(tensors.status().withPrefix(prefix));
        return;
      }
      Result<std::vector<protocol::NamedTensor>> checked =
          checkTensors(model->manifest.wireOutputs(), *tensors,
                       hooked ? "postprocess output" : "output", StatusCode::kInternal);
      if (!checked.isOk()) {
        finish(checked.status().withPrefix(prefix));
        return;
      }
      for (size_t o : selected)
        response->outputs.push_back((*checked)[o]);
      finish(std::move(*response));
    };
    if (!pool->has(hooks::HookStage::kPostprocess)) {
      respond(std::move(outputs), false);
      return;
    }
    pool->run(
        hooks::HookStage::kPostprocess, std::move(outputs), deadline,
        [respond](Result<std::vector<protocol::NamedTensor>> r) { respond(std::move(r), true); });
  };

  // Step 2: the program on the (preprocessed) inputs.
  auto execute = [this, model, response, prefix, deadline, cancel = request.cancel, answer, finish,
                  sender](std::vector<protocol::NamedTensor> inputs, bool hooked) {
    protocol::InferRequest program_request;
    program_request.inputs = std::move(inputs);
    Result<ValidatedInputs> valid = validateRequest(model->manifest, program_request);
    if (!valid.isOk()) {
      finish(hooked ? Status(StatusCode::kInternal,
                             prefix + ": preprocess output does not fit the program: " +
                                 valid.status().message())
                    : valid.status().withPrefix(prefix));
      return;
    }
    schedule(
        sender, response->model_name, std::move(valid->inputs), deadline,
        [this, model, response, prefix, answer, finish](Result<std::vector<Tensor>> outputs) {
          if (!outputs.isOk()) {
            finish(withRequestPrefix(outputs.status(), response->model_name, prefix));
            return;
          }
          std::vector<protocol::NamedTensor> named;
          for (size_t o = 0; o < outputs->size(); ++o)
            named.push_back({model->manifest.executable_outputs[o].name, (*outputs)[o]});
          answer(std::move(named));
        },
        cancel);
  };

  // Step 1: preprocess.
  if (!pool->has(hooks::HookStage::kPreprocess)) {
    execute(std::move(*wire), false);
    return;
  }
  pool->run(hooks::HookStage::kPreprocess, std::move(*wire), deadline,
            [execute, prefix, finish](Result<std::vector<protocol::NamedTensor>> r) {
              if (!r.isOk()) {
                finish(r.status().withPrefix(prefix));
                return;
              }
              execute(std::move(*r), true);
            });
}

} // namespace rs::server
