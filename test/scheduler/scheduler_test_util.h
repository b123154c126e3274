//===- test/scheduler/scheduler_test_util.h - Shared scheduler test helpers ===//
#pragma once

#include "scheduler/scheduler.h"

#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace rs::scheduler::testing {

/// Batching of a model whose one input and one output have batch axis 0, compiled at `sizes`.
inline ModelBatching batching(std::vector<int64_t> sizes) {
  return {std::move(sizes), {0}, {0}, {}};
}

/// A fake device: doubles every element of input 0 (i32), records the batch size and input
/// 0's shape of every run, can be held closed until `gate` is set.
struct FakeDevice {
  std::mutex mu;
  std::vector<int64_t> batch_sizes;
  std::vector<Shape> shapes;
  std::promise<void> gate;
  std::shared_future<void> opened = gate.get_future().share();
  bool hold = false;

  RunFn runFn() {
    return [this](const std::string &, int64_t batch_size,
                  std::vector<Tensor> inputs) -> Result<std::vector<Tensor>> {
      if (hold)
        opened.wait();
      {
        std::lock_guard<std::mutex> lock(mu);
        batch_sizes.push_back(batch_size);
        shapes.push_back(inputs[0].shape());
      }
      if (batch_size > 0 && inputs[0].shape()[0] != batch_size)
        return internalError() << "input rows " << inputs[0].shape()[0] << " != batch size "
                               << batch_size;
      Tensor out = Tensor::copyOf(DType::kI32, inputs[0].shape(), inputs[0].bytes());
      for (int64_t i = 0; i < out.numElements(); ++i)
        out.mutableDataAs<int32_t>()[i] *= 2;
      return std::vector<Tensor>{out};
    };
  }
};

/// One row holding `id` (i32 [1, 1]).
inline Tensor idTensor(int32_t id) {
  Tensor t = Tensor::zeros(DType::kI32, {1, 1});
  t.mutableDataAs<int32_t>()[0] = id;
  return t;
}

/// Submits one request of input `input` and returns a future of its outputs.
inline std::future<Result<std::vector<Tensor>>>
submitAsync(Scheduler &s, const std::string &model, Tensor input,
            std::optional<Clock::time_point> deadline = {}) {
  auto p = std::make_shared<std::promise<Result<std::vector<Tensor>>>>();
  auto f = p->get_future();
  s.submit(model, {std::move(input)}, deadline,
           [p](Result<std::vector<Tensor>> r) { p->set_value(std::move(r)); });
  return f;
}

} // namespace rs::scheduler::testing
