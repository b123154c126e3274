//===- test/runtime/numerics_gate_test.cc - The TF32 gate and the pass options -===//
//
// The gate on the CPU executor (which computes f32 exactly, so the probe's DEFAULT leg says
// tf32_active=false and the pinned leg is exact), the pass options of a device, and the
// f32 environment of a vendor profile.
//
//===----------------------------------------------------------------------===//
#include "runtime/executable_cache.h"
#include "runtime/numerics_gate.h"

#include "common/temp_dir.h"
#include "runtime/cpu_backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace rs::runtime {
namespace {

using passes::NumericsMode;

std::unique_ptr<Backend> cpuBackend() {
  Result<std::unique_ptr<Backend>> backend = createCpuBackend({.num_threads = 2});
  EXPECT_TRUE(backend.isOk()) << backend.status().toString();
  return std::move(backend).value();
}

TEST(NumericsGate, PassOptionsFollowTheDevicesTf32) {
  DeviceInfo device;
  device.platform = "cuda";
  device.compute_capability = "9.0";
  device.has_tf32 = true;
  passes::NumericsOptions o = numericsOptionsFor(NumericsMode::kAuto, device);
  EXPECT_EQ(o.mode, NumericsMode::kAuto);
  EXPECT_TRUE(o.target_has_tf32);
  device.has_tf32 = false;
  o = numericsOptionsFor(NumericsMode::kF32, device);
  EXPECT_EQ(o.mode, NumericsMode::kF32);
  EXPECT_FALSE(o.target_has_tf32);
}

TEST(NumericsGate, CpuExecutorComputesTheProbeInF32) {
  std::unique_ptr<Backend> backend = cpuBackend();
  Tf32GateOptions options;
  options.mode = NumericsMode::kF32;
  options.executable_cache = false;
  Result<Tf32Facts> facts = runTf32Gate(*backend, options);
  ASSERT_TRUE(facts.isOk()) << facts.status().toString();
  const Tf32Facts want = {{"numerics", "f32"}, {"tf32_active", "false"}, {"pinned_exact", "true"}};
  EXPECT_EQ(*facts, want);

  options.mode = NumericsMode::kAuto;
  facts = runTf32Gate(*backend, options);
  ASSERT_TRUE(facts.isOk()) << facts.status().toString();
  const Tf32Facts auto_want = {
      {"numerics", "auto"}, {"tf32_active", "false"}, {"pinned_exact", "skipped"}};
  EXPECT_EQ(*facts, auto_want);
}

TEST(NumericsGate, Tf32WithoutTf32FailsTheStart) {
  std::unique_ptr<Backend> backend = cpuBackend();
  Tf32GateOptions options;
  options.mode = NumericsMode::kTf32;
  options.executable_cache = false;
  Result<Tf32Facts> facts = runTf32Gate(*backend, options);
  ASSERT_FALSE(facts.isOk());
  EXPECT_EQ(facts.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(facts.status().message(), "TF32 probe: numerics tf32 but the device does not compute "
                                      "in TF32 (tf32_active expected true, got false)");
}

TEST(NumericsGate, ProbeProgramsGoThroughTheExecutableCache) {
  rs::testing::TempDir dir;
  std::unique_ptr<Backend> backend = cpuBackend();
  Tf32GateOptions options;
  options.mode = NumericsMode::kF32;
  options.probe_cache_dir = repositoryCacheDir(dir.str(), "");
  options.compile_settings = "xla_flags=[] autotune=true";
  options.server_build = "test";
  ASSERT_TRUE(runTf32Gate(*backend, options).isOk());
  // One entry per leg, named after it: <dir>/.cache/tf32_probe.<leg>-<key>.rsexe.
  std::vector<std::string> entries;
  for (const auto &e : std::filesystem::directory_iterator(dir.path() / ".cache"))
    entries.push_back(
        e.path().filename().string().substr(0, e.path().filename().string().find('-')));
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(entries, (std::vector<std::string>{"tf32_probe.default", "tf32_probe.pinned"}));
  // A second start loads both legs from those entries and reaches the same verdict.
  Result<Tf32Facts> again = runTf32Gate(*backend, options);
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  const Tf32Facts want = {{"numerics", "f32"}, {"tf32_active", "false"}, {"pinned_exact", "true"}};
  EXPECT_EQ(*again, want);
}

TEST(NumericsGate, CpuFactsSayNotApplicable) {
  const Tf32Facts want = {{"numerics", "auto"},
                          {"tf32_active", "not applicable (cpu backend computes f32 exactly)"},
                          {"pinned_exact", "not applicable"}};
  EXPECT_EQ(cpuTf32Facts(NumericsMode::kAuto), want);
}

TEST(NumericsGate, F32ExportsTheVendorsEnvironment) {
  const pjrt::VendorProfile *cuda = pjrt::findVendorProfile("cuda");
  ASSERT_NE(cuda, nullptr);
  ::unsetenv("NVIDIA_TF32_OVERRIDE");
  ASSERT_TRUE(exportF32Environment(*cuda, NumericsMode::kAuto).isOk());
  EXPECT_EQ(std::getenv("NVIDIA_TF32_OVERRIDE"), nullptr);
  ASSERT_TRUE(exportF32Environment(*cuda, NumericsMode::kF32).isOk());
  ASSERT_NE(std::getenv("NVIDIA_TF32_OVERRIDE"), nullptr);
  EXPECT_STREQ(std::getenv("NVIDIA_TF32_OVERRIDE"), "0");
  ::unsetenv("NVIDIA_TF32_OVERRIDE");
}

} // namespace
} // namespace rs::runtime
