//===- server/model_batching.cc - A loaded model as the scheduler sees it --===//
#include "server/model_batching.h"

namespace rs::server {

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

} // namespace rs::server
