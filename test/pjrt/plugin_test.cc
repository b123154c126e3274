//===- test/pjrt/plugin_test.cc - Plugin discovery, loading and error paths -===//
//
// Runs without a GPU: discovery over temporary directory trees, dlopen of libraries that
// are not PJRT plugins, and a fake plugin (fake_pjrt_plugin.cc) for the version check,
// create options and error propagation.
//
//===----------------------------------------------------------------------===//
#include "common/temp_dir.h"
#include "pjrt/client.h"
#include "pjrt/cuda_profile.h"
#include "pjrt/host_staging.h"
#include "pjrt/plugin.h"
#include "pjrt/vendor_profile.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace rs::pjrt {
namespace {

namespace fs = std::filesystem;

using rs::testing::TempDir;

/// The CUDA vendor profile's plugin glob (pjrt/vendor_profile.h).
std::string cudaGlob() { return std::string(findVendorProfile("cuda")->pluginGlob()); }

/// Creates <dir>/<rel> (and its parents), a file that is not a library; returns its path.
std::string touch(const TempDir &dir, const std::string &rel) {
  const fs::path p = dir.path() / rel;
  fs::create_directories(p.parent_path());
  std::ofstream(p) << "not a library\n";
  return p.string();
}

TEST(Discovery, ConfiguredPathMissingNamesPathAndKey) {
  PluginSearch search;
  search.configured_path = "/nonexistent/xla_cuda_plugin.so";
  search.env_path = "/also/missing.so";
  auto r = discoverPluginPath(search);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(),
            "pjrt plugin '/nonexistent/xla_cuda_plugin.so' (runtime.pjrt_plugin) does not exist");
}

TEST(Discovery, EnvPathMissingNamesVariable) {
  PluginSearch search;
  search.env_path = "/missing/plugin.so";
  auto r = discoverPluginPath(search);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(),
            "pjrt plugin '/missing/plugin.so' (PJRT_PLUGIN_LIBRARY_PATH) does not exist");
}

TEST(Discovery, NothingFoundListsSearchedDirectories) {
  TempDir a, b;
  PluginSearch search;
  search.site_dirs = {a.path(), b.path()};
  search.plugin_glob = cudaGlob();
  auto r = discoverPluginPath(search);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(),
            "no pjrt plugin found: set runtime.pjrt_plugin or PJRT_PLUGIN_LIBRARY_PATH; "
            "searched jax_plugins/xla_cuda*/xla_cuda_plugin.so under " +
                a.str() + ", " + b.str());
}

TEST(Discovery, FindsNewestCudaPluginInFirstSiteDirWithOne) {
  TempDir empty, site, later;
  touch(site, "jax_plugins/xla_cuda12/xla_cuda_plugin.so");
  const std::string cu13 = touch(site, "jax_plugins/xla_cuda13/xla_cuda_plugin.so");
  touch(later, "jax_plugins/xla_cuda14/xla_cuda_plugin.so");
  PluginSearch search;
  search.site_dirs = {empty.path(), site.path(), later.path()};
  search.plugin_glob = cudaGlob();
  auto r = discoverPluginPath(search);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(*r, cu13);
}

TEST(Discovery, ConfiguredPathWinsOverEnvAndSiteDirs) {
  TempDir site;
  const std::string configured = touch(site, "mine.so");
  const std::string env = touch(site, "env.so");
  touch(site, "jax_plugins/xla_cuda13/xla_cuda_plugin.so");
  PluginSearch search{configured, env, {site.path()}, cudaGlob()};
  EXPECT_EQ(*discoverPluginPath(search), configured);
  search.configured_path.clear();
  EXPECT_EQ(*discoverPluginPath(search), env);
}

TEST(Discovery, CudaDataDirNextToPlugin) {
  TempDir site;
  const std::string plugin = touch(site, "jax_plugins/xla_cuda13/xla_cuda_plugin.so");
  EXPECT_EQ(cudaDataDirForPlugin(plugin), "");
  fs::create_directories(fs::path(site.path()) / "nvidia/cu13");
  EXPECT_EQ(cudaDataDirForPlugin(plugin), ""); // no ptxas, no libdevice
  touch(site, "nvidia/cu13/bin/ptxas");
  EXPECT_EQ(cudaDataDirForPlugin(plugin), site.str() + "/nvidia/cu13");
  EXPECT_EQ(cudaDataDirForPlugin(touch(site, "other/libfoo.so")), "");
}

TEST(Load, MissingFileNamesPath) {
  auto r = Plugin::load("/nonexistent/dir/xla_cuda_plugin.so");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(),
            "pjrt plugin '/nonexistent/dir/xla_cuda_plugin.so' does not exist");
}

TEST(Load, SharedLibraryWithoutGetPjrtApiIsNotAPlugin) {
  // The path of the libm this process uses.
  void *cos_fn = ::dlsym(RTLD_DEFAULT, "cos");
  ASSERT_NE(cos_fn, nullptr);
  Dl_info info{};
  ASSERT_NE(::dladdr(cos_fn, &info), 0);
  const std::string libm = info.dli_fname;
  ASSERT_NE(libm.find("libm"), std::string::npos) << libm;
  auto r = Plugin::load(libm);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.status().message(),
            "'" + libm + "' is not a PJRT plugin: it does not export GetPjrtApi");
}

TEST(Load, FileThatIsNotALibraryReportsDlerror) {
  TempDir dir;
  const std::string path = touch(dir, "xla_cuda_plugin.so");
  auto r = Plugin::load(path);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.status().message().rfind("pjrt plugin '" + path + "' cannot be loaded: ", 0), 0u)
      << r.status().message();
}

/// The fake plugin and its control functions.
class FakePlugin : public ::testing::Test {
protected:
  void SetUp() override {
    handle_ = ::dlopen(RS_FAKE_PJRT_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << ::dlerror();
    configure_ =
        reinterpret_cast<void (*)(int, int, size_t)>(::dlsym(handle_, "FakePjrt_Configure"));
    live_errors_ = reinterpret_cast<int (*)()>(::dlsym(handle_, "FakePjrt_LiveErrors"));
    last_options_ =
        reinterpret_cast<const char *(*)()>(::dlsym(handle_, "FakePjrt_LastCreateOptions"));
    ASSERT_TRUE(configure_ && live_errors_ && last_options_);
  }
  void TearDown() override { ::dlclose(handle_); }

  void *handle_ = nullptr;
  void (*configure_)(int, int, size_t) = nullptr;
  int (*live_errors_)() = nullptr;
  const char *(*last_options_)() = nullptr;
};

TEST_F(FakePlugin, RejectsOtherMajorVersion) {
  configure_(1, 2, 1144);
  auto r = Plugin::load(RS_FAKE_PJRT_PLUGIN);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.status().message(), std::string("pjrt plugin '") + RS_FAKE_PJRT_PLUGIN +
                                      "' has PJRT C API version 1.2 with a 1144-byte function "
                                      "table; this server needs version 0.76 or a later 0.x "
                                      "with a table of at least 800 bytes");
}

TEST_F(FakePlugin, RejectsOldMinorAndShortTable) {
  configure_(0, 60, 1144);
  auto old_minor = Plugin::load(RS_FAKE_PJRT_PLUGIN);
  ASSERT_FALSE(old_minor.isOk());
  EXPECT_NE(old_minor.status().message().find("version 0.60 with a 1144-byte"), std::string::npos);
  configure_(0, 115, 792);
  auto short_table = Plugin::load(RS_FAKE_PJRT_PLUGIN);
  ASSERT_FALSE(short_table.isOk());
  EXPECT_NE(short_table.status().message().find("version 0.115 with a 792-byte"),
            std::string::npos);
}

TEST_F(FakePlugin, LoadsAndDecodesAttributes) {
  configure_(0, 115, 1144);
  auto r = Plugin::load(RS_FAKE_PJRT_PLUGIN);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  const Plugin &p = **r;
  EXPECT_EQ(p.apiVersion(), "0.115");
  ASSERT_EQ(p.attributes().size(), 2u);
  EXPECT_EQ(p.attributes()[0].toString(), "xla_version=2");
  EXPECT_EQ(p.attributes()[1].toString(), "stablehlo_current_version=[1,2,3]");
}

TEST_F(FakePlugin, ClientCreateErrorCarriesCodeAndMessageAndIsDestroyed) {
  configure_(0, 115, 1144);
  auto plugin = Plugin::load(RS_FAKE_PJRT_PLUGIN);
  ASSERT_TRUE(plugin.isOk());
  ClientOptions options;
  options.device_ordinal = 3;
  options.memory_fraction = 0.5;
  options.preallocate = false;
  auto client = Client::create(*plugin, options);
  ASSERT_FALSE(client.isOk());
  EXPECT_EQ(client.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(client.status().message(), "PJRT_Client_Create: fake plugin: no devices");
  EXPECT_EQ(std::string(last_options_()),
            "visible_devices=[3],memory_fraction=f0.5,preallocate=false");
  EXPECT_EQ(live_errors_(), 0);
}

TEST_F(FakePlugin, DefaultClientOptionsSendOnlyVisibleDevices) {
  configure_(0, 115, 1144);
  auto plugin = Plugin::load(RS_FAKE_PJRT_PLUGIN);
  ASSERT_TRUE(plugin.isOk());
  auto client = Client::create(*plugin, ClientOptions{});
  ASSERT_FALSE(client.isOk());
  EXPECT_EQ(std::string(last_options_()), "visible_devices=[0]");
  ClientOptions all;
  all.device_ordinal = -1;
  ASSERT_FALSE(Client::create(*plugin, all).isOk());
  EXPECT_EQ(std::string(last_options_()), "");
  EXPECT_EQ(live_errors_(), 0);
}

TEST_F(FakePlugin, MemoryFractionOutOfRangeIsRejectedBeforeCreate) {
  configure_(0, 115, 1144);
  auto plugin = Plugin::load(RS_FAKE_PJRT_PLUGIN);
  ASSERT_TRUE(plugin.isOk());
  ClientOptions options;
  options.memory_fraction = 1.5;
  auto client = Client::create(*plugin, options);
  ASSERT_FALSE(client.isOk());
  EXPECT_EQ(client.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(client.status().message(), "runtime.mem_fraction must be in (0, 1], got 1.5");
}

TEST_F(FakePlugin, MissingFunctionIsUnimplemented) {
  configure_(0, 115, 1144);
  auto plugin = Plugin::load(RS_FAKE_PJRT_PLUGIN);
  ASSERT_TRUE(plugin.isOk());
  capi::PJRT_Client_Destroy_Args args{};
  args.struct_size = sizeof args;
  Status st = (*plugin)->call(capi::Slot::kClientDestroy, &args, "destroying");
  EXPECT_EQ(st.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(st.message(), std::string("destroying: pjrt plugin '") + RS_FAKE_PJRT_PLUGIN +
                              "' does not implement PJRT_Client_Destroy");
}

TEST_F(FakePlugin, AwaitEventPollsIsReadyOnlyWithASpin) {
  configure_(0, 115, 1144);
  auto plugin = Plugin::load(RS_FAKE_PJRT_PLUGIN);
  ASSERT_TRUE(plugin.isOk());
  auto new_event =
      reinterpret_cast<capi::PJRT_Event *(*)(int)>(::dlsym(handle_, "FakePjrt_NewEvent"));
  auto event_calls =
      reinterpret_cast<void (*)(int *, int *, int *)>(::dlsym(handle_, "FakePjrt_EventCalls"));
  ASSERT_TRUE(new_event && event_calls);
  int is_ready = 0, await = 0, live = 0;
  auto calls = [&] {
    event_calls(&is_ready, &await, &live);
    return std::vector<int>{is_ready, await, live};
  };
  using std::chrono::microseconds;
  // No spin: straight to Await.
  EXPECT_TRUE((*plugin)->awaitEvent(new_event(3), "no spin").isOk());
  EXPECT_EQ(calls(), (std::vector<int>{0, 1, 0}));
  // A spin: polls until the event is ready (the third poll), then Await returns at once.
  EXPECT_TRUE((*plugin)->awaitEvent(new_event(3), "spin", microseconds(1000000)).isOk());
  EXPECT_EQ(calls(), (std::vector<int>{3, 2, 0}));
  // An event that never turns ready: polls until the spin has passed, then blocks in Await.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE((*plugin)->awaitEvent(new_event(-1), "never", microseconds(2000)).isOk());
  EXPECT_GE(std::chrono::steady_clock::now() - start, microseconds(2000));
  event_calls(&is_ready, &await, &live);
  EXPECT_GT(is_ready, 4);
  EXPECT_EQ(await, 3);
  EXPECT_EQ(live, 0);
  EXPECT_TRUE((*plugin)->awaitEvent(nullptr, "null", microseconds(1000)).isOk());
  EXPECT_EQ(calls()[1], 3);
}

/// HostStaging over the fake plugin's DmaMap (FakePjrt_SetDmaMap mode).
struct StagingFake {
  std::shared_ptr<const Plugin> plugin;
  void (*set_dma_map)(int) = nullptr;
  void (*dma_calls)(int *, int *) = nullptr;
  int maps() const {
    int m = 0, u = 0;
    dma_calls(&m, &u);
    return m;
  }
  int unmaps() const {
    int m = 0, u = 0;
    dma_calls(&m, &u);
    return u;
  }
};

TEST_F(FakePlugin, HostStagingMapsEachBlockOnceAndReusesIt) {
  configure_(0, 115, 1144);
  StagingFake f;
  f.set_dma_map = reinterpret_cast<void (*)(int)>(::dlsym(handle_, "FakePjrt_SetDmaMap"));
  f.dma_calls = reinterpret_cast<void (*)(int *, int *)>(::dlsym(handle_, "FakePjrt_DmaCalls"));
  ASSERT_TRUE(f.set_dma_map && f.dma_calls);
  f.set_dma_map(1);
  auto plugin = Plugin::load(RS_FAKE_PJRT_PLUGIN);
  ASSERT_TRUE(plugin.isOk()) << plugin.status().toString();
  {
    HostStaging staging(**plugin, nullptr, 64 * 1024);
    StagingBlock a = staging.acquire(16);   // one page
    StagingBlock b = staging.acquire(5000); // rounded up to 8 KiB
    EXPECT_EQ(a.size, 4096u);
    EXPECT_EQ(b.size, 8192u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data) % 4096, 0u);
    EXPECT_EQ(f.maps(), 2);
    staging.release(a);
    StagingBlock again = staging.acquire(4000); // the released page, not a new mapping
    EXPECT_EQ(again.data, a.data);
    EXPECT_EQ(f.maps(), 2);
    EXPECT_EQ(staging.mappedBytes(), 12288u);
    // Past the 64 KiB cap: an empty block, and nothing mapped.
    EXPECT_EQ(staging.acquire(64 * 1024).data, nullptr);
    EXPECT_EQ(f.maps(), 2);
    staging.release(b);
    staging.release(again);
  }
  EXPECT_EQ(f.unmaps(), 2); // every mapped block unmapped with the pool
}

TEST_F(FakePlugin, HostStagingIsUnavailableWithoutOrAfterAFailedDmaMap) {
  configure_(0, 115, 1144);
  auto set_dma_map = reinterpret_cast<void (*)(int)>(::dlsym(handle_, "FakePjrt_SetDmaMap"));
  ASSERT_NE(set_dma_map, nullptr);
  set_dma_map(0);
  auto plugin = Plugin::load(RS_FAKE_PJRT_PLUGIN);
  ASSERT_TRUE(plugin.isOk()) << plugin.status().toString();
  HostStaging without(**plugin, nullptr, 1 << 20);
  EXPECT_TRUE(without.unavailable());
  EXPECT_EQ(without.acquire(16).data, nullptr);
  set_dma_map(2);
  HostStaging failing(**plugin, nullptr, 1 << 20);
  EXPECT_FALSE(failing.unavailable());
  EXPECT_EQ(failing.acquire(16).data, nullptr);
  EXPECT_TRUE(failing.unavailable());
  EXPECT_EQ(live_errors_(), 0); // the refusal's error was destroyed
  {
    StagingLease lease(&failing);
    EXPECT_EQ(lease.acquire(16).data, nullptr);
  }
}

TEST(DTypes, RoundTripThroughPjrtTypes) {
  for (DType t : {DType::kBool, DType::kI8, DType::kI16, DType::kI32, DType::kI64, DType::kU8,
                  DType::kU16, DType::kU32, DType::kU64, DType::kF16, DType::kBF16, DType::kF32,
                  DType::kF64, DType::kComplex64, DType::kComplex128}) {
    EXPECT_NE(toPjrtType(t), capi::PJRT_Buffer_Type_INVALID) << dtypeMlirName(t);
    EXPECT_EQ(fromPjrtType(toPjrtType(t)), t) << dtypeMlirName(t);
  }
  EXPECT_EQ(toPjrtType(DType::kF32), capi::PJRT_Buffer_Type_F32);
  EXPECT_EQ(toPjrtType(DType::kBool), capi::PJRT_Buffer_Type_PRED);
  EXPECT_EQ(fromPjrtType(static_cast<capi::PJRT_Buffer_Type>(23)), DType::kInvalid); // TOKEN
}

} // namespace
} // namespace rs::pjrt
