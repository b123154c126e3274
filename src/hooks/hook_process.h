//===- hooks/hook_process.h - One supervised Python hook process ------------===//
//
// A HookProcess is one Python interpreter running python/reactant_hooks/runner.py on one
// bundle's model.py (docs/hooks.md, "Process model"): started with fork + exec, its stdout
// and stderr joined to the server's stderr, a unix socket on fd 3 as its only channel
// (hooks/hook_frames.h) and a shared segment for the tensors, passed over it with the first
// call and replaced by a larger one when a frame does not fit (hooks/hook_segment.h,
// hooks/hook_binary.h), SIGKILL sent to it if the thread that started it dies. start()
// waits for the runner's hello: which hooks model.py registered, and the interpreter's
// version and installed packages (the hook environment).
//
// call() runs one hook on one request's tensors and waits for the answer until the
// deadline. Errors, each naming the stage ("preprocess", "postprocess"):
//   - the hook raised: InvalidArgument for preprocess (the request was not what the hook
//     accepts), Internal for postprocess, with the exception's last line
//     ("preprocess raised ValueError: expected 64 pixels");
//   - the hook returned something the server cannot carry (not a dict of arrays, a numpy
//     dtype without a KServe datatype): Internal;
//   - the process died (a crash: "killed by signal 11 (SIGSEGV)", or an exit): Internal;
//   - no answer by the deadline: DeadlineExceeded; the process is killed (SIGKILL).
// After a death, a timeout or a broken frame alive() is false: the owner starts another.
//
// Thread safety: one thread at a time calls call(); the destructor kills the process.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hooks/hook_frames.h"
#include "hooks/hook_segment.h"

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rs::hooks {

enum class HookStage : uint8_t {
  kPreprocess,
  kPostprocess,
  kRun, // a meta model's run(inputs, call)
};

/// "preprocess" / "postprocess" / "run".
std::string_view stageName(HookStage stage);

/// How to start a hook process.
struct HookProcessOptions {
  std::string python;     // the interpreter (hooks.python)
  std::string runner;     // runner.py (hooks/hook_paths.h)
  std::string bundle_dir; // holds model.py
  /// hooks.python_path: directories put on sys.path after the bundle directory.
  std::vector<std::string> python_path;
  /// hooks.allowed_packages: the top-level modules beside the standard library that the
  /// bundle's code may import; empty = any (docs/hooks.md, "Environment").
  std::vector<std::string> allowed_packages;
  /// How long start() waits for the runner to import model.py and say hello.
  std::chrono::milliseconds start_timeout{60000};
};

/// What the runner reported once model.py was imported.
struct HookHello {
  std::string registered_name; // register_model's name (informational)
  bool preprocess = false;
  bool postprocess = false;
  bool meta = false;                 // register_meta_model: a run hook
  std::string python_version;        // "3.11.7"
  std::string implementation;        // "cpython"
  std::vector<std::string> packages; // "numpy==2.4.6", sorted
};

class HookProcess {
public:
  /// Starts the interpreter and waits for its hello. Errors: Internal when it cannot be
  /// started, FailedPrecondition with the exception's last line when model.py fails to
  /// import or does not call register_model, DeadlineExceeded after start_timeout.
  static Result<std::unique_ptr<HookProcess>> start(const HookProcessOptions &options);
  ~HookProcess();
  HookProcess(const HookProcess &) = delete;
  HookProcess &operator=(const HookProcess &) = delete;

  const HookHello &hello() const { return hello_; }
  pid_t pid() const { return pid_; }
  bool alive() const { return alive_; }
  /// The process's resident memory in bytes (/proc/<pid>/statm), or -1 when it cannot be
  /// read (the process is gone).
  int64_t residentBytes() const;
  /// Kills the process (SIGKILL) and reaps it; alive() is false after. The owner starts
  /// another before the next call.
  void kill();

  using Tensors = std::vector<protocol::NamedTensor>;
  /// Serves a meta model's call(model, inputs) made by call `index` of a frame.
  using SubCall =
      std::function<Result<Tensors>(size_t index, const std::string &model, Tensors inputs)>;

  /// Runs `stage` once per entry of `calls`, all sent in one frame, and returns one result
  /// per call (a hook that raised or returned something unusable fails its call only). The
  /// outer error (a death, the deadline, a broken frame: see the file comment) is every
  /// call's. `limit_text` says where the deadline came from, for the timeout message
  /// ("hooks.timeout_ms 2000"). A meta model's sub-calls (frames with op "call" before the
  /// answer) are served by `sub` (an error when it is null); their time counts against the
  /// deadline. send() then receive().
  Result<std::vector<Result<Tensors>>> call(HookStage stage,
                                            const std::vector<const Tensors *> &calls,
                                            Clock::time_point deadline, std::string_view limit_text,
                                            const SubCall &sub = nullptr);

  /// The first half of call(): copies the tensors of `calls` into the segment and sends the
  /// frame. The owner may send the next frame as soon as receive() has returned the one
  /// before, before it hands those results on. Errors: Internal when the process died (it is
  /// reaped) or the segment cannot be made, Unavailable when it is not running.
  Status send(HookStage stage, const std::vector<const Tensors *> &calls);

  /// The second half of call(): waits for the answer to the frame send() sent with `calls`
  /// calls; the results are copied out of the segment when it returns.
  Result<std::vector<Result<Tensors>>> receive(HookStage stage, size_t calls,
                                               Clock::time_point deadline,
                                               std::string_view limit_text,
                                               const SubCall &sub = nullptr);

private:
  HookProcess() = default;
  /// Reaps the process that closed its socket; "killed by signal 11 (SIGSEGV)" or
  /// "exited with status 1".
  std::string reap();

  /// The segment for the next frame: the current one, or a larger one (sent with the
  /// frame) when `request_bytes` or the largest reply seen do not fit it.
  Result<uint8_t> prepareSegment(uint64_t request_bytes);

  pid_t pid_ = -1;
  UniqueFd sock_;
  UniqueFd statm_; // /proc/<pid>/statm, opened once: residentBytes() rereads it from the start
  HookSegment segment_;
  uint64_t reply_hint_ = 0; // the largest results a frame has needed
  bool alive_ = false;
  HookHello hello_;
};

} // namespace rs::hooks
