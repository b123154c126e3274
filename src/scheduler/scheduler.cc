//===- scheduler/scheduler.cc - Per-model FIFO queues and a dispatch loop ---===//
#include "scheduler/scheduler.h"

#include <cassert>

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

Scheduler::Scheduler(SchedulerOptions options, RunFn run)
    : options_(options), run_(std::move(run)) {}

Scheduler::~Scheduler() { stop(); }

void Scheduler::addModel(const std::string &model, ModelBatching batching) {
  std::lock_guard<std::mutex> lock(mu_);
  models_[model].batching = std::move(batching);
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
  for (size_t p = 0; p < join->pieces.size(); ++p) {
    Item item;
    item.join = join;
    item.piece = p;
    item.rows = join->pieces[p];
    item.coalescable = batched && single && outputs_batched && options_.coalescing;
    item.deadline = deadline;
    item.seq = next_seq_++;
    state.queue.push_back(std::move(item));
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
  for (const Item &item : orphans)
    finishPiece(item, unavailable() << "server is shutting down");
}

int64_t Scheduler::queueDepth(const std::string &model) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(model);
  return it == models_.end() ? 0 : static_cast<int64_t>(it->second.queue.size());
}

void Scheduler::dispatchLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    // Global FIFO: the model whose head request arrived first.
    std::map<std::string, ModelState>::iterator chosen = models_.end();
    for (auto it = models_.begin(); it != models_.end(); ++it)
      if (!it->second.queue.empty() &&
          (chosen == models_.end() ||
           it->second.queue.front().seq < chosen->second.queue.front().seq))
        chosen = it;
    if (chosen == models_.end()) {
      if (stopping_)
        return;
      cv_.wait(lock);
      continue;
    }
    ModelState &state = chosen->second;
    const auto now = Clock::now();
    std::vector<Item> batch;
    std::vector<Item> expired;
    int64_t rows = 0;
    const int64_t largest = state.batching.compiled_batch_sizes.empty()
                                ? 0
                                : state.batching.compiled_batch_sizes.back();
    while (!state.queue.empty()) {
      Item &next = state.queue.front();
      if (next.deadline && *next.deadline <= now) {
        expired.push_back(std::move(next));
        state.queue.pop_front();
        continue;
      }
      if (!batch.empty() &&
          (!batch.front().coalescable || !next.coalescable || rows + next.rows.count > largest))
        break;
      rows += next.rows.count;
      batch.push_back(std::move(next));
      state.queue.pop_front();
      if (!batch.front().coalescable)
        break;
    }
    std::string model = chosen->first;
    ModelBatching batching = state.batching;
    lock.unlock();
    for (const Item &item : expired)
      finishPiece(item, deadlineExceeded()
                            << "model '" << model << "': deadline exceeded before execution");
    if (!batch.empty())
      execute(model, batching, std::move(batch));
    lock.lock();
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

  Result<std::vector<Tensor>> outputs = run_(model, batch_size, std::move(inputs));
  if (!outputs.isOk()) {
    for (const Item &item : batch)
      finishPiece(item, outputs.status());
    return;
  }
  if (outputs->size() != batching.output_batch_axes.size() && batched) {
    for (const Item &item : batch)
      finishPiece(item, internalError()
                            << "model '" << model << "': program returned " << outputs->size()
                            << " outputs, manifest declares " << batching.output_batch_axes.size());
    return;
  }
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
    finishPiece(item, std::move(mine));
  }
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
