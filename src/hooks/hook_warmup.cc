//===- hooks/hook_warmup.cc - The determinism warm-up of a model's hooks -----===//
#include "hooks/hook_warmup.h"

#include <spdlog/spdlog.h>

namespace rs::hooks {
namespace {

/// Zeros (BYTES: "reactant") of `specs` at `batch` rows, variable axes of size 1.
std::vector<protocol::NamedTensor> sampleOf(const std::vector<bundle::TensorSpec> &specs,
                                            int64_t batch) {
  std::vector<protocol::NamedTensor> out;
  for (const bundle::TensorSpec &spec : specs) {
    Shape shape = spec.wireShape();
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] < 0)
        shape[d] = spec.batch_axis && *spec.batch_axis == static_cast<int>(d) ? batch : 1;
    if (spec.bytes) {
      protocol::BytesTensor bytes(shape);
      for (int64_t i = 0; i < elementCount(shape); ++i)
        bytes.append("reactant");
      out.push_back(protocol::NamedTensor::ofBytes(spec.name, std::move(bytes)));
    } else {
      out.push_back({spec.name, Tensor::zeros(spec.dtype, shape)});
    }
  }
  return out;
}

/// The first tensor (by name) whose datatype, shape or bytes differ; "" when none do.
std::string firstDifference(const std::vector<protocol::NamedTensor> &a,
                            const std::vector<protocol::NamedTensor> &b) {
  if (a.size() != b.size())
    return "the number of tensors";
  for (size_t i = 0; i < a.size(); ++i) {
    const protocol::NamedTensor &x = a[i], &y = b[i];
    if (x.name != y.name)
      return "the tensor names ('" + x.name + "', '" + y.name + "')";
    if (x.datatype() != y.datatype() || x.shape() != y.shape())
      return "tensor '" + x.name + "' (datatype or shape)";
    const bool same = x.isBytes() ? *x.bytes == *y.bytes
                                  : std::equal(x.tensor.bytes().begin(), x.tensor.bytes().end(),
                                               y.tensor.bytes().begin(), y.tensor.bytes().end());
    if (!same)
      return "tensor '" + x.name + "'";
  }
  return "";
}

Status compareTwoRuns(const HookPool &pool, HookStage stage,
                      const std::vector<protocol::NamedTensor> &input, const std::string &dir,
                      const HookPool::SubCall &sub = nullptr) {
  const std::string_view name = stageName(stage);
  Result<std::vector<protocol::NamedTensor>> first = pool.runNow(stage, input, sub);
  if (!first.isOk()) {
    if (first.status().code() == StatusCode::kInvalidArgument ||
        first.status().code() == StatusCode::kInternal) {
      spdlog::warn("hook warm-up not compared dir={} stage={} reason={}", dir, name,
                   first.status().message());
      return Status::ok();
    }
    return first.status().withPrefix(dir + "/model.py: warm-up");
  }
  RS_ASSIGN_OR_RETURN(std::vector<protocol::NamedTensor> second, pool.runNow(stage, input, sub));
  const std::string differs = firstDifference(*first, second);
  if (!differs.empty())
    return failedPrecondition() << dir << "/model.py: " << name
                                << " gave different results for the same input on two runs ("
                                << differs << " differs); runtime.profile regulated needs "
                                << "hooks whose output is a function of their input";
  spdlog::info("hook warm-up identical dir={} stage={} tensors={}", dir, name, second.size());
  return Status::ok();
}

} // namespace

Status checkHooksDeterministic(const HookPool &pool, const bundle::Manifest &manifest,
                               const std::string &dir) {
  const int64_t batch =
      manifest.compiled_batch_sizes.empty() ? 1 : manifest.compiled_batch_sizes.front();
  if (pool.has(HookStage::kPreprocess))
    RS_RETURN_IF_ERROR(
        compareTwoRuns(pool, HookStage::kPreprocess, sampleOf(manifest.wireInputs(), 1), dir));
  if (pool.has(HookStage::kPostprocess))
    RS_RETURN_IF_ERROR(compareTwoRuns(pool, HookStage::kPostprocess,
                                      sampleOf(manifest.executable_outputs, batch), dir));
  return Status::ok();
}

Status checkRunDeterministic(const HookPool &pool, const bundle::Manifest &manifest,
                             const std::string &dir, const HookPool::SubCall &call) {
  if (!pool.has(HookStage::kRun))
    return Status::ok();
  return compareTwoRuns(pool, HookStage::kRun, sampleOf(manifest.client_inputs, 1), dir, call);
}

} // namespace rs::hooks
