//===- runtime/pjrt_backend.h - XLA through a PJRT plugin as a Backend ----===//
//
// Adapts pjrt/ (a dlopened PJRT plugin: on the GPU machine XLA's CUDA plugin) to
// runtime::Backend (`runtime.backend: cuda`, alias `gpu`).
//
//   compile()   prints the module (after passes) in MLIR generic form (ir/printer.h) and
//               compiles it through PJRT with one replica, one partition and the
//               backend's XLA flags as per-compile overrides. The entry must be `main`.
//               With results_in_host_memory, main's results are placed in pinned host
//               memory first (runtime/host_results.h), so that a run writes its answer
//               straight into host memory.
//   execute()   uploads every argument (through pinned staging blocks), runs, reads every
//               result back (from where the program wrote it, or by a device-to-host copy).
//   upload() +  weights residency: upload() copies tensors to device memory once; the
//   executeWithResident()  executable then uploads only the inputs per run and passes
//               the resident buffers as the trailing arguments (no per-request weight
//               copy). Outputs are read back once per run.
//   serialize() / deserialize()  PJRT_Executable_Serialize / DeserializeAndLoad for the
//               executable cache (same plugin build and GPU model only; the cache key
//               should include DeviceInfo::backend_version, device_kind and xlaFlags()).
//   tf32Probe() the TF32 probe (pjrt/tf32_probe.h) with this backend's XLA flags.
//
// XLA flags: PjrtBackendOptions::xla_flags ("--name=value ...", DebugOptions field
// names: runtime.xla_flags, `--xla_gpu_autotune_level=0` for runtime.autotune: false,
// `--xla_gpu_per_fusion_autotune_cache_dir=...` for the autotune cache) reach every
// compile and every deserialize as env_option_overrides. The vendor profile's plugin flags
// (pjrt/vendor_profile.h; CUDA: `xla_gpu_cuda_data_dir` when `<site-packages>/nvidia/cu13`
// exists next to the plugin) are added where the flags do not set them. Process-level
// settings (XLA_FLAGS, the profile's f32Environment() under numerics f32) must be in the
// environment before createPjrtBackend() creates the client.
//
// Errors: createPjrtBackend(): InvalidArgument when no vendor profile has the name
// PjrtBackendOptions::vendor, NotFound when no plugin is found (message lists where it
// looked), FailedPrecondition for a library that is not a usable PJRT plugin, the
// plugin's errors for client creation (e.g. no GPU), InvalidArgument for malformed
// xla_flags. compile(): Unimplemented for an entry other than `main`, the plugin's
// errors (message carried through). execute*(): InvalidArgument when the arguments do
// not match main's signature (count, dtype, shape).
//
// Thread safety: as runtime::Backend; PJRT calls are thread-safe.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pjrt/client.h"
#include "pjrt/tf32_probe.h"
#include "runtime/backend.h"

#include <map>
#include <memory>
#include <string>

namespace rs::runtime {

struct PjrtBackendOptions {
  /// runtime.backend: the name of the GPU vendor profile (pjrt/vendor_profile.h) that finds
  /// the plugin and reads its device.
  std::string vendor = "cuda";
  /// runtime.pjrt_plugin: path of the plugin library; "" = discover (pjrt/plugin.h).
  std::string plugin_path;
  /// runtime.device_ordinal, runtime.mem_fraction, runtime.preallocate.
  pjrt::ClientOptions client;
  /// XLA flags for every compile, as in XLA_FLAGS: "--name=value" separated by spaces.
  std::string xla_flags;
  /// Add the vendor profile's plugin flags where xla_flags lacks them (see above).
  bool auto_plugin_flags = true;
  /// Compile main with its results in pinned host memory (see above).
  bool results_in_host_memory = true;
};

class PjrtBackend final : public Backend {
public:
  /// `vendor`: the client's plugin's profile (DeviceInfo::has_tf32 is its TF32 rule).
  /// `results_in_host_memory`: see PjrtBackendOptions; it is part of
  /// DeviceInfo::backend_version, so executable-cache keys tell the two program forms apart.
  PjrtBackend(std::shared_ptr<const pjrt::Client> client, const pjrt::VendorProfile &vendor,
              std::map<std::string, std::string> xla_flags, bool results_in_host_memory = true);

  Result<std::unique_ptr<Executable>> compile(const ir::Module &module,
                                              const CompileOptions &options) override;
  DeviceInfo deviceInfo() const override { return info_; }
  Result<std::shared_ptr<const ResidentTensors>> upload(std::span<const Tensor> tensors) override;
  Result<std::unique_ptr<Executable>> deserialize(std::string_view bytes,
                                                  const CompileOptions &options) override;

  /// Compiles MLIR text (or bytecode) directly; `signature`, when given, is main's
  /// function type used to check arguments (nullptr: the plugin checks them).
  Result<std::unique_ptr<Executable>> compileText(std::string_view program,
                                                  const ir::Type *signature) const;

  /// Runs the TF32 probe; `run_pinned` for numerics f32; `pinned_program` is the pinned
  /// leg's module text ("" = precision HIGHEST).
  Result<pjrt::Tf32ProbeResult> tf32Probe(bool run_pinned, std::string pinned_program = "") const;

  const pjrt::Client &client() const { return *client_; }
  /// The vendor profile of the client's plugin.
  const pjrt::VendorProfile &vendor() const { return *vendor_; }
  /// The per-compile XLA flags in effect, "--a=1 --b=true" in name order.
  std::string xlaFlags() const;
  /// The serialized CompileOptionsProto every compile sends.
  const std::string &compileOptions() const { return compile_options_; }

private:
  std::shared_ptr<const pjrt::Client> client_;
  const pjrt::VendorProfile *vendor_;
  std::map<std::string, std::string> xla_flags_;
  std::string compile_options_;
  bool results_in_host_memory_;
  DeviceInfo info_;
};

/// Loads the plugin, creates the client on the configured device and returns the
/// backend (errors: see the file comment).
Result<std::unique_ptr<PjrtBackend>> createPjrtBackend(const PjrtBackendOptions &options);

} // namespace rs::runtime
