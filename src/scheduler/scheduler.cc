//===- scheduler/scheduler.cc - Per-model queues, disciplines, a dispatch loop ===//
//
// The models' table, submit(), warmups and the dispatch loop (scheduler.h); the
// disciplines and the coalescing wait are in policy.cc, one dispatch in dispatch.cc.
//
//===----------------------------------------------------------------------===//
#include "scheduler/scheduler.h"

#include "scheduler/scheduler_impl.h"

#include <algorithm>
#include <cmath>

namespace rs::scheduler {

Scheduler::Scheduler(SchedulerOptions options, RunFn run)
    : options_(options), clock_(options_.clock ? options_.clock : std::make_shared<SteadyClock>()),
      answers_(options.answer_threads > 0 ? std::make_unique<AnswerPool>(options.answer_threads)
                                          : nullptr),
      run_(std::move(run)) {}

Scheduler::~Scheduler() { stop(); }

Clock::time_point Scheduler::now() const { return clock_->now(); }

void Scheduler::addModel(const std::string &model, ModelBatching batching,
                         std::optional<ModelPolicy> policy) {
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = models_.try_emplace(model);
  ModelState &state = it->second;
  state.warmup_pending = options_.warmup && options_.discipline == Discipline::kFair &&
                         static_cast<bool>(batching.warmup_inputs);
  state.batching = std::move(batching);
  if (!policy) {
    auto p = options_.model_policies.find(model);
    policy = p == options_.model_policies.end() ? ModelPolicy{} : p->second;
  }
  state.policy = *policy;
  cv_.notify_one();
  if (inserted)
    state.ema_at = now();
  else
    state.cost.clear();
}

Status Scheduler::renameModel(const std::string &from, const std::string &to) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(from);
  if (it == models_.end())
    return notFound() << "unknown model '" << from << "'";
  if (models_.count(to) != 0)
    return StatusBuilder(StatusCode::kAlreadyExists) << "model '" << to << "' already exists";
  auto node = models_.extract(it);
  node.key() = to;
  models_.insert(std::move(node));
  return Status::ok();
}

Status Scheduler::setWeight(const std::string &model, double weight) {
  if (!(weight > 0) || !std::isfinite(weight))
    return invalidArgument() << "model '" << model << "': weight must be > 0, got " << weight;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(model);
  if (it == models_.end())
    return notFound() << "unknown model '" << model << "'";
  it->second.policy.weight = weight;
  return Status::ok();
}

void Scheduler::recordCost(const std::string &model, int64_t batch_size, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(model);
  if (it != models_.end())
    foldCost(it->second, batch_size, seconds);
}

std::optional<ModelSchedStats> Scheduler::stats(const std::string &model) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(model);
  if (it == models_.end())
    return std::nullopt;
  const ModelState &state = it->second;
  ModelSchedStats s;
  s.weight = state.policy.weight;
  s.max_batch_size = state.policy.max_batch_size;
  s.queue_depth = static_cast<int64_t>(state.queue.size());
  s.queued_cancelled =
      std::count_if(state.queue.begin(), state.queue.end(),
                    [](const QueuedPiece &p) { return isCancelled(p.request->cancel); });
  const double dt = std::chrono::duration<double>(now() - state.ema_at).count();
  s.recent_compute_ema =
      dt > 0 ? state.ema * std::exp(-dt * std::log(2.0) / options_.ema_halflife_seconds)
             : state.ema;
  s.cost_estimate = state.cost;
  s.dispatch_count = state.dispatch_count;
  s.warmup_failures = state.warmup_failures;
  s.requests_served = state.requests_served;
  s.rows_served = state.rows_served;
  s.requests_cancelled = state.requests_cancelled;
  s.total_compute_seconds = state.total_compute;
  return s;
}

void Scheduler::removeModel(const std::string &model) {
  std::deque<QueuedPiece> orphans;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = models_.find(model);
    if (it == models_.end())
      return;
    orphans.swap(it->second.queue);
    models_.erase(it);
  }
  for (const QueuedPiece &piece : orphans)
    finishPiece(piece, notFound() << "model '" << model << "' was unloaded");
}

void Scheduler::submit(const std::string &model, std::vector<Tensor> inputs,
                       std::optional<Clock::time_point> deadline, DoneFn done,
                       CancellationPtr cancel) {
  enqueue(model, {std::move(inputs), deadline, std::move(done), std::move(cancel), false});
}

void Scheduler::submitCommitted(const std::string &model, std::vector<Tensor> inputs,
                                std::optional<Clock::time_point> deadline, DoneFn done,
                                CancellationPtr cancel) {
  enqueue(model, {std::move(inputs), deadline, std::move(done), std::move(cancel), true});
}

void Scheduler::enqueue(const std::string &model, Submission submission) {
  std::vector<Tensor> &inputs = submission.inputs;
  DoneFn &done = submission.done;
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_) {
    lock.unlock();
    done(unavailable() << "server is shutting down");
    return;
  }
  auto it = models_.find(model);
  if (it == models_.end()) {
    lock.unlock();
    done(notFound() << "unknown model '" << model << "'");
    return;
  }
  ModelState &state = it->second;
  if (static_cast<int64_t>(state.queue.size()) >= options_.max_queue_depth) {
    lock.unlock();
    done(resourceExhausted() << "model '" << model << "': queue is full ("
                             << options_.max_queue_depth << " requests)");
    return;
  }
  const ModelBatching &b = state.batching;
  auto request = std::make_shared<SplitRequest>();
  request->output_batch_axes = b.output_batch_axes;
  request->done = std::move(done);
  request->cancel = std::move(submission.cancel);

  // A model whose only program is unbatched (size 0) runs each request whole.
  bool batched = !b.compiled_batch_sizes.empty() && b.compiled_batch_sizes.back() > 0;
  bool outputs_batched = true;
  for (int64_t axis : b.output_batch_axes)
    outputs_batched = outputs_batched && axis >= 0;
  int64_t rows = 0;
  if (batched && !inputs.empty() && b.input_batch_axes[0] >= 0)
    rows = inputs[0].shape()[static_cast<size_t>(b.input_batch_axes[0])];

  if (!batched || rows == 0) {
    request->pieces = {RowRange{0, rows}};
  } else {
    request->pieces = splitRows(rows, b.compiled_batch_sizes.back());
  }
  request->inputs = std::move(inputs);
  request->remaining = request->pieces.size();
  request->piece_outputs.resize(request->pieces.size());
  const bool single = request->pieces.size() == 1;
  const Clock::time_point enqueued = now();
  // A committed request goes behind the committed pieces at the queue's front, ahead of
  // the rest; any other at the back.
  auto at = submission.committed ? std::find_if(state.queue.begin(), state.queue.end(),
                                                [](const QueuedPiece &q) { return !q.committed; })
                                 : state.queue.end();
  for (size_t p = 0; p < request->pieces.size(); ++p) {
    QueuedPiece piece;
    piece.request = request;
    piece.piece = p;
    piece.rows = request->pieces[p];
    piece.coalescable = batched && single && outputs_batched && options_.coalescing;
    piece.deadline = submission.deadline;
    piece.seq = next_seq_++;
    piece.enqueued = enqueued;
    piece.committed = submission.committed;
    at = std::next(state.queue.insert(at, std::move(piece)));
  }
  // Inline dispatch: with the device idle, the submitting thread runs the next batch
  // itself (the discipline still picks it) instead of waking the dispatch thread, saving a
  // thread hop per request. Not while a warmup is pending (the dispatch thread runs those
  // first).
  if (options_.inline_dispatch && canDispatch() && !stopping_ && !threads_.empty() &&
      std::none_of(models_.begin(), models_.end(),
                   [](const auto &entry) { return entry.second.warmup_pending; })) {
    std::optional<Clock::time_point> wake;
    (void)dispatchOne(lock, &wake);
    // Requests submitted while this batch ran were queued for the dispatch threads, which
    // wait while no batch may start; wake one only if something is left (a queue, a hold, a
    // warmup), or all of them if stop() came meanwhile (they wait for this batch to finish
    // before they exit). An idle wake-up costs a context switch and the lock per request, on
    // the request's path.
    if (stopping_) {
      lock.unlock();
      cv_.notify_all();
      return;
    }
    if (std::all_of(models_.begin(), models_.end(), [](const auto &entry) {
          return entry.second.queue.empty() && !entry.second.warmup_pending;
        }))
      return;
  }
  lock.unlock();
  cv_.notify_one();
}

void Scheduler::start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!threads_.empty() || stopping_)
    return;
  const int n = std::max(1, options_.max_batches_in_flight);
  for (int i = 0; i < n; ++i)
    threads_.emplace_back([this] { dispatchLoop(); });
}

void Scheduler::stop() {
  std::vector<QueuedPiece> orphans;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (auto &[name, state] : models_) {
      for (QueuedPiece &piece : state.queue)
        orphans.push_back(std::move(piece));
      state.queue.clear();
    }
  }
  cv_.notify_all();
  for (std::thread &t : threads_)
    if (t.joinable())
      t.join();
  if (answers_)
    answers_->drain();
  for (const QueuedPiece &piece : orphans)
    finishPiece(piece, unavailable() << "server is shutting down");
}

int64_t Scheduler::queueDepth(const std::string &model) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(model);
  return it == models_.end() ? 0 : static_cast<int64_t>(it->second.queue.size());
}

bool Scheduler::canDispatch() const {
  return !warming_ && in_flight_ < std::max(1, options_.max_batches_in_flight);
}

bool Scheduler::runPendingWarmup(std::unique_lock<std::mutex> &lock) {
  if (stopping_ || in_flight_ > 0 || warming_)
    return false;
  auto it = std::find_if(models_.begin(), models_.end(),
                         [](const auto &entry) { return entry.second.warmup_pending; });
  if (it == models_.end())
    return false;
  it->second.warmup_pending = false;
  const std::string model = it->first;
  const ModelBatching batching = it->second.batching;
  std::vector<int64_t> sizes = batching.compiled_batch_sizes;
  if (sizes.empty())
    sizes.push_back(0);
  warming_ = true;
  lock.unlock();
  std::vector<std::pair<int64_t, double>> costs;
  int64_t failures = 0;
  for (int64_t size : sizes) {
    std::vector<Tensor> inputs = batching.warmup_inputs(size);
    if (inputs.empty())
      continue;
    if (options_.prepare_run && !options_.prepare_run(model).isOk()) {
      ++failures;
      continue;
    }
    const Clock::time_point started = now();
    Result<std::vector<Tensor>> out = run_(model, size, std::move(inputs));
    const double seconds = std::chrono::duration<double>(now() - started).count();
    if (out.isOk())
      costs.emplace_back(size, seconds);
    else
      ++failures;
  }
  lock.lock();
  warming_ = false;
  if (stopping_)
    cv_.notify_all();
  auto again = models_.find(model);
  if (again != models_.end()) {
    for (const auto &[size, seconds] : costs)
      foldCost(again->second, size, seconds);
    again->second.warmup_failures += failures;
  }
  return true;
}

void Scheduler::dispatchLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    // stop() has emptied the queues; the threads exit once nothing runs (a batch a
    // submitting thread runs inline included), so that the scheduler outlives every batch.
    if (stopping_ && in_flight_ == 0 && !warming_)
      return;
    // Nothing may start (batches in flight, or a warmup, on any thread), or a warmup waits
    // for the running batches to finish: the thread that finishes one runs the next itself.
    const bool warmup_waits =
        in_flight_ > 0 && std::any_of(models_.begin(), models_.end(), [](const auto &entry) {
          return entry.second.warmup_pending;
        });
    if (!canDispatch() || warmup_waits || stopping_) {
      cv_.wait(lock);
      continue;
    }
    if (runPendingWarmup(lock))
      continue;
    std::optional<Clock::time_point> wake;
    if (dispatchOne(lock, &wake))
      continue;
    if (wake)
      clock_->waitUntil(cv_, lock, *wake);
    else
      cv_.wait(lock);
  }
}

} // namespace rs::scheduler
