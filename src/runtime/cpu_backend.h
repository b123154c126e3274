//===- runtime/cpu_backend.h - The built-in CPU executor as a Backend -------===//
//
// Adapts cpu::Program (src/cpu/) to runtime::Backend. The executor's thread pool has
// `num_threads` threads (`runtime.cpu_threads`; 0 = every core). Results are bit-identical
// whatever the thread count (cpu/ partitions work by shape only).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/backend.h"

#include <memory>

namespace rs::runtime {

struct CpuBackendOptions {
  /// Threads of the executor's pool; 0 = hardware concurrency.
  int num_threads = 0;
};

/// Creates the CPU backend. Errors: InvalidArgument for a negative thread count.
Result<std::unique_ptr<Backend>> createCpuBackend(const CpuBackendOptions &options);

} // namespace rs::runtime
