//===- cpu/context.h - Thread pool of the CPU executor ---------------------===//
//
// A CpuContext owns the worker threads that the CPU executor's kernels share. Programs
// compiled against one context run their heavy kernels (GEMM tiles, large elementwise
// loops, reductions) on its pool; several programs and several concurrent run() calls may
// share one context.
//
// Determinism: parallelFor() hands out tiles whose boundaries the caller chose from the
// shape alone; which thread runs a tile never changes what the tile computes, so results
// are bit-identical for any num_threads (DESIGN.md "cpu/"). Every thread that computes
// runs in the default floating-point environment (DefaultFpEnvironment).
//
// Threads: a fixed team (context.cc Pool). Between kernels an idle worker spins for up to
// 50 us, then sleeps; so within one run a kernel starts on every thread in well under a
// microsecond, and an idle server does not burn its cores.
//
// Thread safety: all methods are const and safe to call from any thread; concurrent
// parallelFor() calls take turns (one kernel at a time on the team). A parallelFor() called
// from inside a pool task runs its tiles inline (no nested waiting, no deadlock).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

namespace rs::cpu {

struct CpuOptions {
  /// Worker threads, the calling thread included. 0 = std::thread::hardware_concurrency();
  /// 1 = everything runs on the calling thread (no pool).
  int num_threads = 0;
  /// The most bytes a program may plan for one buffer, and for the buffers of its entry
  /// function live at once; Program::compile() refuses a program over it
  /// (ResourceExhausted). 0 = the machine's physical memory, or the process's address-space
  /// or data limit (RLIMIT_AS, RLIMIT_DATA) when that is lower. Tests set it.
  int64_t memory_limit_bytes = 0;
};

/// A non-owning reference to a callable `void(int64_t)`, so parallelFor() needs no heap
/// allocation per call.
class TileFn {
public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, TileFn>>>
  TileFn(F &&f) // NOLINT: implicit on purpose, like std::function_ref
      : obj_(const_cast<void *>(static_cast<const void *>(&f))), call_([](void *o, int64_t tile) {
          (*static_cast<std::remove_reference_t<F> *>(o))(tile);
        }) {}
  void operator()(int64_t tile) const { call_(obj_, tile); }

private:
  void *obj_;
  void (*call_)(void *, int64_t);
};

class CpuContext {
public:
  ~CpuContext();
  CpuContext(const CpuContext &) = delete;
  CpuContext &operator=(const CpuContext &) = delete;

  /// Threads that run tiles, the calling thread included (>= 1).
  int numThreads() const { return num_threads_; }
  /// CpuOptions::memory_limit_bytes with 0 resolved (> 0).
  int64_t memoryLimitBytes() const { return memory_limit_bytes_; }

  /// Runs fn(t) for every t in [0, num_tiles) and returns when all have finished. Tiles
  /// run in any order on any thread (the caller's included); fn must only write memory
  /// that its tile owns.
  void parallelFor(int64_t num_tiles, TileFn fn) const;

private:
  friend Result<std::shared_ptr<CpuContext>> createCpuContext(const CpuOptions &options);
  struct Pool;
  CpuContext(int num_threads, int64_t memory_limit_bytes);

  int num_threads_ = 1;
  int64_t memory_limit_bytes_ = 0;
  std::unique_ptr<Pool> pool_; // null when num_threads_ == 1
};

/// Creates a context. InvalidArgument when num_threads is negative or above 1024, or
/// memory_limit_bytes is negative. The
/// pool threads start with the default floating-point environment (round to nearest, no
/// flush-to-zero), whatever the calling thread's.
Result<std::shared_ptr<CpuContext>> createCpuContext(const CpuOptions &options);

/// Sets the calling thread's floating-point environment to the default (round to nearest,
/// exceptions masked, no flush-to-zero / denormals-are-zero) for its lifetime and restores
/// the previous one after: results then do not depend on what another library in the
/// process did to the caller's FP state.
class DefaultFpEnvironment {
public:
  DefaultFpEnvironment();
  ~DefaultFpEnvironment();
  DefaultFpEnvironment(const DefaultFpEnvironment &) = delete;
  DefaultFpEnvironment &operator=(const DefaultFpEnvironment &) = delete;

private:
  alignas(16) unsigned char saved_[64]; // a std::fenv_t (size checked in context.cc)
};

} // namespace rs::cpu
