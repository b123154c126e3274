//===- node/gpu_detect.h - Which GPUs a node has -----------------------------===//
//
// detect_gpus of the reference supervisor (reference-system.md section 9); the first
// source that answers wins:
//   1. REACTANT_GPUS: a count N (devices "0".."N-1"; 0 is a CPU node) or a comma list of
//      ordinals or UUIDs; set but empty is an error;
//   2. the node file's `gpus:` when it is a count or a list (not `auto`);
//   3. CUDA_VISIBLE_DEVICES when set (a comma list; set and empty: no devices);
//   4. `nvidia-smi -L` (one "GPU <i>: ..." line per device);
//   5. /dev/nvidia<N> device files.
// The result is the list of device selectors, each the value of one worker's
// CUDA_VISIBLE_DEVICES; empty means a CPU node.
//
// Errors: InvalidArgument naming the variable or key and the bad value, or a duplicate
// device. Thread safety: pure functions (the system probes read the machine).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "config/node_config.h"
#include "support/status.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rs::node {

/// How the last two sources read the machine (tests pass their own).
struct GpuProbes {
  /// Devices `nvidia-smi -L` lists; nullopt when nvidia-smi is missing or fails.
  std::function<std::optional<int>()> nvidia_smi_count;
  /// Number of /dev/nvidia<N> files.
  std::function<int()> dev_nvidia_count;
};

/// Probes of this machine.
GpuProbes systemGpuProbes();

/// Device selectors in order (rules above).
Result<std::vector<std::string>> detectGpus(const config::GpuSelection &gpus,
                                            const config::Environment &env,
                                            const GpuProbes &probes);

} // namespace rs::node
