//===- test/scheduler/scheduler_test_util.h - Shared scheduler test helpers ===//
#pragma once

#include "scheduler/scheduler.h"

#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rs::scheduler::testing {

/// Batching of a model whose one input and one output have batch axis 0, compiled at `sizes`.
inline ModelBatching batching(std::vector<int64_t> sizes) {
  return {std::move(sizes), {0}, {0}, {}};
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
