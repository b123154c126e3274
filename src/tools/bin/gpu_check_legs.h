//===- tools/bin/gpu_check_legs.h - reactant-gpu-check: one program's legs -===//
//
// The checks reactant-gpu-check runs on one (model, batch) with a GPU golden (the legs
// its file comment lists: auto, the timing breakdown, host weights, serialize round trip,
// f32), and the tally they count into. Each leg prints one line.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundle/bundle.h"
#include "runtime/pjrt_backend.h"

#include <chrono>
#include <string>

namespace rs::gpu_check {

using Clock = std::chrono::steady_clock;

/// Milliseconds since `t`.
double msSince(Clock::time_point t);

/// Passed and total checks.
struct Tally {
  int passed = 0;
  int total = 0;
  void add(bool ok) {
    ++total;
    passed += ok ? 1 : 0;
  }
};

/// Runs one (model, batch) of bundle `b`: every leg, each counted in `tally` (a leg that
/// cannot run counts as failed and ends the program's legs). `golden_dir` holds
/// b<N>.safetensors (the inputs), b<N>.gpu.safetensors and b<N>.gpu_highest.safetensors;
/// `runs` timed runs per leg.
void checkProgram(runtime::PjrtBackend &backend, const bundle::Bundle &b, int64_t batch,
                  const bundle::Program &program, const runtime::ResidentTensors &weights,
                  const std::string &golden_dir, int runs, Tally *tally);

} // namespace rs::gpu_check
