//===- hooks/hook_pool.h - The hook processes of one model ------------------===//
//
// A HookPool serves one bundle's model.py hooks (docs/hooks.md) with
// `hooks.processes_per_model` hook processes (hooks/hook_process.h), each driven by a
// thread of the pool that takes the next queued call, so that N requests of the model
// run their hooks in parallel and no front-end or dispatch thread ever waits on Python.
//
// A process takes the next call and the calls of the same stage queued behind it (up to
// kMaxCallsPerFrame) in one frame: under load the per-call cost of the channel (a context
// switch each way) is paid once per frame, while the hook still runs once per call on that
// call's tensors. Once a frame's results are copied out, its thread sends the next frame
// (when calls wait) before it hands the results on, so the process runs the next frame's hooks
// while the server answers the last one's requests (a meta model's frames excepted: their
// sub-calls need the thread). A frame's time limit starts when a process takes it:
// `hooks.timeout_ms`, or the earliest request deadline of its calls when that comes first. A
// process that crashes, hangs past the limit or breaks the channel is killed, failing the calls of
// that frame (the one bad request, and under load the calls that waited with it); its thread starts
// another before it takes the next call, and the model's other processes and every other model go
// on. A call whose request deadline passes while it waits in the queue fails with DeadlineExceeded
// without running.
//
// With `hooks.max_memory_mb`, a process's resident memory is read (/proc/<pid>/statm) after
// every frame it answers, before it is sent the next: a process above the limit is killed
// once that frame's results are handed on (they are complete) and restarted before the next
// call, like a crashed one. So no call is lost to the limit, and a hook that leaks a little
// each call costs a restart, not the machine's memory.
//

//
// As a runtime::ModelExtension the pool states its identity: SHA-256 over the hook
// environment (interpreter implementation and version, every installed package and its
// version, as the runner reports them, and hooks.python_path and hooks.allowed_packages
// when set) and the bundle files the hooks may read (model.py and every other file of the
// bundle that is not a program, the weights, the manifest or hidden).
//
// Thread safety: run() and runNow() may be called from any thread; the destructor stops
// the threads (queued calls fail with Unavailable) and kills the processes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hooks/hook_process.h"
#include "runtime/model_extension.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace rs::hooks {

/// The `hooks.*` settings of a worker.
struct HookOptions {
  std::string python;                        // hooks.python, resolved (hooks/hook_paths.h)
  std::string runner;                        // runner.py (hooks/hook_paths.h)
  int64_t processes = 1;                     // hooks.processes_per_model
  std::chrono::milliseconds timeout{10000};  // hooks.timeout_ms
  int64_t max_memory_mb = 2048;              // hooks.max_memory_mb; 0 = no limit
  std::vector<std::string> python_path;      // hooks.python_path
  std::vector<std::string> allowed_packages; // hooks.allowed_packages; empty = any
  std::chrono::milliseconds start_timeout{60000};
};

class HookPool final : public runtime::ModelExtension {
public:
  /// The most queued calls one frame to a process carries.
  static constexpr size_t kMaxCallsPerFrame = 16;
  using Tensors = std::vector<protocol::NamedTensor>;
  using Done = std::function<void(Result<Tensors>)>;

  /// Starts the processes of model `name` (bundle `dir`). Errors: those of
  /// HookProcess::start, naming model.py.
  static Result<std::shared_ptr<HookPool>> start(const std::string &name, const std::string &dir,
                                                 const HookOptions &options);
  ~HookPool() override;

  const HookHello &hello() const { return hello_; }
  /// hooks.timeout_ms: the longest one call may run.
  std::chrono::milliseconds timeout() const { return state_->options.timeout; }
  /// True when model.py registered a hook for `stage`.
  bool has(HookStage stage) const {
    return stage == HookStage::kPreprocess    ? hello_.preprocess
           : stage == HookStage::kPostprocess ? hello_.postprocess
                                              : hello_.meta;
  }
  /// Serves a meta model's call(model, inputs) (runs on a pool thread; may block).
  using SubCall = std::function<Result<Tensors>(const std::string &model, Tensors inputs)>;

  /// Queues one call of `stage` on `inputs`; `done` runs on a pool thread with the hook's
  /// tensors or the error (hooks/hook_process.h).
  void run(HookStage stage, Tensors inputs, std::optional<Clock::time_point> deadline, Done done,
           SubCall sub = nullptr) const;
  /// run() without a deadline, and wait for it; `sub` serves a meta model's calls.
  Result<Tensors> runNow(HookStage stage, Tensors inputs, SubCall sub = nullptr) const;

  std::string describe() const override;
  std::string identity() const override { return identity_; }
  std::map<std::string, std::string> files() const override { return files_; }
  runtime::ExtensionEnvironment environment() const override {
    return {hello_.implementation + " " + hello_.python_version, hello_.packages,
            state_->options.python_path, state_->options.allowed_packages};
  }

private:
  struct Job {
    HookStage stage;
    Tensors inputs;
    std::optional<Clock::time_point> deadline;
    Done done;
    SubCall sub;
  };
  /// What the threads share; each thread holds it, so that a thread on which the pool's
  /// last owner lets go (a call's `done` dropping the model) outlives the pool safely.
  struct State {
    std::string name;
    HookProcessOptions process_options;
    HookOptions options;
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Job> queue; // GUARDED_BY(mu)
    bool stopping = false; // GUARDED_BY(mu)
  };
  /// The calls of one frame, with the limit that applies to them from when they were taken.
  struct Batch {
    HookStage stage = HookStage::kPreprocess;
    std::vector<Job> jobs;
    Clock::time_point limit;
    std::string limit_text;
    bool sent = false; // already sent to the process (behind the frame before)
    Status send_status;
  };
  HookPool() = default;
  /// The next call and the calls of its stage queued behind it, those whose deadline has passed
  /// answered; waits for one when `wait`, else returns an empty batch. Empty also when stopping.
  static Batch take(State &state, bool wait);
  /// "" while `process` is within hooks.max_memory_mb (or there is no limit), else the
  /// reason it is restarted: "hook process of model 'm' used 2100 MiB, above
  /// hooks.max_memory_mb 2048: restarted".
  static std::string overMemoryLimit(const State &state, const HookProcess &process);
  static void serve(const std::shared_ptr<State> &state, std::unique_ptr<HookProcess> process);

  std::shared_ptr<State> state_ = std::make_shared<State>();
  HookHello hello_;
  std::string identity_;
  std::map<std::string, std::string> files_;
  std::vector<std::thread> threads_;
};

} // namespace rs::hooks
