//===- scheduler/dispatch.cc - Forming, running and answering one batch ----===//
//
// One dispatch (scheduler.h): the chosen model's batch is taken off its queue (shedding
// what cannot meet its deadline), its rows gathered into the compiled size, run, measured
// into the model's costs, sliced back per request and answered.
//
//===----------------------------------------------------------------------===//
#include "scheduler/scheduler_impl.h"

#include <algorithm>

namespace rs::scheduler {

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
  std::vector<QueuedPiece> expired, cancelled;
  std::vector<QueuedPiece> batch = takeBatch(state, t, &expired, &cancelled);
  std::string model = chosen->first;
  ModelBatching batching = state.batching;
  ++in_flight_;
  // Another dispatch thread may start the next batch meanwhile, if one is queued.
  const bool more = in_flight_ < options_.max_batches_in_flight &&
                    std::any_of(models_.begin(), models_.end(),
                                [](const auto &entry) { return !entry.second.queue.empty(); });
  lock.unlock();
  if (more)
    cv_.notify_one();
  for (const QueuedPiece &piece : expired)
    finishPiece(piece, deadlineExceeded()
                           << "model '" << model << "': deadline exceeded before execution");
  for (const QueuedPiece &piece : cancelled)
    finishPiece(piece, StatusBuilder(StatusCode::kCancelled)
                           << "model '" << model
                           << "': the client cancelled the request before it ran");
  if (!batch.empty())
    execute(model, batching, std::move(batch));
  lock.lock();
  --in_flight_;
  if (stopping_) // dispatch threads waiting for the running batches to finish may now exit
    cv_.notify_all();
  return true;
}

std::vector<Scheduler::QueuedPiece>
Scheduler::takeBatch(ModelState &state, Clock::time_point t, std::vector<QueuedPiece> *expired,
                     std::vector<QueuedPiece> *cancelled) const {
  // Laxity margin: under edf a request that cannot finish by its deadline is shed.
  const double margin_s =
      options_.discipline == Discipline::kEdf ? costOf(state, plannedBatchSize(state)) : 0.0;
  const auto margin =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(margin_s));
  std::vector<QueuedPiece> batch;
  int64_t rows = 0;
  const int64_t cap = rowCap(state);
  while (!state.queue.empty()) {
    QueuedPiece &next = state.queue.front();
    // A passed deadline first: gRPC cancels a call whose deadline passed, and its client
    // sees DEADLINE_EXCEEDED.
    // A committed piece's request is already running: shed only past its deadline.
    if (next.deadline &&
        t + (next.committed ? Clock::duration::zero() : margin) >= *next.deadline) {
      expired->push_back(std::move(next));
      state.queue.pop_front();
      continue;
    }
    if (isCancelled(next.request->cancel)) {
      ++state.requests_cancelled;
      cancelled->push_back(std::move(next));
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
  return batch;
}

void Scheduler::execute(const std::string &model, const ModelBatching &batching,
                        std::vector<QueuedPiece> batch) {
  const bool batched = !batching.compiled_batch_sizes.empty();
  int64_t rows = 0;
  for (const QueuedPiece &piece : batch)
    rows += piece.rows.count;
  if (batched && rows == 0) {
    for (const QueuedPiece &piece : batch)
      finishPiece(piece, invalidArgument() << "model '" << model << "': request has 0 rows");
    return;
  }
  const int64_t batch_size =
      batched ? chooseBatchSize(batching.compiled_batch_sizes, rows, options_.batch_sizes) : 0;
  const Clock::time_point gathering = now();
  if (options_.prepare_run) {
    if (Status s = options_.prepare_run(model); !s.isOk()) {
      for (const QueuedPiece &piece : batch)
        finishPiece(piece, s);
      return;
    }
  }
  std::vector<Tensor> inputs = gatherInputs(batching, batch, batch_size);

  DispatchStats stats;
  const Clock::time_point started = now();
  Result<std::vector<Tensor>> outputs = [&] {
    RunProfileScope profile(&stats.run_profile);
    return run_(model, batch_size, std::move(inputs));
  }();
  const Clock::time_point finished = now();
  stats.model = model;
  stats.batch_size = batch_size;
  stats.rows = batched ? rows : static_cast<int64_t>(batch.size());
  stats.compute_seconds = std::chrono::duration<double>(finished - started).count();
  stats.input_seconds = std::chrono::duration<double>(started - gathering).count();
  stats.ok = outputs.isOk();
  for (const QueuedPiece &piece : batch)
    stats.queue_wait_seconds.push_back(
        std::chrono::duration<double>(gathering - piece.enqueued).count());
  account(model, stats, finished);

  // Each request's rows of every output (the output phase), then the observer, then the
  // answers. The observer (metrics: a few microseconds per request of the batch) runs after
  // the answer threads have their shares, before this thread's own share, so that with a
  // coalesced batch it does not delay every answer.
  Result<std::vector<std::vector<Tensor>>> answers =
      sliceOutputs(model, batching, batch, batch_size, std::move(outputs));
  auto observe = [&] {
    if (!options_.on_dispatch)
      return;
    stats.output_seconds = std::chrono::duration<double>(now() - finished).count();
    options_.on_dispatch(stats);
  };
  if (!answers.isOk()) {
    observe();
    for (const QueuedPiece &piece : batch)
      finishPiece(piece, answers.status());
    return;
  }
  deliverAnswers(std::move(batch), std::move(answers).value(), observe);
}

std::vector<Tensor> Scheduler::gatherInputs(const ModelBatching &batching,
                                            const std::vector<QueuedPiece> &batch,
                                            int64_t batch_size) {
  const bool batched = !batching.compiled_batch_sizes.empty();
  // Pass a whole request through untouched when it fills the batch exactly.
  const std::vector<Tensor> &first_inputs = batch.front().request->inputs;
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
    for (const QueuedPiece &piece : batch)
      parts.push_back({&piece.request->inputs[i], piece.rows});
    inputs.push_back(gatherRows(parts, axis, batch_size));
  }
  return inputs;
}

void Scheduler::account(const std::string &model, const DispatchStats &stats,
                        Clock::time_point finished) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(model);
  if (it == models_.end())
    return;
  ModelState &state = it->second;
  state.last_finished = finished;
  decayEma(state, finished);
  state.ema += stats.compute_seconds;
  state.total_compute += stats.compute_seconds;
  ++state.dispatch_count;
  if (stats.ok) {
    foldCost(state, stats.batch_size, stats.compute_seconds);
    state.requests_served += static_cast<int64_t>(stats.queue_wait_seconds.size());
    state.rows_served += stats.rows;
  }
}

Result<std::vector<std::vector<Tensor>>>
Scheduler::sliceOutputs(const std::string &model, const ModelBatching &batching,
                        const std::vector<QueuedPiece> &batch, int64_t batch_size,
                        Result<std::vector<Tensor>> outputs) {
  const bool batched = !batching.compiled_batch_sizes.empty();
  if (!outputs.isOk())
    return outputs.status();
  if (outputs->size() != batching.output_batch_axes.size() && batched)
    return internalError() << "model '" << model << "': program returned " << outputs->size()
                           << " outputs, manifest declares " << batching.output_batch_axes.size();
  std::vector<std::vector<Tensor>> per_piece;
  int64_t offset = 0;
  for (const QueuedPiece &piece : batch) {
    std::vector<Tensor> mine;
    mine.reserve(outputs->size());
    for (size_t o = 0; o < outputs->size(); ++o) {
      const Tensor &out = (*outputs)[o];
      const int64_t axis = batched ? batching.output_batch_axes[o] : -1;
      if (axis < 0 || (offset == 0 && piece.rows.count == batch_size))
        mine.push_back(out);
      else
        mine.push_back(sliceRows(out, axis, {offset, piece.rows.count}));
    }
    offset += piece.rows.count;
    per_piece.push_back(std::move(mine));
  }
  return per_piece;
}

void Scheduler::deliverAnswers(std::vector<QueuedPiece> batch,
                               std::vector<std::vector<Tensor>> outputs,
                               const std::function<void()> &observe) {
  constexpr size_t kMinParallelAnswers = 8, kMinShare = 4;
  const size_t shares =
      answers_ && batch.size() >= kMinParallelAnswers
          ? std::min(static_cast<size_t>(answers_->threads()) + 1, batch.size() / kMinShare)
          : 1;
  struct Answers {
    std::vector<QueuedPiece> batch;
    std::vector<std::vector<Tensor>> outputs;
  };
  auto answers = std::make_shared<Answers>(Answers{std::move(batch), std::move(outputs)});
  auto deliver = [answers](size_t begin, size_t end) {
    for (size_t k = begin; k < end; ++k)
      finishPiece(answers->batch[k], std::move(answers->outputs[k]));
  };
  const size_t n = answers->batch.size();
  for (size_t s = 1; s < shares; ++s)
    answers_->post([deliver, s, shares, n] { deliver(s * n / shares, (s + 1) * n / shares); });
  observe();
  deliver(0, n / shares);
}

void Scheduler::finishPiece(const QueuedPiece &piece, Result<std::vector<Tensor>> outputs) {
  SplitRequest &request = *piece.request;
  DoneFn done;
  Result<std::vector<Tensor>> result = Status(internalError() << "unset");
  {
    std::lock_guard<std::mutex> lock(request.mu);
    if (request.failed)
      return;
    if (outputs.isOk() && isCancelled(request.cancel))
      outputs = Status(StatusBuilder(StatusCode::kCancelled)
                       << "the client cancelled the request while it ran; its answer was dropped");
    if (!outputs.isOk()) {
      request.failed = true;
      done = std::move(request.done);
      result = outputs.status();
    } else {
      request.piece_outputs[piece.piece] = std::move(outputs).value();
      if (--request.remaining > 0)
        return;
      done = std::move(request.done);
      if (request.pieces.size() == 1) {
        result = std::move(request.piece_outputs[0]);
      } else {
        // Concatenate the pieces' rows of every output along its batch axis.
        std::vector<Tensor> merged;
        const size_t n_out = request.piece_outputs[0].size();
        int64_t total = 0;
        for (const RowRange &r : request.pieces)
          total += r.count;
        for (size_t o = 0; o < n_out; ++o) {
          std::vector<BatchPart> parts;
          for (size_t p = 0; p < request.pieces.size(); ++p)
            parts.push_back({&request.piece_outputs[p][o], {0, request.pieces[p].count}});
          merged.push_back(gatherRows(parts, request.output_batch_axes[o], total));
        }
        result = std::move(merged);
      }
    }
  }
  done(std::move(result));
}

} // namespace rs::scheduler
