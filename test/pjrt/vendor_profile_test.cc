//===- test/pjrt/vendor_profile_test.cc - The GPU vendor profiles without a GPU -===//
//
// The registry, and the CUDA profile's parts that read no device: capability parsing,
// the visible-devices conventions, the TF32 rule, the plugin flags and the environment of
// numerics f32; the driver probe through a profile whose driver file the test writes.
//
//===----------------------------------------------------------------------===//
#include "common/temp_dir.h"
#include "pjrt/vendor_profile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace rs::pjrt {
namespace {

using rs::testing::TempDir;

const VendorProfile &cuda() {
  const VendorProfile *p = findVendorProfile("cuda");
  EXPECT_NE(p, nullptr);
  return *p;
}

TEST(VendorRegistry, CudaIsRegisteredByBackendAndPlatform) {
  ASSERT_EQ(vendorProfiles().size(), 1u);
  EXPECT_EQ(vendorProfiles()[0], &cuda());
  EXPECT_EQ(cuda().name(), "cuda");
  EXPECT_EQ(cuda().platform(), "cuda");
  EXPECT_EQ(vendorProfileForPlatform("cuda"), &cuda());
  EXPECT_EQ(findVendorProfile("cpu"), nullptr);
  EXPECT_EQ(findVendorProfile("rocm"), nullptr);
  EXPECT_EQ(vendorProfileForPlatform("cpu"), nullptr);
}

TEST(NumericsTarget, Tf32NeedsCudaAmpereOrNewer) {
  EXPECT_FALSE(deviceHasTf32("cpu", ""));
  EXPECT_FALSE(deviceHasTf32("cuda", "7.5"));
  EXPECT_FALSE(deviceHasTf32("cuda", "7"));
  EXPECT_TRUE(deviceHasTf32("cuda", "8.0"));
  EXPECT_TRUE(deviceHasTf32("cuda", "8.6"));
  EXPECT_TRUE(deviceHasTf32("cuda", "9.0"));
  EXPECT_TRUE(deviceHasTf32("cuda", "10.0"));
  EXPECT_FALSE(deviceHasTf32("cuda", ""));
  EXPECT_FALSE(deviceHasTf32("cuda", "x.0"));
  EXPECT_FALSE(deviceHasTf32("rocm", "9.0"));
}

TEST(CudaProfile, Tf32RuleOnCapabilities) {
  EXPECT_TRUE(cuda().hasTf32("8.0"));
  EXPECT_TRUE(cuda().hasTf32("12.1"));
  EXPECT_FALSE(cuda().hasTf32("7.0"));
  EXPECT_FALSE(cuda().hasTf32("-8.0"));
  EXPECT_FALSE(cuda().hasTf32(".0"));
  EXPECT_FALSE(cuda().hasTf32("gfx90a"));
}

TEST(CudaProfile, CapabilityFromStringOrListAttribute) {
  EXPECT_EQ(cuda().deviceCapability({{"compute_capability", std::string("9.0")}}), "9.0");
  EXPECT_EQ(cuda().deviceCapability(
                {{"core_count", int64_t{132}}, {"compute_capability", std::vector<int64_t>{8, 6}}}),
            "8.6");
  EXPECT_EQ(cuda().deviceCapability({}), "");
  EXPECT_EQ(cuda().deviceCapability({{"compute_capability", std::vector<int64_t>{9}}}), "");
  EXPECT_EQ(cuda().deviceCapability({{"compute_capability", int64_t{90}}}), "");
  EXPECT_EQ(cuda().deviceCapability({{"capability", std::string("9.0")}}), "");
}

TEST(CudaProfile, VisibleDevicesVariableAndHidingValues) {
  EXPECT_EQ(cuda().visibleDevicesVariable(), "CUDA_VISIBLE_DEVICES");
  for (const char *hidden : {"", "-1", "none", "NoDevFiles"})
    EXPECT_TRUE(cuda().hidesAllDevices(hidden)) << "'" << hidden << "'";
  for (const char *shown : {"0", "1,3", "GPU-aaaa", "None"})
    EXPECT_FALSE(cuda().hidesAllDevices(shown)) << "'" << shown << "'";
}

TEST(CudaProfile, PluginGlobAndDataDirFlag) {
  EXPECT_EQ(cuda().pluginGlob(), "jax_plugins/xla_cuda*/xla_cuda_plugin.so");
  TempDir site;
  const std::filesystem::path plugin = site.path() / "jax_plugins/xla_cuda13/xla_cuda_plugin.so";
  std::filesystem::create_directories(plugin.parent_path());
  std::ofstream(plugin) << "not a library\n";
  EXPECT_TRUE(cuda().pluginXlaFlags(plugin.string()).empty());
  std::filesystem::create_directories(site.path() / "nvidia/cu13/nvvm/libdevice");
  const std::map<std::string, std::string> want = {
      {"xla_gpu_cuda_data_dir", site.str() + "/nvidia/cu13"}};
  EXPECT_EQ(cuda().pluginXlaFlags(plugin.string()), want);
}

TEST(CudaProfile, F32EnvironmentTurnsTf32Off) {
  const std::vector<std::pair<std::string, std::string>> want = {{"NVIDIA_TF32_OVERRIDE", "0"}};
  EXPECT_EQ(cuda().f32Environment(), want);
  EXPECT_EQ(cuda().driverVersionFile(), "/proc/driver/nvidia/version");
  EXPECT_EQ(cuda().driverName(), "NVIDIA kernel module");
}

/// The CUDA profile with its driver file at a path the test chooses.
class DriverFileProfile final : public VendorProfile {
public:
  std::unique_ptr<CompletionPoller> completionPoller(const Plugin &, int,
                                                     std::string *why) const override {
    *why = "a test profile";
    return nullptr;
  }

  explicit DriverFileProfile(std::string file) : file_(std::move(file)) {}
  std::string_view name() const override { return "test"; }
  std::string_view platform() const override { return "test"; }
  std::string_view pluginGlob() const override { return cuda().pluginGlob(); }
  std::map<std::string, std::string> pluginXlaFlags(const std::string &path) const override {
    return cuda().pluginXlaFlags(path);
  }
  std::vector<std::pair<std::string, std::string>> f32Environment() const override {
    return cuda().f32Environment();
  }
  std::string_view visibleDevicesVariable() const override {
    return cuda().visibleDevicesVariable();
  }
  bool hidesAllDevices(std::string_view v) const override { return cuda().hidesAllDevices(v); }
  std::optional<int> countDevicesWithTool() const override { return std::nullopt; }
  int countDeviceFiles() const override { return 0; }
  std::string deviceCapability(const std::vector<NamedValue> &a) const override {
    return cuda().deviceCapability(a);
  }
  bool hasTf32(std::string_view c) const override { return cuda().hasTf32(c); }
  std::string_view driverName() const override { return cuda().driverName(); }
  std::string_view driverVersionFile() const override { return file_; }
  std::string parseDriverVersion(std::string_view text) const override {
    return cuda().parseDriverVersion(text);
  }

private:
  std::string file_;
};

TEST(DriverProbe, VersionFromTheDriverFileOrWhyUnknown) {
  TempDir dir;
  const std::string file = dir.str() + "/version";
  const DriverFileProfile profile(file);
  EXPECT_EQ(probeDriverVersion(profile),
            "unknown (no NVIDIA kernel module version in " + file + ")");
  std::ofstream(file) << "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 "
                         "22:23:56 UTC 2024\n";
  EXPECT_EQ(probeDriverVersion(profile), "550.54.15");
  std::ofstream(file) << "no version here\n";
  EXPECT_EQ(probeDriverVersion(profile),
            "unknown (no NVIDIA kernel module version in " + file + ")");
}

} // namespace
} // namespace rs::pjrt
