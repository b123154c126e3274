//===- scheduler/scheduler.h - Per-model FIFO queues and a dispatch loop ----===//
//
// The first scheduler (DESIGN.md "Request path"): one dispatch loop per device runs one
// program at a time. Each model has a FIFO queue; the loop serves the model whose head
// request arrived first (global FIFO across models). With coalescing on, queued requests
// of the same model are packed, in arrival order, into one batch as long as their rows fit
// the largest compiled size; the batch runs at the compiled size the policy picks, rows
// zero-padded, and each request gets its own rows of every output back. A request with
// more rows than the largest compiled size is split into pieces of the largest size (the
// last padded), always the same pieces, each run on its own dispatch and never coalesced;
// the pieces' outputs are concatenated back.
//
// The scheduler knows nothing of models beyond ModelBatching: it calls RunFn to execute a
// batch. Inputs and outputs are in manifest order; shapes are checked by the caller
// (every input of a request has the same row count along its batch axis).
//
// Errors delivered to DoneFn: NotFound (model unknown or removed while queued),
// ResourceExhausted (the model's queue holds max_queue_depth requests),
// DeadlineExceeded (the deadline passed before execution), Unavailable (shut down), and
// whatever RunFn returns. Thread safety: all methods may be called from any thread;
// DoneFn runs on the dispatch thread (or the caller's, for immediate errors).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "scheduler/batching.h"
#include "support/status.h"
#include "support/tensor.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace rs::scheduler {

using Clock = std::chrono::steady_clock;

/// How one model is batched.
struct ModelBatching {
  /// Compiled batch sizes, ascending. Empty: an unbatched program (key 0) that takes any
  /// request as is and is never coalesced.
  std::vector<int64_t> compiled_batch_sizes;
  /// Row-major batch axis of each input (manifest order); -1 if the input has none.
  std::vector<int64_t> input_batch_axes;
  /// Row-major batch axis of each output (manifest order); -1 if the output has none
  /// (such a model is never coalesced or split).
  std::vector<int64_t> output_batch_axes;
};

struct SchedulerOptions {
  /// `scheduler.coalescing`: false serves exactly one request (or piece) per dispatch.
  bool coalescing = true;
  /// `runtime.batch_sizes`.
  BatchSizePolicy batch_sizes = BatchSizePolicy::kAll;
  /// `scheduler.max_queue_depth`: queued requests per model before ResourceExhausted.
  int64_t max_queue_depth = 1024;
};

/// Executes `model` at compiled size `batch_size` (0 for an unbatched program).
using RunFn = std::function<Result<std::vector<Tensor>>(
    const std::string &model, int64_t batch_size, std::vector<Tensor> inputs)>;
/// Receives a request's outputs (manifest order) or its error.
using DoneFn = std::function<void(Result<std::vector<Tensor>>)>;

class Scheduler {
public:
  Scheduler(SchedulerOptions options, RunFn run);
  /// Stops the dispatch loop; queued requests fail with Unavailable.
  ~Scheduler();
  Scheduler(const Scheduler &) = delete;
  Scheduler &operator=(const Scheduler &) = delete;

  /// Adds or replaces a model's batching description.
  void addModel(const std::string &model, ModelBatching batching);
  /// Removes a model; its queued requests fail with NotFound.
  void removeModel(const std::string &model);

  /// Queues a request. `inputs` are in manifest order with equal row counts along their
  /// batch axes. `done` is called exactly once.
  void submit(const std::string &model, std::vector<Tensor> inputs,
              std::optional<Clock::time_point> deadline, DoneFn done);

  /// Starts the dispatch thread (idempotent).
  void start();
  /// Finishes the running dispatch, fails queued requests with Unavailable and joins the
  /// thread (idempotent).
  void stop();

  /// Requests queued for `model` (0 for an unknown model).
  int64_t queueDepth(const std::string &model) const;

private:
  struct Join;
  struct Item {
    std::shared_ptr<Join> join;
    size_t piece = 0;
    RowRange rows;
    bool coalescable = true;
    std::optional<Clock::time_point> deadline;
    uint64_t seq = 0;
  };
  struct ModelState {
    ModelBatching batching;
    std::deque<Item> queue;
  };

  void dispatchLoop();
  void execute(const std::string &model, const ModelBatching &batching, std::vector<Item> batch);
  static void finishPiece(const Item &item, Result<std::vector<Tensor>> outputs);

  SchedulerOptions options_;
  RunFn run_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, ModelState> models_; // GUARDED_BY(mu_)
  uint64_t next_seq_ = 0;                    // GUARDED_BY(mu_)
  bool stopping_ = false;                    // GUARDED_BY(mu_)
  std::thread thread_;
};

} // namespace rs::scheduler
