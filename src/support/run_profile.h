//===- support/run_profile.h - Where one backend run spends its time ------------===//
//
// The stages of one run of a compiled program, as the backend that runs it sees them, so
// that the scheduler can report them per dispatch (worker_request_stage_seconds, the
// per-stage breakdown of docs/metrics.md) without knowing the backend. The scheduler
// installs a RunProfile for the duration of its call into the backend (RunProfileScope);
// a backend that knows its stages fills the current one (currentRunProfile()), one that
// does not leaves it unfilled and the whole call counts as execute.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>

namespace rs {

/// Wall time of the stages of one run, in seconds, on the thread that runs it.
/// For the PJRT backend: `upload` copies the inputs into staging memory and enqueues their
/// transfers (not waited for), `execute` is the launch call plus the wait for the program's
/// completion, `readback` copies the results out of host memory (or, where the results
/// stay on the device, enqueues and waits for their transfers).
struct RunProfile {
  double upload_seconds = 0;
  double execute_seconds = 0;
  double readback_seconds = 0;
  /// Set by the backend when it filled the stages above.
  bool filled = false;
};

/// The profile of the run in progress on this thread, or nullptr when nobody asked for one.
RunProfile *currentRunProfile();

/// Makes `profile` this thread's current run profile until the scope ends (then the one
/// before it is current again). Not copyable; use on one thread.
class RunProfileScope {
public:
  explicit RunProfileScope(RunProfile *profile);
  ~RunProfileScope();
  RunProfileScope(const RunProfileScope &) = delete;
  RunProfileScope &operator=(const RunProfileScope &) = delete;

private:
  RunProfile *previous_;
};

/// Splits a run into stages: each mark(stage) adds the time since the previous mark (or
/// since construction) to that field of the current run profile and sets `filled`. Reads
/// no clock when no profile is current.
class StageClock {
public:
  StageClock();
  void mark(double RunProfile::*stage);

private:
  RunProfile *profile_;
  std::chrono::steady_clock::time_point last_;
};

} // namespace rs
