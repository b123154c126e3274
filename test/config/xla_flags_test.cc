//===- test/config/xla_flags_test.cc - runtime.xla_flags names are checked -===//
//
// A misspelt XLA flag fails when the configuration is resolved (from the file or the
// environment), naming the key and the nearest known name; known names pass.
//
//===----------------------------------------------------------------------===//
#include "config/xla_flags.h"

#include "config_test_util.h"

#include <algorithm>

namespace rs::config {
namespace {

using testing::NodeDir;

TEST(XlaFlags, TableIsSortedUniqueAndHasTheFlagsWeUse) {
  const auto flags = knownXlaFlags();
  EXPECT_EQ(flags.size(), 338u);
  EXPECT_TRUE(std::adjacent_find(flags.begin(), flags.end(),
                                 [](auto a, auto b) { return a >= b; }) == flags.end());
  for (std::string_view f : {"xla_gpu_exclude_nondeterministic_ops", "xla_gpu_autotune_level",
                             "xla_gpu_per_fusion_autotune_cache_dir", "xla_gpu_cuda_data_dir",
                             "xla_gpu_deterministic_ops", "xla_dump_to"})
    EXPECT_TRUE(isKnownXlaFlag(f)) << f;
  EXPECT_FALSE(isKnownXlaFlag("xla_gpu_exclude_nondeterministc_ops"));
  EXPECT_FALSE(isKnownXlaFlag(""));
  EXPECT_FALSE(isKnownXlaFlag("--xla_dump_to"));
}

TEST(XlaFlags, ClosestNameForATypo) {
  EXPECT_EQ(closestXlaFlag("xla_gpu_exclude_nondeterministc_ops"),
            "xla_gpu_exclude_nondeterministic_ops");
  EXPECT_EQ(closestXlaFlag("xla_gpu_autotune_levle"), "xla_gpu_autotune_level");
  EXPECT_EQ(closestXlaFlag("something_else_entirely"), "");
}

TEST(XlaFlags, UnknownFlagInTheFileFailsAtStartup) {
  NodeDir dir;
  EXPECT_EQ(dir.error("model_repo: repo\nglobal: {runtime: {xla_flags: "
                      "{xla_gpu_exclude_nondeterministc_ops: true}}}\n"),
            "node.yaml:2:32: global.runtime.xla_flags.xla_gpu_exclude_nondeterministc_ops: unknown "
            "XLA flag 'xla_gpu_exclude_nondeterministc_ops' (did you mean "
            "'xla_gpu_exclude_nondeterministic_ops'?)");
  EXPECT_EQ(dir.error("model_repo: repo\nglobal: {runtime: {xla_flags: {no_such_option: 1}}}\n"),
            "node.yaml:2:32: global.runtime.xla_flags.no_such_option: unknown XLA flag "
            "'no_such_option' (not an XLA option of this build)");
  // In a worker's override block too.
  EXPECT_EQ(dir.error("model_repo: repo\nworkers:\n  - name: w0\n    runtime: {xla_flags: "
                      "{xla_gpu_autotune_levle: 0}}\n"),
            "node.yaml:4:27: workers[0].runtime.xla_flags.xla_gpu_autotune_levle: unknown XLA flag "
            "'xla_gpu_autotune_levle' (did you mean 'xla_gpu_autotune_level'?)");
}

TEST(XlaFlags, UnknownFlagInTheEnvironmentFailsAtStartup) {
  NodeDir dir;
  EXPECT_EQ(dir.error("model_repo: repo\n", {{"INFERENCE_SERVER_RUNTIME_XLA_FLAGS",
                                              "--xla_gpu_autotune_level=0 --xla_gpu_ftzz=true"}}),
            "environment override INFERENCE_SERVER_RUNTIME_XLA_FLAGS: unknown XLA flag "
            "'xla_gpu_ftzz' (did you mean 'xla_gpu_ftz'?)");
  auto w = dir.worker("model_repo: repo\n", {{"INFERENCE_SERVER_RUNTIME_XLA_FLAGS",
                                              "--xla_gpu_autotune_level=0 --xla_gpu_ftz=true"}});
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  EXPECT_EQ(w->runtime.xla_flags.size(), 2u);
}

} // namespace
} // namespace rs::config
