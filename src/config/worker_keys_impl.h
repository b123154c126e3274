//===- config/worker_keys_impl.h - Private: a worker's key sections -------===//
//
// The worker's key table (workerKeys(), built in worker_keys.cc) joins its rows from the
// files that hold them: worker_runtime_keys.cc (runtime.*) and worker_scheduler_keys.cc
// (scheduler.*, with the per-model rows), worker_hooks_keys.cc (hooks.*); the top level, endpoints,
// grpc and tls rows are in worker_keys.cc. Not part of the public API.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "config/keys.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace rs::config::detail {

inline constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

/// The runtime.* rows of a worker's key table, in the order they are read and documented.
std::vector<Key<WorkerConfig>> runtimeKeyRows();

/// The scheduler.* rows of a worker's key table (scheduler.models with its per-model
/// table), in the order they are read and documented.
std::vector<Key<WorkerConfig>> schedulerKeyRows();

/// The hooks.* rows (worker_hooks_keys.cc), in the order they are read and documented.
std::vector<Key<WorkerConfig>> hookKeyRows();

} // namespace rs::config::detail
