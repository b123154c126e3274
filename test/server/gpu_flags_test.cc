// server/gpu_flags.h: the XLA flags of GPU compiles, and the autotune results file.
#include "server/gpu_flags.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace rs::server {
namespace {

std::filesystem::path freshDir(const std::string &name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("rs_gpu_flags_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(GpuFlags, CompileFlagsAreTheUsersAndTheAutotuneLevel) {
  config::RuntimeConfig rt;
  rt.autotune = true;
  rt.xla_flags = {{"xla_gpu_exclude_nondeterministic_ops", "true"}};
  const std::map<std::string, std::string> on = {{"xla_gpu_exclude_nondeterministic_ops", "true"}};
  EXPECT_EQ(gpuCompileFlags(rt), on);
  rt.autotune = false;
  const std::map<std::string, std::string> off = {{"xla_gpu_autotune_level", "0"},
                                                  {"xla_gpu_exclude_nondeterministic_ops", "true"}};
  EXPECT_EQ(gpuCompileFlags(rt), off);
}

TEST(GpuFlags, CountsResultsOfAnAutotuneResultsFile) {
  EXPECT_EQ(countAutotuneResults("version: 3\nresults {\n  device: \"x\"\n}\nresults {\n}\n"), 2);
  EXPECT_EQ(countAutotuneResults("version: 3\n"), 0);
  EXPECT_EQ(countAutotuneResults("not a results file\nresults {\n}\n"), -1);
  EXPECT_EQ(countAutotuneResults(""), -1);
}

TEST(GpuFlags, AutotuneCacheWritesTheResultsFileAndReadsItOnceItHoldsResults) {
  const auto dir = freshDir("cache");
  config::RuntimeConfig rt;
  rt.autotune = true;
  rt.autotune_cache_dir = dir.string();
  const std::string file = autotuneResultsPath(rt.autotune_cache_dir);
  EXPECT_EQ(file, (dir / "xla_autotune_results.textproto").string());

  auto first = gpuXlaFlags(rt); // the directory does not exist yet: created
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  EXPECT_NE(first->find("--xla_gpu_per_fusion_autotune_cache_dir=" + dir.string()),
            std::string::npos);
  EXPECT_NE(first->find("--xla_gpu_experimental_autotuner_cache_dir=" + dir.string()),
            std::string::npos);
  EXPECT_NE(first->find("--xla_gpu_dump_autotune_results_to=" + file), std::string::npos);
  EXPECT_EQ(first->find("xla_gpu_load_autotune_results_from"), std::string::npos);

  std::ofstream(file) << "version: 3\nresults {\n}\n";
  auto second = gpuXlaFlags(rt);
  ASSERT_TRUE(second.isOk());
  EXPECT_NE(second->find("--xla_gpu_load_autotune_results_from=" + file), std::string::npos);

  std::ofstream(file) << "garbage";
  auto third = gpuXlaFlags(rt); // not a results file: not read, autotuned afresh
  ASSERT_TRUE(third.isOk());
  EXPECT_EQ(third->find("xla_gpu_load_autotune_results_from"), std::string::npos);

  // One result in the results file and one per-fusion entry; the digest covers both.
  std::ofstream(file) << "version: 3\nresults {\n}\n";
  const AutotuneCacheContents before = inspectAutotuneCache(dir.string());
  EXPECT_EQ(before.results, 1);
  EXPECT_EQ(before.files, 1);
  std::ofstream(dir / "fusion_0.textproto") << "entry";
  const AutotuneCacheContents after = inspectAutotuneCache(dir.string());
  EXPECT_EQ(after.results, 2);
  EXPECT_EQ(after.files, 2);
  EXPECT_EQ(after.sha256.size(), 64u);
  EXPECT_NE(after.sha256, before.sha256);
  EXPECT_EQ(inspectAutotuneCache(dir.string()).sha256, after.sha256);

  rt.autotune = false; // nothing autotuned: no results file either way
  auto off = gpuXlaFlags(rt);
  ASSERT_TRUE(off.isOk());
  EXPECT_EQ(off->find("autotune_results"), std::string::npos);
  EXPECT_NE(off->find("--xla_gpu_autotune_level=0"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(GpuFlags, AutotuneCacheDirectoryThatCannotBeCreatedIsAnError) {
  config::RuntimeConfig rt;
  rt.autotune_cache_dir = "/proc/rs_no_such_dir/autotune";
  auto r = gpuXlaFlags(rt);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("runtime.autotune_cache_dir '/proc/rs_no_such_dir/autotune'"),
            std::string::npos)
      << r.status().message();
}

} // namespace
} // namespace rs::server
