//===- pjrt/cuda_profile.h - The CUDA vendor profile's parsers ----------------===//
//
// The parts of the CUDA profile (pjrt/cuda_profile.cc, registered as `runtime.backend:
// cuda`) that read paths and text, declared for their tests; everything else reaches the
// profile through findVendorProfile("cuda") (pjrt/vendor_profile.h).
//
// Thread safety: free functions; cudaDataDirForPlugin stats the file system.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>

namespace rs::pjrt {

/// `<site-packages>/nvidia/cu13` for a plugin at
/// `<site-packages>/jax_plugins/xla_cuda13/xla_cuda_plugin.so` (the directory with
/// bin/ptxas and nvvm/libdevice that XLA's --xla_gpu_cuda_data_dir wants), or "" when
/// that directory has neither bin/ptxas nor nvvm/libdevice.
std::string cudaDataDirForPlugin(const std::string &plugin_path);

/// The driver version in the text of /proc/driver/nvidia/version ("NVRM version: NVIDIA
/// UNIX x86_64 Kernel Module  550.54.15  Tue Mar 5 ..." gives "550.54.15"); "" if absent.
std::string parseNvidiaDriverVersion(std::string_view proc_text);

/// The CUDA TF32 rule: compute capability "major.minor" with major >= 8 (Ampere and
/// newer); anything else, an unparsable capability included, is false.
bool cudaCapabilityHasTf32(std::string_view compute_capability);

} // namespace rs::pjrt
