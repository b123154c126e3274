//===- runtime/numerics_gate.h - runtime.numerics at start-up: probe and pass options -===//
//
// The numerics policy around the pass (DESIGN.md "Numerics", reference-system.md section
// 3.2, seed/reproducibility.md "Startup evidence"), backend-agnostic:
//
//   numericsOptionsFor()      the pass options of a device: the mode and the device's TF32
//                             (DeviceInfo::has_tf32, the vendor profile's TF32 rule).
//   exportF32Environment()    under numerics f32, the vendor profile's variables
//                             (NVIDIA_TF32_OVERRIDE=0 for CUDA), before any client exists.
//   runTf32Gate()             the TF32 probe (pjrt/tf32_probe.h) on a GPU backend, its
//                             programs compiled through the executable cache like every
//                             served program, and the start-up gate on its verdict; logs
//                             the `TF32 probe` line.
//   cpuTf32Facts()            the same line and facts for the CPU executor (f32 exactly).
//
// Errors: runTf32Gate(): FailedPrecondition under f32 unless the pinned product is
// bit-exact, under tf32 unless the probe shows TF32 in use; the pinned leg's compile or
// run errors. A failed DEFAULT leg only warns. exportF32Environment(): Internal when
// setenv fails.
//
// Thread safety: runTf32Gate() uses the backend concurrently with model loads (Backend is
// thread-safe); exportF32Environment() changes the process environment and must run before
// other threads read it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/numerics.h"
#include "pjrt/vendor_profile.h"
#include "runtime/backend.h"
#include "support/status.h"

#include <string>
#include <utility>
#include <vector>

namespace rs::runtime {

/// The `TF32 probe` line's fields in order: numerics, tf32_active, pinned_exact.
using Tf32Facts = std::vector<std::pair<std::string, std::string>>;

/// Where and how the probe's programs are compiled: as the repository compiles programs.
struct Tf32GateOptions {
  passes::NumericsMode mode = passes::NumericsMode::kAuto;
  /// The directory of the probe's cache entries (repositoryCacheDir of the first model
  /// directory and the worker's cache_dir, runtime/executable_cache.h); "" = no cache.
  std::string probe_cache_dir;
  /// runtime.executable_cache.
  bool executable_cache = true;
  /// ModelRepositoryOptions::compile_settings and server_build: the rest of the cache key.
  std::string compile_settings;
  std::string server_build;
  /// runtime.executable_cache_key_file's bytes: the HMAC key of the probe's cache entries,
  /// as of every served program's ("" = entries carry a content hash only).
  std::string executable_cache_key;
};

/// The numerics pass's options for programs compiled for `device`.
passes::NumericsOptions numericsOptionsFor(passes::NumericsMode mode, const DeviceInfo &device);

/// Under mode f32, exports `vendor`'s f32Environment() (overwriting); nothing otherwise.
Status exportF32Environment(const pjrt::VendorProfile &vendor, passes::NumericsMode mode);

/// Runs the TF32 probe on `backend` and applies the gate (see the file comment). Returns
/// the facts of the `TF32 probe` line.
Result<Tf32Facts> runTf32Gate(Backend &backend, const Tf32GateOptions &options);

/// Logs the `TF32 probe` line of the CPU executor and returns its facts (tf32_active and
/// pinned_exact not applicable).
Tf32Facts cpuTf32Facts(passes::NumericsMode mode);

} // namespace rs::runtime
