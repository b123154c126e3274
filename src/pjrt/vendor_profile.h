//===- pjrt/vendor_profile.h - What differs between GPU vendors' PJRT plugins -===//
//
// Everything the server knows about one GPU vendor's PJRT plugin and devices, in one record
// chosen by `runtime.backend` (DESIGN.md "Layers": CUDA today, ROCm and TPU plugins next):
//
//   plugin discovery    where the vendor's Python package puts its plugin under a
//                       site-packages directory, and the per-compile XLA flags the plugin
//                       needs to find its toolchain there;
//   environment         variables to export before the first client exists under
//                       numerics f32 (a vendor library reading a TF32 switch at start-up);
//   visible devices     the variable that restricts a process to some devices, the values
//                       of it that hide every device, and the machine probes that count
//                       devices when nothing names them (the node supervisor);
//   capability          the device's architecture from its PJRT device attributes;
//   TF32 rule           whether DEFAULT-precision f32 matmuls run in TF32 on a capability
//                       (the numerics pass's `target_has_tf32`);
//   completion          seeing a program finish on the calling thread (a CompletionPoller),
//                       where the vendor's driver allows it;
//   driver probe        the kernel driver's version, for the evidence document.
//
// Adding a vendor: one file `pjrt/<vendor>_profile.cc` with a class deriving from
// VendorProfile, and its registration in pjrt/vendor_profiles.cc (docs/contributing.md
// "Adding a PJRT plugin (vendor profile)").
//
// Errors: none; a probe that cannot read the machine answers "nothing found" (nullopt, 0,
// ""), and the caller decides. Thread safety: profiles are immutable singletons; every
// method may be called from any thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pjrt/completion_poller.h"
#include "pjrt/plugin.h"

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rs::pjrt {

/// One GPU vendor's plugin and device conventions (see the file comment).
class VendorProfile {
public:
  virtual ~VendorProfile() = default;

  //===--- Identity ------------------------------------------------------===//

  /// The `runtime.backend` value that selects this profile: "cuda".
  virtual std::string_view name() const = 0;
  /// The PJRT platform name the plugin's client reports: "cuda".
  virtual std::string_view platform() const = 0;

  //===--- Plugin discovery ----------------------------------------------===//

  /// glob(7) pattern of the plugin library relative to a site-packages directory:
  /// "jax_plugins/xla_cuda*/xla_cuda_plugin.so". The last match in sort order wins.
  virtual std::string_view pluginGlob() const = 0;
  /// Per-compile XLA flags (DebugOptions name -> value) that the plugin at `plugin_path`
  /// needs to find its toolchain; empty when it needs none or the toolchain is not there.
  virtual std::map<std::string, std::string>
  pluginXlaFlags(const std::string &plugin_path) const = 0;

  //===--- Process environment -------------------------------------------===//

  /// (variable, value) pairs to export before any client exists under numerics f32.
  virtual std::vector<std::pair<std::string, std::string>> f32Environment() const = 0;

  //===--- Visible devices -----------------------------------------------===//

  /// The variable that restricts a process to some devices: "CUDA_VISIBLE_DEVICES". Its
  /// value is a comma list of device selectors (ordinals or UUIDs).
  virtual std::string_view visibleDevicesVariable() const = 0;
  /// Whether `value` (trimmed) of that variable hides every device ("", "-1").
  virtual bool hidesAllDevices(std::string_view value) const = 0;
  /// Devices the vendor's tool lists on this machine; nullopt when the tool is missing or
  /// fails.
  virtual std::optional<int> countDevicesWithTool() const = 0;
  /// Device files of this machine's vendor driver (0 when none).
  virtual int countDeviceFiles() const = 0;

  //===--- Capability and numerics ---------------------------------------===//

  /// The device's architecture from its PJRT_DeviceDescription attributes, as the TF32
  /// rule and the executable-cache key take it ("9.0"); "" when the attributes lack it.
  virtual std::string deviceCapability(const std::vector<NamedValue> &attributes) const = 0;
  /// The TF32 rule: whether DEFAULT-precision f32 matmuls run in TF32 on a device of
  /// `capability`. An unparsable or empty capability is false (strip rather than risk a
  /// compile error).
  virtual bool hasTf32(std::string_view capability) const = 0;

  //===--- Completion ----------------------------------------------------===//

  /// A CompletionPoller (pjrt/completion_poller.h) for the device with local hardware id
  /// `local_hardware_id` of `plugin`'s client, or nullptr with `*why` set where the vendor
  /// has none or it cannot work on this machine (the client then waits on PJRT events).
  virtual std::unique_ptr<CompletionPoller>
  completionPoller(const Plugin &plugin, int local_hardware_id, std::string *why) const = 0;

  //===--- Driver probe --------------------------------------------------===//

  /// The kernel driver, as messages name it: "NVIDIA kernel module".
  virtual std::string_view driverName() const = 0;
  /// The file that names the kernel driver's version ("/proc/driver/nvidia/version").
  virtual std::string_view driverVersionFile() const = 0;
  /// The version in that file's text ("550.54.15"); "" when the text has none.
  virtual std::string parseDriverVersion(std::string_view text) const = 0;
};

/// Every registered profile, in registration order (pjrt/vendor_profiles.cc).
std::span<const VendorProfile *const> vendorProfiles();

/// The profile `runtime.backend` names ("cuda"), or nullptr (e.g. for "cpu").
const VendorProfile *findVendorProfile(std::string_view backend);

/// The profile whose plugin reports PJRT platform `platform`, or nullptr.
const VendorProfile *vendorProfileForPlatform(std::string_view platform);

/// Whether a device of `platform` and `capability` runs DEFAULT-precision f32 matmuls in
/// TF32: its vendor's TF32 rule; false for a platform without a profile (the CPU).
bool deviceHasTf32(std::string_view platform, std::string_view capability);

/// The driver version `profile` reports on this machine, or "unknown (no <driverName()>
/// version in <driverVersionFile()>)" when that file is missing or names no version.
std::string probeDriverVersion(const VendorProfile &profile);

} // namespace rs::pjrt
