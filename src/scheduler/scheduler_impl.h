//===- scheduler/scheduler_impl.h - The scheduler's private types ----------===//
//
// Shared by the scheduler's files (scheduler.cc: models and the dispatch loop; policy.cc:
// the disciplines and the coalescing wait; dispatch.cc: forming, running and answering a
// batch). Not part of the layer's API.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "scheduler/scheduler.h"

#include <unsupported/Eigen/CXX11/ThreadPool>

namespace rs::scheduler {

/// Collects the outputs of a request's pieces and completes the request once.
struct Scheduler::SplitRequest {
  std::vector<Tensor> inputs;
  std::vector<int64_t> output_batch_axes;
  std::vector<std::vector<Tensor>> piece_outputs;
  std::vector<RowRange> pieces;
  size_t remaining = 0;
  bool failed = false;
  std::mutex mu;
  DoneFn done;
  CancellationPtr cancel; // null: cannot be cancelled
};

/// Delivers answers on a few threads (SchedulerOptions::answer_threads): an Eigen thread
/// pool plus a count of tasks not yet finished, so that stop() can wait for every answer.
class Scheduler::AnswerPool {
public:
  explicit AnswerPool(int threads) : pool_(threads) {}

  void post(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++pending_;
    }
    pool_.Schedule([this, task = std::move(task)] {
      task();
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0)
        idle_.notify_all();
    });
  }

  /// Returns when every posted task has run.
  void drain() {
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [&] { return pending_ == 0; });
  }

  int threads() const { return pool_.NumThreads(); }

private:
  Eigen::ThreadPool pool_;
  std::mutex mu_;
  std::condition_variable idle_;
  int64_t pending_ = 0; // GUARDED_BY(mu_)
};

} // namespace rs::scheduler
