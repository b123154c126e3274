//===- scheduler/scheduler.cc - Per-model queues, disciplines, a dispatch loop ===//
#include "scheduler/scheduler.h"

#include <unsupported/Eigen/CXX11/ThreadPool>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace rs::scheduler {

/// Collects the outputs of a request's pieces and completes the request once.
struct Scheduler::Join {
  std::vector<Tensor> inputs;
  std::vector<int64_t> output_batch_axes;
  std::vector<std::vector<Tensor>> piece_outputs;
  std::vector<RowRange> pieces;
  size_t remaining = 0;
  bool failed = false;
  std::mutex mu;
  DoneFn done;
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

Scheduler::Scheduler(SchedulerOptions options, RunFn run)
    : options_(options),
      answers_(options.answer_threads > 0 ? std::make_unique<AnswerPool>(options.answer_threads)
                                          : nullptr),
      run_(std::move(run)) {}

Scheduler::~Scheduler() { stop(); }

Clock::time_point Scheduler::now() const {
  return options_.clock ? options_.clock() : Clock::now();
}

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
  const double dt = std::chrono::duration<double>(now() - state.ema_at).count();
  s.recent_compute_ema =
      dt > 0 ? state.ema * std::exp(-dt * std::log(2.0) / options_.ema_halflife_seconds)
             : state.ema;
  s.cost_estimate = state.cost;
  s.dispatch_count = state.dispatch_count;
  s.warmup_failures = state.warmup_failures;
  s.requests_served = state.requests_served;
  s.rows_served = state.rows_served;
  s.total_compute_seconds = state.total_compute;
  return s;
}

void Scheduler::decayEma(ModelState &state, Clock::time_point t) const {
  const double dt = std::chrono::duration<double>(t - state.ema_at).count();
  if (dt > 0) {
    state.ema *= std::exp(-dt * std::log(2.0) / options_.ema_halflife_seconds);
    state.ema_at = t;
  }
}

void Scheduler::foldCost(ModelState &state, int64_t batch_size, double seconds) const {
  auto [it, inserted] = state.cost.try_emplace(batch_size, seconds);
  if (!inserted)
    it->second = options_.cost_ema_alpha * seconds + (1 - options_.cost_ema_alpha) * it->second;
}

double Scheduler::costOf(const ModelState &state, int64_t batch_size) const {
  auto it = state.cost.find(batch_size);
  return it == state.cost.end() ? options_.default_cost_seconds : it->second;
}

int64_t Scheduler::rowCap(const ModelState &state) {
  const std::vector<int64_t> &sizes = state.batching.compiled_batch_sizes;
  int64_t cap = sizes.empty() ? 0 : sizes.back();
  if (state.policy.max_batch_size > 0)
    cap = std::min(cap, state.policy.max_batch_size);
  return cap;
}

bool Scheduler::sameShapes(const ModelBatching &batching, const Item &front, const Item &next) {
  if (front.join == next.join)
    return true;
  const std::vector<Tensor> &a = front.join->inputs;
  const std::vector<Tensor> &b = next.join->inputs;
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const int64_t axis = i < batching.input_batch_axes.size() ? batching.input_batch_axes[i] : -1;
    if (!sameRowShape(a[i], b[i], axis))
      return false;
  }
  return true;
}

int64_t Scheduler::plannedBatchSize(const ModelState &state) const {
  const std::vector<int64_t> &sizes = state.batching.compiled_batch_sizes;
  if (sizes.empty())
    return 0;
  const int64_t cap = rowCap(state);
  int64_t rows = 0;
  for (const Item &item : state.queue) {
    if (rows > 0 && (!item.coalescable || rows + item.rows.count > cap ||
                     !sameShapes(state.batching, state.queue.front(), item)))
      break;
    rows += item.rows.count;
    if (!item.coalescable)
      break;
  }
  if (rows <= 0)
    return sizes.front();
  return chooseBatchSize(sizes, std::min(rows, sizes.back()), options_.batch_sizes);
}

std::optional<Clock::time_point> Scheduler::holdUntil(const ModelState &state,
                                                      Clock::time_point t) const {
  const std::vector<int64_t> &sizes = state.batching.compiled_batch_sizes;
  if (options_.max_queue_delay_us.count() <= 0 || sizes.empty() || state.queue.empty() ||
      !state.queue.front().coalescable || stopping_) // draining: send what is queued at once
    return std::nullopt;
  const int64_t cap = rowCap(state);
  int64_t rows = 0;
  for (const Item &item : state.queue) {
    if (!item.coalescable || rows + item.rows.count > cap ||
        !sameShapes(state.batching, state.queue.front(), item))
      return std::nullopt; // the batch cannot grow any further
    rows += item.rows.count;
  }
  if (rows >= cap)
    return std::nullopt;
  // The wait runs from the later of the oldest request's arrival and the end of the model's
  // last batch: rows that queued while a batch ran still wait for the clients that batch
  // answered. Measured from arrival alone (Triton's rule), closed-loop clients split into
  // groups that alternate in half-full batches, each finding its rows already "old".
  Clock::time_point until =
      std::max(state.queue.front().enqueued, state.last_finished) +
      std::chrono::duration_cast<Clock::duration>(options_.max_queue_delay_us);
  // Leave each deadline the time the largest batch is expected to take (twice under edf,
  // whose dispatch sheds a request within that margin of its deadline).
  const double cost_s = costOf(state, chooseBatchSize(sizes, cap, options_.batch_sizes)) *
                        (options_.discipline == Discipline::kEdf ? 2 : 1);
  const auto cost =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(cost_s));
  for (const Item &item : state.queue)
    if (item.deadline)
      until = std::min(until, *item.deadline - cost);
  if (t >= until)
    return std::nullopt;
  return until;
}

Scheduler::ModelMap::iterator Scheduler::pick(Clock::time_point t) {
  ModelMap::iterator chosen = models_.end();
  auto older = [](const ModelState &a, const ModelState &b) {
    return a.queue.front().seq < b.queue.front().seq;
  };
  switch (options_.discipline) {
  case Discipline::kFifo:
    for (auto it = models_.begin(); it != models_.end(); ++it)
      if (!it->second.queue.empty() && !it->second.held &&
          (chosen == models_.end() || older(it->second, chosen->second)))
        chosen = it;
    return chosen;
  case Discipline::kEdf: {
    constexpr Clock::time_point kNever = Clock::time_point::max();
    Clock::time_point best = kNever;
    for (auto it = models_.begin(); it != models_.end(); ++it) {
      if (it->second.queue.empty() || it->second.held)
        continue;
      Clock::time_point soonest = kNever;
      for (const Item &item : it->second.queue)
        if (item.deadline && *item.deadline < soonest)
          soonest = *item.deadline;
      if (chosen == models_.end() || soonest < best ||
          (soonest == best && older(it->second, chosen->second))) {
        chosen = it;
        best = soonest;
      }
    }
    return chosen;
  }
  case Discipline::kFair: {
    double weight_sum = 0, ema_sum = 0;
    for (auto &[name, state] : models_) {
      if (state.queue.empty() || state.held)
        continue;
      decayEma(state, t);
      weight_sum += state.policy.weight;
      ema_sum += state.ema;
    }
    double best = 0;
    const double cap = options_.recency_penalty_cap;
    for (auto it = models_.begin(); it != models_.end(); ++it) {
      ModelState &state = it->second;
      if (state.queue.empty() || state.held)
        continue;
      const double share = state.policy.weight / weight_sum;
      const double nema = ema_sum > 0 ? state.ema / ema_sum : 0;
      const double eff_cost =
          costOf(state, plannedBatchSize(state)) * (1 - options_.coalescing_discount);
      const double priority = std::clamp(share - nema, -cap, cap) / eff_cost;
      if (chosen == models_.end() || priority > best ||
          (priority == best && older(state, chosen->second))) {
        chosen = it;
        best = priority;
      }
    }
    return chosen;
  }
  }
  return chosen;
}

void Scheduler::removeModel(const std::string &model) {
  std::deque<Item> orphans;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = models_.find(model);
    if (it == models_.end())
      return;
    orphans.swap(it->second.queue);
    models_.erase(it);
  }
  for (const Item &item : orphans)
    finishPiece(item, notFound() << "model '" << model << "' was unloaded");
}

void Scheduler::submit(const std::string &model, std::vector<Tensor> inputs,
                       std::optional<Clock::time_point> deadline, DoneFn done) {
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
  auto join = std::make_shared<Join>();
  join->output_batch_axes = b.output_batch_axes;
  join->done = std::move(done);

  bool batched = !b.compiled_batch_sizes.empty();
  bool outputs_batched = true;
  for (int64_t axis : b.output_batch_axes)
    outputs_batched = outputs_batched && axis >= 0;
  int64_t rows = 0;
  if (batched && !inputs.empty() && b.input_batch_axes[0] >= 0)
    rows = inputs[0].shape()[static_cast<size_t>(b.input_batch_axes[0])];

  if (!batched || rows == 0) {
    join->pieces = {RowRange{0, rows}};
  } else {
    join->pieces = splitRows(rows, b.compiled_batch_sizes.back());
  }
  join->inputs = std::move(inputs);
  join->remaining = join->pieces.size();
  join->piece_outputs.resize(join->pieces.size());
  const bool single = join->pieces.size() == 1;
  const Clock::time_point enqueued = now();
  for (size_t p = 0; p < join->pieces.size(); ++p) {
    Item item;
    item.join = join;
    item.piece = p;
    item.rows = join->pieces[p];
    item.coalescable = batched && single && outputs_batched && options_.coalescing;
    item.deadline = deadline;
    item.seq = next_seq_++;
    item.enqueued = enqueued;
    state.queue.push_back(std::move(item));
  }
  // Inline dispatch: with the device idle, the submitting thread runs the next batch
  // itself (the discipline still picks it) instead of waking the dispatch thread, saving a
  // thread hop per request. Not while a warmup is pending (the dispatch thread runs those
  // first).
  if (options_.inline_dispatch && !busy_ && !stopping_ && thread_.joinable() &&
      std::none_of(models_.begin(), models_.end(),
                   [](const auto &entry) { return entry.second.warmup_pending; })) {
    std::optional<Clock::time_point> wake;
    (void)dispatchOne(lock, &wake);
    // Requests submitted while this batch ran were queued for the dispatch thread, which
    // waits while busy_; wake it only if something is left (a queue, a hold, a warmup) or
    // stop() came meanwhile (its wake-up found busy_ set: the dispatch thread went back to
    // waiting and would never see stopping_). An idle wake-up costs a context switch and the
    // lock per request, on the request's path.
    if (!stopping_ && std::all_of(models_.begin(), models_.end(), [](const auto &entry) {
          return entry.second.queue.empty() && !entry.second.warmup_pending;
        }))
      return;
  }
  lock.unlock();
  cv_.notify_one();
}

void Scheduler::start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable() || stopping_)
    return;
  thread_ = std::thread([this] { dispatchLoop(); });
}

void Scheduler::stop() {
  std::vector<Item> orphans;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (auto &[name, state] : models_) {
      for (Item &item : state.queue)
        orphans.push_back(std::move(item));
      state.queue.clear();
    }
  }
  cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
  if (answers_)
    answers_->drain();
  for (const Item &item : orphans)
    finishPiece(item, unavailable() << "server is shutting down");
}

int64_t Scheduler::queueDepth(const std::string &model) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(model);
  return it == models_.end() ? 0 : static_cast<int64_t>(it->second.queue.size());
}

bool Scheduler::runPendingWarmup(std::unique_lock<std::mutex> &lock) {
  if (stopping_)
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
  busy_ = true;
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
  busy_ = false;
  auto again = models_.find(model);
  if (again != models_.end()) {
    for (const auto &[size, seconds] : costs)
      foldCost(again->second, size, seconds);
    again->second.warmup_failures += failures;
  }
  return true;
}

bool Scheduler::dispatchOne(std::unique_lock<std::mutex> &lock,
                            std::optional<Clock::time_point> *wake) {
  const Clock::time_point t = now();
  // The coalescing wait: hold partial batches; wake at the earliest hold's end.
  *wake = std::nullopt;
  for (auto &[name, state] : models_) {
    const std::optional<Clock::time_point> until = holdUntil(state, t);
    state.held = until.has_value();
    if (until && (!*wake || *until < **wake))
      *wake = until;
  }
  ModelMap::iterator chosen = pick(t);
  if (chosen == models_.end())
    return false;
  ModelState &state = chosen->second;
  // Laxity margin: under edf a request that cannot finish by its deadline is shed.
  const double margin_s =
      options_.discipline == Discipline::kEdf ? costOf(state, plannedBatchSize(state)) : 0.0;
  const auto margin =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(margin_s));
  std::vector<Item> batch;
  std::vector<Item> expired;
  int64_t rows = 0;
  const int64_t cap = rowCap(state);
  while (!state.queue.empty()) {
    Item &next = state.queue.front();
    if (next.deadline && t + margin >= *next.deadline) {
      expired.push_back(std::move(next));
      state.queue.pop_front();
      continue;
    }
    if (!batch.empty() &&
        (!batch.front().coalescable || !next.coalescable || rows + next.rows.count > cap ||
         !sameShapes(state.batching, batch.front(), next)))
      break;
    rows += next.rows.count;
    batch.push_back(std::move(next));
    state.queue.pop_front();
    if (!batch.front().coalescable)
      break;
  }
  std::string model = chosen->first;
  ModelBatching batching = state.batching;
  busy_ = true;
  lock.unlock();
  for (const Item &item : expired)
    finishPiece(item, deadlineExceeded()
                          << "model '" << model << "': deadline exceeded before execution");
  if (!batch.empty())
    execute(model, batching, std::move(batch));
  lock.lock();
  busy_ = false;
  return true;
}

void Scheduler::dispatchLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (busy_) { // a submitting thread dispatches inline; it notifies when done
      cv_.wait(lock);
      continue;
    }
    if (runPendingWarmup(lock))
      continue;
    std::optional<Clock::time_point> wake;
    if (dispatchOne(lock, &wake))
      continue;
    if (stopping_)
      return;
    if (wake)
      cv_.wait_for(lock, *wake - now());
    else
      cv_.wait(lock);
  }
}

void Scheduler::execute(const std::string &model, const ModelBatching &batching,
                        std::vector<Item> batch) {
  const bool batched = !batching.compiled_batch_sizes.empty();
  int64_t rows = 0;
  for (const Item &item : batch)
    rows += item.rows.count;
  if (batched && rows == 0) {
    for (const Item &item : batch)
      finishPiece(item, invalidArgument() << "model '" << model << "': request has 0 rows");
    return;
  }
  const int64_t batch_size =
      batched ? chooseBatchSize(batching.compiled_batch_sizes, rows, options_.batch_sizes) : 0;
  const Clock::time_point gathering = now();
  if (options_.prepare_run) {
    if (Status s = options_.prepare_run(model); !s.isOk()) {
      for (const Item &item : batch)
        finishPiece(item, s);
      return;
    }
  }

  // Inputs: pass a whole request through untouched when it fills the batch exactly.
  const std::vector<Tensor> &first_inputs = batch.front().join->inputs;
  std::vector<Tensor> inputs;
  inputs.reserve(first_inputs.size());
  for (size_t i = 0; i < first_inputs.size(); ++i) {
    const int64_t axis = batching.input_batch_axes.empty() ? -1 : batching.input_batch_axes[i];
    const Tensor &t0 = first_inputs[i];
    if (!batched || axis < 0 ||
        (batch.size() == 1 && batch.front().rows.count == batch_size &&
         t0.shape()[static_cast<size_t>(axis)] == batch_size)) {
      inputs.push_back(t0);
      continue;
    }
    std::vector<BatchPart> parts;
    for (const Item &item : batch)
      parts.push_back({&item.join->inputs[i], item.rows});
    inputs.push_back(gatherRows(parts, axis, batch_size));
  }

  const Clock::time_point started = now();
  Result<std::vector<Tensor>> outputs = run_(model, batch_size, std::move(inputs));
  const Clock::time_point finished = now();
  const double compute_seconds = std::chrono::duration<double>(finished - started).count();
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = models_.find(model);
    if (it != models_.end()) {
      ModelState &state = it->second;
      state.last_finished = finished;
      decayEma(state, finished);
      state.ema += compute_seconds;
      state.total_compute += compute_seconds;
      ++state.dispatch_count;
      if (outputs.isOk()) {
        foldCost(state, batch_size, compute_seconds);
        state.requests_served += static_cast<int64_t>(batch.size());
        state.rows_served += batched ? rows : static_cast<int64_t>(batch.size());
      }
    }
  }
  // Each request's rows of every output (the output phase), then the observer, then the
  // answers.
  std::vector<std::vector<Tensor>> per_item;
  Status failure;
  if (!outputs.isOk()) {
    failure = outputs.status();
  } else if (outputs->size() != batching.output_batch_axes.size() && batched) {
    failure = internalError() << "model '" << model << "': program returned " << outputs->size()
                              << " outputs, manifest declares "
                              << batching.output_batch_axes.size();
  } else {
    int64_t offset = 0;
    for (const Item &item : batch) {
      std::vector<Tensor> mine;
      mine.reserve(outputs->size());
      for (size_t o = 0; o < outputs->size(); ++o) {
        const Tensor &out = (*outputs)[o];
        const int64_t axis = batched ? batching.output_batch_axes[o] : -1;
        if (axis < 0 || (offset == 0 && item.rows.count == batch_size))
          mine.push_back(out);
        else
          mine.push_back(sliceRows(out, axis, {offset, item.rows.count}));
      }
      offset += item.rows.count;
      per_item.push_back(std::move(mine));
    }
  }
  // The observer (metrics: a few microseconds per request of the batch) runs after the
  // answer threads have their shares, before this thread's own share: with a coalesced batch
  // it no longer delays every answer.
  auto observe = [&](const std::vector<Item> &items) {
    if (!options_.on_dispatch)
      return;
    DispatchStats stats;
    stats.model = model;
    stats.batch_size = batch_size;
    stats.rows = batched ? rows : static_cast<int64_t>(items.size());
    stats.compute_seconds = compute_seconds;
    stats.input_seconds = std::chrono::duration<double>(started - gathering).count();
    stats.output_seconds = std::chrono::duration<double>(now() - finished).count();
    for (const Item &item : items)
      stats.queue_wait_seconds.push_back(
          std::chrono::duration<double>(gathering - item.enqueued).count());
    stats.ok = outputs.isOk();
    options_.on_dispatch(stats);
  };
  if (!failure.isOk()) {
    observe(batch);
    for (const Item &item : batch)
      finishPiece(item, failure);
    return;
  }
  // Answers: on this thread, or with answer threads (batches of 8 requests or more) in
  // contiguous shares, this thread taking the first.
  constexpr size_t kMinParallelAnswers = 8, kMinShare = 4;
  const size_t shares =
      answers_ && batch.size() >= kMinParallelAnswers
          ? std::min(static_cast<size_t>(answers_->threads()) + 1, batch.size() / kMinShare)
          : 1;
  struct Answers {
    std::vector<Item> batch;
    std::vector<std::vector<Tensor>> outputs;
  };
  auto answers = std::make_shared<Answers>(Answers{std::move(batch), std::move(per_item)});
  auto deliver = [answers](size_t begin, size_t end) {
    for (size_t k = begin; k < end; ++k)
      finishPiece(answers->batch[k], std::move(answers->outputs[k]));
  };
  const size_t n = answers->batch.size();
  for (size_t s = 1; s < shares; ++s)
    answers_->post([deliver, s, shares, n] { deliver(s * n / shares, (s + 1) * n / shares); });
  observe(answers->batch);
  deliver(0, n / shares);
}

void Scheduler::finishPiece(const Item &item, Result<std::vector<Tensor>> outputs) {
  Join &join = *item.join;
  DoneFn done;
  Result<std::vector<Tensor>> result = Status(internalError() << "unset");
  {
    std::lock_guard<std::mutex> lock(join.mu);
    if (join.failed)
      return;
    if (!outputs.isOk()) {
      join.failed = true;
      done = std::move(join.done);
      result = outputs.status();
    } else {
      join.piece_outputs[item.piece] = std::move(outputs).value();
      if (--join.remaining > 0)
        return;
      done = std::move(join.done);
      if (join.pieces.size() == 1) {
        result = std::move(join.piece_outputs[0]);
      } else {
        // Concatenate the pieces' rows of every output along its batch axis.
        std::vector<Tensor> merged;
        const size_t n_out = join.piece_outputs[0].size();
        int64_t total = 0;
        for (const RowRange &r : join.pieces)
          total += r.count;
        for (size_t o = 0; o < n_out; ++o) {
          std::vector<BatchPart> parts;
          for (size_t p = 0; p < join.pieces.size(); ++p)
            parts.push_back({&join.piece_outputs[p][o], {0, join.pieces[p].count}});
          merged.push_back(gatherRows(parts, join.output_batch_axes[o], total));
        }
        result = std::move(merged);
      }
    }
  }
  done(std::move(result));
}

} // namespace rs::scheduler
