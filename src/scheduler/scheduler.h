//===- scheduler/scheduler.h - Per-model queues, disciplines, a dispatch loop ===//
//
// Dispatch loops per device run one program at a time by default (DESIGN.md "Request
// path"; reference-system.md §4), or up to `scheduler.max_batches_in_flight` batches at
// once (below). Each model has a FIFO queue (never reordered; committed requests, below,
// enter near its front); before each dispatch a loop
// picks a model by the discipline (`scheduler.discipline`):
//
// - fair: deficit-weighted and cost-aware. Over the models with queued requests,
//   share_m = w_m / sum(w) and nema_m = ema_m / sum(ema) (0 when the sum is 0), where
//   ema_m is model m's recent compute time, decayed as ema *= exp(-dt ln2 / halflife)
//   before every read and increased by each dispatch's measured compute seconds. The
//   model with the highest clamp(share - nema, -cap, cap) / eff_cost runs, eff_cost =
//   (cost_estimate[B] or default_cost_seconds) * (1 - coalescing_discount) for the batch
//   size B the model would run now. cost_estimate[B] = alpha * t + (1 - alpha) * old
//   (the first measurement, or a warmup seed from recordCost(), sets it). Ties: older
//   front request, then the smaller name. Deviation from the reference: shares and
//   nema are normalized over backlogged models only, so an idle model's weight does not
//   push every busy model into the negative clamp.
// - fifo: the model whose front request arrived first; weights ignored.
// - edf: the model with the soonest deadline anywhere in its queue (none = +inf); ties
//   older front, then name. Laxity shedding: a request with a deadline is dropped with
//   DeadlineExceeded when now + cost_estimate[B] (default_cost_seconds if unknown) >=
//   deadline; under fair and fifo the margin is 0 (only already-expired requests drop).
//
// With coalescing on, queued requests of the chosen model are packed, in arrival order,
// into one batch while their rows fit min(largest compiled size, the model's
// max_batch_size) and their inputs have the front request's dims besides the batch axis
// (so the requests of different shape variants of a multi-shape model, which differ on a
// variable axis, never share a batch: the batch is the leading run of same-shape
// requests, reference-system.md §4.3); the batch runs at the compiled size the policy picks, rows
// zero-padded, and each request gets its own rows of every output back. A request with
// more rows than the largest compiled size is split into pieces of the largest size (the
// last padded), always the same pieces, each run on its own dispatch and never coalesced;
// the pieces' outputs are concatenated back.
//
// Coalescing wait (`scheduler.max_queue_delay_microseconds`, like Triton's dynamic
// batcher; 0 = the reference: dispatch at once): while a coalescable model's next batch
// holds fewer rows than min(largest compiled size, max_batch_size) and could still grow,
// the model is held until enough rows arrive to fill it or its oldest queued request has
// waited the delay, whichever comes first, and never past min(deadline) - cost (so EDF
// deadlines still hold). A held model is skipped by the discipline; other models dispatch
// meanwhile. The loop waits on its condition variable until the earliest hold ends or a
// submit arrives (no polling).
//
// The scheduler knows nothing of models beyond ModelBatching and ModelPolicy: it calls
// RunFn to execute a batch, and reads time and waits for a hold's end only through
// SchedulerOptions::clock (tests inject a fake clock that they or RunFn advance). Inputs and
// outputs are in manifest order; shapes are checked by the caller (every input of a request has the
// same row count along its batch axis).
//
// Cancellation: a request submitted with a Cancellation (support/cancellation.h) whose flag
// is raised while it waits is taken off its queue, without running, when its model's next
// batch is formed, and answered Cancelled; a request whose flag is raised while its batch
// runs is answered Cancelled instead of with its outputs (the batch itself runs to the end
// for the other requests in it). ModelSchedStats::requests_cancelled counts the first kind.
//
// Committed requests (submitCommitted(): a meta model's sub-calls, reference-system.md §4.5):
// a request that a running request waits for goes ahead of what is queued. Its pieces enter
// the model's queue behind the committed pieces already there and ahead of every other
// piece, so committed requests keep their own arrival order and still coalesce with the
// requests queued behind them. Before the discipline scan, a loop runs the model whose
// queue starts with the oldest committed piece; such a model is never held by the
// coalescing wait, and under edf a committed piece is shed only once its deadline has
// passed (laxity margin 0).
//
// Errors delivered to DoneFn: NotFound (model unknown or removed while queued),
// ResourceExhausted (the model's queue holds max_queue_depth requests),
// DeadlineExceeded (the deadline passed, or under edf cannot be met, before execution),
// Cancelled (the client went away, above), Unavailable (shut down), and whatever RunFn
// returns. Thread safety: all methods may be
// called from any thread; DoneFn runs on the dispatch thread (or the caller's, for
// immediate errors and, with SchedulerOptions::inline_dispatch, for batches submit() runs
// itself), or with SchedulerOptions::answer_threads on those threads.
//
// Batches in flight (SchedulerOptions::max_batches_in_flight, N): N dispatch threads share
// the queues and each forms and runs the next batch as soon as fewer than N run, so one
// batch's upload, launch, read-back and answers overlap another's execution on the device
// (an asynchronous device: the GPU backend). Each batch is still formed, padded and run
// exactly as with N = 1, so a request's outputs do not depend on N; only which requests
// share a batch can differ, as it does with arrival times. Batches of one model may finish
// out of order; every request still gets exactly its own rows. A warmup runs alone (no
// batch in flight). With N > 1 a batch's compute time (RunFn's wall time) includes its
// wait for the batches ahead of it on the device.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "scheduler/batching.h"
#include "scheduler/clock.h"
#include "support/cancellation.h"
#include "support/run_profile.h"
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
  /// Zero inputs (manifest order) for a warmup run at a compiled size (0: the unbatched
  /// program). Under fair, every compiled size runs once on these when the model is added
  /// (before any request of it), seeding cost_estimate[B]; reference-system.md §3.4. An
  /// empty function, or an empty result for a size (e.g. variable dims), skips warmup.
  std::function<std::vector<Tensor>(int64_t batch_size)> warmup_inputs;
};

/// What one dispatch did (metrics: worker_dispatch_total, worker_rows_served_total, the
/// queue-wait, compute and batch-size histograms).
struct DispatchStats {
  std::string model;
  /// Compiled size that ran; 0 for an unbatched program.
  int64_t batch_size = 0;
  /// Real rows in the batch (the rest is padding); for an unbatched program, the number of
  /// requests.
  int64_t rows = 0;
  /// Wall time of RunFn, seconds.
  double compute_seconds = 0;
  /// Wall time before RunFn: SchedulerOptions::prepare_run and gathering the requests'
  /// rows into the batch's inputs (padding included), seconds.
  double input_seconds = 0;
  /// Wall time after RunFn: slicing each request's rows out of the outputs, seconds.
  double output_seconds = 0;
  /// Per request (or piece) in the batch: seconds from submit() to the dispatch's start.
  std::vector<double> queue_wait_seconds;
  /// RunFn's own stages (upload, execute, readback) where the backend reports them
  /// (support/run_profile.h; `filled` false: the backend does not, all of it is compute).
  RunProfile run_profile;
  /// RunFn succeeded.
  bool ok = true;
};

/// Observes every dispatch, on the dispatch thread, before the requests are answered.
using DispatchObserver = std::function<void(const DispatchStats &)>;

/// `scheduler.discipline`.
enum class Discipline : uint8_t { kFair, kFifo, kEdf };

/// Per-model scheduling policy (`scheduler.models.<name>`).
struct ModelPolicy {
  /// Relative share under fair; > 0.
  double weight = 1.0;
  /// Most rows per coalesced batch; 0 = uncapped (the largest compiled size). Caps rows
  /// only; never changes compiled shapes; a single request (piece) larger than the cap
  /// still runs alone.
  int64_t max_batch_size = 0;
};

/// Scheduling state of one model (the control plane's ModelStatus and metrics).
struct ModelSchedStats {
  double weight = 1.0;
  int64_t max_batch_size = 0;
  int64_t queue_depth = 0;
  /// Decayed recent compute seconds (fair), brought to now.
  double recent_compute_ema = 0;
  /// Learned cost per compiled batch size (0: unbatched), seconds.
  std::map<int64_t, double> cost_estimate;
  int64_t dispatch_count = 0;
  /// Warmup runs that failed (they only leave the cost unseeded).
  int64_t warmup_failures = 0;
  /// Requests (or pieces) and real rows that ran successfully.
  int64_t requests_served = 0;
  int64_t rows_served = 0;
  /// Requests (or pieces) dropped from the queue without running because their request
  /// was cancelled.
  int64_t requests_cancelled = 0;
  /// Requests (or pieces) in the queue now whose request has been cancelled (they are
  /// dropped when the model's next batch is formed).
  int64_t queued_cancelled = 0;
  /// Sum of measured compute seconds over every dispatch.
  double total_compute_seconds = 0;
};

struct SchedulerOptions {
  /// `scheduler.coalescing`: false serves exactly one request (or piece) per dispatch.
  bool coalescing = true;
  /// `runtime.batch_sizes`.
  BatchSizePolicy batch_sizes = BatchSizePolicy::kAll;
  /// `scheduler.max_queue_depth`: queued requests per model before ResourceExhausted.
  int64_t max_queue_depth = 1024;
  /// Called after each dispatch (may be empty), on the dispatching thread: before any answer
  /// of a batch answered on this thread alone, while the answer threads deliver theirs when
  /// a coalesced batch is shared among them.
  DispatchObserver on_dispatch;
  /// `scheduler.discipline`.
  Discipline discipline = Discipline::kFair;
  /// `scheduler.ema_halflife_seconds` (> 0): half-life of the fair recent-compute EMA.
  double ema_halflife_seconds = 30.0;
  /// `scheduler.recency_penalty_cap` (0, 1]: clamp of share - nema under fair.
  double recency_penalty_cap = 0.25;
  /// `scheduler.coalescing_discount` [0, 1): eff_cost = cost * (1 - discount).
  double coalescing_discount = 0.1;
  /// `scheduler.cost_ema_alpha` (0, 1]: weight of a new measurement in cost_estimate[B].
  double cost_ema_alpha = 0.2;
  /// Cost of a batch size never measured (fair priority, edf laxity margin), seconds.
  double default_cost_seconds = 0.01;
  /// `scheduler.max_queue_delay_microseconds` (>= 0): how long a coalescable model's
  /// partial batch may wait for more rows, measured from its oldest request's submit();
  /// 0 = dispatch at once (the reference).
  std::chrono::microseconds max_queue_delay_us{0};
  /// When the device is idle, submit() runs the next batch on the calling thread instead
  /// of waking the dispatch thread (one thread hop less per request). RunFn, DoneFn and
  /// the observers then also run on submitters' threads, so a caller must not hold a lock
  /// they take, and submit() may block for a batch's run. Needs start().
  bool inline_dispatch = false;
  /// Threads (besides the one that ran the batch) that deliver the answers of a batch of at
  /// least 8 requests in parallel: each DoneFn encodes and sends a reply, and one after
  /// another they delay the clients' next requests, which the next coalesced batch waits
  /// for. 0: every answer on the thread that ran the batch.
  int answer_threads = 0;
  /// `scheduler.max_batches_in_flight` (>= 1): batches that may run at once (see the file
  /// comment); 1 runs one batch at a time.
  int max_batches_in_flight = 1;
  /// Policies by model name, used by addModel() when it is given none.
  std::map<std::string, ModelPolicy> model_policies;
  /// Run warmups under fair (see ModelBatching::warmup_inputs).
  bool warmup = true;
  /// Time source for queue waits, deadlines, compute measurement and the EMA, and the
  /// timed wait for the end of a coalescing hold; null = SteadyClock. Deadlines passed to
  /// submit() are on this clock. It must outlive the scheduler.
  std::shared_ptr<SchedulerClock> clock;
  /// Called on the dispatch thread before each dispatch (and warmup) of `model`, outside
  /// the measured compute time (the weight cache makes the model's weights resident
  /// here; reference-system.md §3.3: load time is excluded from the cost EMA). An error
  /// fails the batch's requests with it. Empty: nothing.
  std::function<Status(const std::string &model)> prepare_run;
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

  /// Adds a model, or replaces an existing model's batching and policy keeping its queue,
  /// EMA and counters (a reload); cost estimates are cleared on replace, since the
  /// programs changed.
  /// `policy` unset: SchedulerOptions::model_policies[model], else the default policy.
  void addModel(const std::string &model, ModelBatching batching,
                std::optional<ModelPolicy> policy = std::nullopt);
  /// Removes a model; its queued requests fail with NotFound.
  void removeModel(const std::string &model);
  /// Renames a model in place: queue, policy, EMA, costs and counters move to `to`.
  /// Errors: NotFound if `from` is unknown; AlreadyExists if `to` is known.
  Status renameModel(const std::string &from, const std::string &to);
  /// Changes a model's fair weight (> 0). Errors: NotFound, InvalidArgument.
  Status setWeight(const std::string &model, double weight);
  /// Folds one measured (or warmup) execution of `batch_size` taking `seconds` into the
  /// model's cost estimate, as a dispatch would (the first value sets it). Unknown model:
  /// ignored.
  void recordCost(const std::string &model, int64_t batch_size, double seconds);
  /// The model's scheduling state; nullopt for an unknown model.
  std::optional<ModelSchedStats> stats(const std::string &model) const;

  /// Queues a request. `inputs` are in manifest order with equal row counts along their
  /// batch axes. `done` is called exactly once. `cancel` (may be null): the request's flag;
  /// raised before the request runs, the request is dropped and answered Cancelled.
  void submit(const std::string &model, std::vector<Tensor> inputs,
              std::optional<Clock::time_point> deadline, DoneFn done,
              CancellationPtr cancel = nullptr);
  /// submit() of a committed request (see the file comment): queued ahead of every piece
  /// that is not committed, dispatched before the discipline picks. Same errors.
  void submitCommitted(const std::string &model, std::vector<Tensor> inputs,
                       std::optional<Clock::time_point> deadline, DoneFn done,
                       CancellationPtr cancel = nullptr);

  /// Starts the dispatch threads, one per batch in flight (idempotent).
  void start();
  /// Finishes the running dispatches, fails queued requests with Unavailable and joins the
  /// threads (idempotent).
  void stop();

  /// Requests queued for `model` (0 for an unknown model).
  int64_t queueDepth(const std::string &model) const;

private:
  /// A request as submitted: its inputs, its pieces' outputs as they finish, its DoneFn.
  struct SplitRequest;
  /// One piece of a request (the whole request unless it was split) waiting in a queue.
  struct QueuedPiece {
    std::shared_ptr<SplitRequest> request;
    size_t piece = 0;
    RowRange rows;
    bool coalescable = true;
    std::optional<Clock::time_point> deadline;
    uint64_t seq = 0;
    Clock::time_point enqueued;
    bool committed = false; // submitCommitted(): ahead of the pieces that are not
  };
  /// What submit() and submitCommitted() queue: one request of a model.
  struct Submission {
    std::vector<Tensor> inputs;
    std::optional<Clock::time_point> deadline;
    DoneFn done;
    CancellationPtr cancel;
    bool committed = false;
  };
  struct ModelState {
    ModelBatching batching;
    ModelPolicy policy;
    std::deque<QueuedPiece> queue;
    double ema = 0;
    Clock::time_point ema_at{};
    std::map<int64_t, double> cost;
    bool warmup_pending = false;
    int64_t warmup_failures = 0;
    int64_t dispatch_count = 0;
    int64_t requests_served = 0;
    int64_t rows_served = 0;
    int64_t requests_cancelled = 0;
    double total_compute = 0;
    bool held = false; // the coalescing wait holds it this round (dispatch loop only)
    Clock::time_point last_finished{}; // when its last batch left the device (coalescing wait)
  };
  using ModelMap = std::map<std::string, ModelState>;

  /// Queues `request` for `model` (submit() and submitCommitted()).
  void enqueue(const std::string &model, Submission request);
  Clock::time_point now() const;
  void decayEma(ModelState &state, Clock::time_point now) const;
  /// The compiled size (0 when unbatched) the next batch of `state` would run at; the
  /// queue is non-empty.
  int64_t plannedBatchSize(const ModelState &state) const;
  double costOf(const ModelState &state, int64_t batch_size) const;
  /// Most rows one batch of the model may hold: its largest compiled batch size, capped by
  /// the policy's max_batch_size when set (0 when nothing is compiled).
  static int64_t rowCap(const ModelState &state);
  /// Whether the rows of `next` may join a batch led by `front`: every input has the same
  /// dims besides its batch axis.
  static bool sameShapes(const ModelBatching &batching, const QueuedPiece &front,
                         const QueuedPiece &next);
  /// When the coalescing wait holds `state` at `now`: the time its batch dispatches at the
  /// latest; nullopt when it is ready (no delay, full batch, or the hold has ended).
  std::optional<Clock::time_point> holdUntil(const ModelState &state, Clock::time_point now) const;
  void foldCost(ModelState &state, int64_t batch_size, double seconds) const;
  /// The model the discipline runs next among those with a queue and no hold; end() if none.
  ModelMap::iterator pick(Clock::time_point now);
  /// The model whose queue starts with the oldest committed piece; end() if none.
  ModelMap::iterator pickCommitted();
  ModelMap::iterator pickFifo();
  ModelMap::iterator pickEdf();
  ModelMap::iterator pickFair(Clock::time_point now);
  /// Whether another batch may start now: fewer than max_batches_in_flight run and no
  /// warmup runs.
  bool canDispatch() const;
  /// Runs one pending warmup, if any and nothing runs, with mu_ released meanwhile; returns
  /// whether it did.
  bool runPendingWarmup(std::unique_lock<std::mutex> &lock);
  void dispatchLoop();
  /// Forms and runs the next batch, if a model is ready, with mu_ released meanwhile and
  /// in_flight_ counting it; returns whether it ran (or expired) anything. `wake`: the earliest end
  /// of a coalescing hold, if any.
  bool dispatchOne(std::unique_lock<std::mutex> &lock, std::optional<Clock::time_point> *wake);
  /// Takes the next batch of `state` off its queue, and on the way the pieces whose deadline
  /// cannot be met at `now` into `expired` and those whose request was cancelled into
  /// `cancelled` (counted in the model's requests_cancelled).
  std::vector<QueuedPiece> takeBatch(ModelState &state, Clock::time_point now,
                                     std::vector<QueuedPiece> *expired,
                                     std::vector<QueuedPiece> *cancelled) const;
  /// Runs the batch and folds its compute time into the model's EMA, cost and counters.
  void execute(const std::string &model, const ModelBatching &batching,
               std::vector<QueuedPiece> batch);
  /// The batch's inputs at `batch_size` rows: the pieces' rows gathered and zero-padded, or
  /// a whole request's inputs untouched when it fills the batch exactly.
  static std::vector<Tensor> gatherInputs(const ModelBatching &batching,
                                          const std::vector<QueuedPiece> &batch,
                                          int64_t batch_size);
  /// Folds one dispatch's measured compute time and counts into the model's state.
  void account(const std::string &model, const DispatchStats &stats, Clock::time_point finished);
  /// Each piece's rows of every output, or the error every piece of the batch gets.
  static Result<std::vector<std::vector<Tensor>>>
  sliceOutputs(const std::string &model, const ModelBatching &batching,
               const std::vector<QueuedPiece> &batch, int64_t batch_size,
               Result<std::vector<Tensor>> outputs);
  /// Answers every piece of the batch, on this thread or (8 pieces or more, with answer
  /// threads) in contiguous shares over the answer threads, this thread taking the first;
  /// `observe` runs once the other shares are posted, before this thread's own share.
  void deliverAnswers(std::vector<QueuedPiece> batch, std::vector<std::vector<Tensor>> outputs,
                      const std::function<void()> &observe);
  /// Completes one piece; the request's DoneFn runs once its last piece is in, or at its
  /// first error. A request cancelled meanwhile gets Cancelled instead of its outputs.
  static void finishPiece(const QueuedPiece &piece, Result<std::vector<Tensor>> outputs);

  class AnswerPool;

  SchedulerOptions options_;
  std::shared_ptr<SchedulerClock> clock_; // options_.clock, or a SteadyClock
  std::unique_ptr<AnswerPool> answers_;   // null without answer_threads
  RunFn run_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  ModelMap models_;       // GUARDED_BY(mu_)
  uint64_t next_seq_ = 0; // GUARDED_BY(mu_)
  bool stopping_ = false; // GUARDED_BY(mu_)
  int in_flight_ = 0;     // GUARDED_BY(mu_): batches running (on any thread)
  bool warming_ = false;  // GUARDED_BY(mu_): a warmup runs
  std::vector<std::thread> threads_;
};

} // namespace rs::scheduler
