//===- node/gpu_detect.h - Which GPUs a node has -----------------------------===//
//
// detect_gpus of the reference supervisor (reference-system.md section 9); the first
// source that answers wins:
//   1. REACTANT_GPUS: a count N (devices "0".."N-1"; 0 is a CPU node) or a comma list of
//      ordinals or UUIDs; set but empty is an error;
//   2. the node file's `gpus:` when it is a count or a list (not `auto`);
//   3. the vendor's visible-devices variable when set (CUDA_VISIBLE_DEVICES: a comma list;
//      a value that hides every device, such as empty or -1, gives no devices);
//   4. the vendor's device tool (CUDA: `nvidia-smi -L`, one "GPU <i>: ..." line per device);
//   5. the vendor driver's device files (CUDA: /dev/nvidia<N>).
// The vendor is a GPU vendor profile (pjrt/vendor_profile.h): the one the node's workers'
// runtime.backend names (gpuVendorOf). The result is the list of device selectors, each the
// value of one worker's visible-devices variable; empty means a CPU node.
//
// Errors: InvalidArgument naming the variable or key and the bad value, or a duplicate
// device. Thread safety: pure functions (the system probes read the machine).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "config/node_config.h"
#include "pjrt/vendor_profile.h"
#include "support/status.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rs::node {

/// The vendor of sources 3 to 5 and how the last two read the machine (tests pass their own).
struct GpuProbes {
  /// Whose visible-devices variable source 3 reads; nullptr = skip sources 3 to 5.
  const pjrt::VendorProfile *vendor = nullptr;
  /// Devices the vendor's tool lists; nullopt when the tool is missing or fails.
  std::function<std::optional<int>()> tool_count;
  /// Number of the vendor driver's device files.
  std::function<int()> device_file_count;
};

/// Probes of this machine for `vendor` (nullptr: none).
GpuProbes systemGpuProbes(const pjrt::VendorProfile *vendor);

/// The GPU vendor of a node: the profile of the first worker whose runtime.backend names one
/// (the `global:` block when there are no `workers:`), else the first registered profile, so
/// that a CPU node's GPUs are still counted for its advisories. nullptr only when no profile
/// is registered.
const pjrt::VendorProfile *gpuVendorOf(const config::NodeConfig &node);

/// Device selectors in order (rules above).
Result<std::vector<std::string>> detectGpus(const config::GpuSelection &gpus,
                                            const config::Environment &env,
                                            const GpuProbes &probes);

} // namespace rs::node
