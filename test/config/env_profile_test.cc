//===- test/config/env_profile_test.cc - env overrides, regulated profile --===//
#include "config/node_config.h"

#include "config_test_util.h"

#include <gtest/gtest.h>

namespace rs::config {
namespace {

using testing::NodeDir;

constexpr const char *kMinimal = "model_repo: repo\n";

TEST(EnvOverrides, OverrideFileValuesAndAreRecorded) {
  NodeDir dir;
  std::filesystem::create_directories(dir.path() + "/other");
  Environment env = {
      {"PATH", "/usr/bin"},
      {"REACTANT_WORKER_NAME", "worker0"},
      {"INFERENCE_SERVER_RUNTIME_NUMERICS", "f32"},
      {"INFERENCE_SERVER_ENDPOINTS_PORT", " 9000 "},
      {"INFERENCE_SERVER_RUNTIME_MEM_FRACTION", "0.25"},
      {"INFERENCE_SERVER_MODELS_INCLUDE", "a:b::c"},
      {"INFERENCE_SERVER_MODEL_DIRS", dir.repo() + ":" + dir.path() + "/other"},
      {"INFERENCE_SERVER_RUNTIME_XLA_FLAGS",
       "--xla_gpu_autotune_level=1, xla_gpu_deterministic_ops=true  --xla_dump_to=x"},
      {"INFERENCE_SERVER_CACHE_DIR", "/var/cache/rs"},
      {"INFERENCE_SERVER_RUNTIME_CPU_THREADS", "4"},
      {"INFERENCE_SERVER_ENDPOINTS_HTTP_PORT", "0"},
  };
  auto w = dir.worker("model_repo: repo\nglobal: {runtime: {numerics: auto, mem_fraction: 0.5}, "
                      "endpoints: {port: 7000}}\n",
                      env);
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  EXPECT_EQ(w->runtime.numerics, Numerics::kF32);
  EXPECT_EQ(w->endpoints.port, 9000);
  EXPECT_EQ(w->runtime.mem_fraction, 0.25);
  EXPECT_EQ(w->models_include, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(w->model_dirs, (std::vector<std::string>{dir.repo(), dir.path() + "/other"}));
  EXPECT_EQ(w->runtime.xla_flags,
            (std::map<std::string, std::string>{{"xla_gpu_autotune_level", "1"},
                                                {"xla_gpu_deterministic_ops", "true"},
                                                {"xla_dump_to", "x"}}));
  EXPECT_EQ(w->cache_dir, "/var/cache/rs");
  EXPECT_EQ(w->runtime.cpu_threads, 4);
  EXPECT_EQ(w->endpoints.http_port, 0);
  EXPECT_EQ(w->env_keys, (std::set<std::string>{"cache_dir", "endpoints.http_port",
                                                "endpoints.port", "model_dirs", "models_include",
                                                "runtime.cpu_threads", "runtime.mem_fraction",
                                                "runtime.numerics", "runtime.xla_flags"}));
  ASSERT_EQ(w->env_overrides.size(), 9u);
  EXPECT_EQ(w->env_overrides[0],
            (std::pair<std::string, std::string>{"INFERENCE_SERVER_CACHE_DIR", "/var/cache/rs"}));
  EXPECT_EQ(w->env_overrides[2].first, "INFERENCE_SERVER_ENDPOINTS_PORT");
  EXPECT_EQ(w->env_overrides[2].second, " 9000 ");
  // Sorted by variable name.
  for (size_t i = 1; i < w->env_overrides.size(); ++i)
    EXPECT_LT(w->env_overrides[i - 1].first, w->env_overrides[i].first);
}

TEST(EnvOverrides, BoolParsing) {
  NodeDir dir;
  const std::vector<std::pair<std::string, bool>> cases = {
      {"1", true},    {"true", true}, {"TRUE", true},    {"Yes", true}, {"on", true},
      {" on ", true}, {"0", false},   {"false", false},  {"no", false}, {"off", false},
      {"2", false},   {"", false},    {"enable", false}, {"y", false},  {"t", false},
  };
  for (const auto &[text, expected] : cases) {
    SCOPED_TRACE("'" + text + "'");
    // preallocate defaults to true, executable_cache to true, shared_host_weights to false:
    // the parsed value must win either way.
    auto w = dir.worker(kMinimal, {{"INFERENCE_SERVER_RUNTIME_PREALLOCATE", text},
                                   {"INFERENCE_SERVER_RUNTIME_SHARED_HOST_WEIGHTS", text},
                                   {"INFERENCE_SERVER_RUNTIME_AUTOTUNE_CACHE", text},
                                   {"INFERENCE_SERVER_SCHEDULER_COALESCING", text}});
    ASSERT_TRUE(w.isOk()) << w.status().toString();
    EXPECT_EQ(w->runtime.preallocate, expected);
    EXPECT_EQ(w->runtime.shared_host_weights, expected);
    EXPECT_EQ(w->runtime.autotune_cache, expected);
    EXPECT_EQ(w->scheduler.coalescing, expected);
  }
}

TEST(EnvOverrides, MaxQueueDelay) {
  NodeDir dir;
  auto w =
      dir.worker(kMinimal, {{"INFERENCE_SERVER_SCHEDULER_MAX_QUEUE_DELAY_MICROSECONDS", "2000"}});
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  EXPECT_EQ(w->scheduler.max_queue_delay_microseconds, 2000);
}

TEST(EnvOverrides, ErrorsNameTheVariable) {
  NodeDir dir;
  struct Case {
    Environment env;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{{"INFERENCE_SERVER_ENDPOINTS_PORT", "abc"}},
       "environment override INFERENCE_SERVER_ENDPOINTS_PORT: expected an integer, got "
       "'abc' (range [1, 65535])"},
      {{{"INFERENCE_SERVER_ENDPOINTS_PORT", "0"}},
       "environment override INFERENCE_SERVER_ENDPOINTS_PORT: 0 is out of range [1, "
       "65535]"},
      {{{"INFERENCE_SERVER_RUNTIME_MEM_FRACTION", "lots"}},
       "environment override INFERENCE_SERVER_RUNTIME_MEM_FRACTION: expected a number, got "
       "'lots'"},
      {{{"INFERENCE_SERVER_SCHEDULER_MAX_QUEUE_DELAY_MICROSECONDS", "-5"}},
       "environment override INFERENCE_SERVER_SCHEDULER_MAX_QUEUE_DELAY_MICROSECONDS: -5 is out "
       "of range [0, 60000000]"},
      {{{"INFERENCE_SERVER_RUNTIME_NUMERICS", "fp32"}},
       "environment override INFERENCE_SERVER_RUNTIME_NUMERICS: 'fp32' is not one of f32, "
       "auto, tf32"},
      {{{"INFERENCE_SERVER_RUNTIME_NUMERCS", "f32"}},
       "environment: unknown variable INFERENCE_SERVER_RUNTIME_NUMERCS (not a configuration key)"},
      {{{"INFERENCE_SERVER_SCHEDULER_MODELS", "x"}},
       "environment: unknown variable INFERENCE_SERVER_SCHEDULER_MODELS (not a configuration "
       "key)"},
      {{{"INFERENCE_SERVER_BATCH_POLICY_MAX_BATCH_SIZE", "8"}},
       "environment override INFERENCE_SERVER_BATCH_POLICY_MAX_BATCH_SIZE: 'batch_policy' was "
       "removed: cap coalescing per model with scheduler.models.<name>.max_batch_size (the batch "
       "axis comes from the manifest; allow_padding never had an effect)"},
      {{{"INFERENCE_SERVER_RUNTIME_RESIDENCY_MODE", "externally_managed"}},
       "environment override INFERENCE_SERVER_RUNTIME_RESIDENCY_MODE: 'runtime.residency_mode' "
       "was removed: use the top-level model_control_mode ('explicit' replaces "
       "'externally_managed'; static and dynamic are self-managed)"},
      {{{"INFERENCE_SERVER_RUNTIME_XLA_FLAGS", "xla_a"}},
       "environment override INFERENCE_SERVER_RUNTIME_XLA_FLAGS: item 'xla_a' is not name=value"},
      {{{"INFERENCE_SERVER_MODEL_DIRS", ""}},
       "environment override INFERENCE_SERVER_MODEL_DIRS: at least one model directory is "
       "required"},
      {{{"INFERENCE_SERVER_RUNTIME_BACKEND", "cpu"}, {"INFERENCE_SERVER_RUNTIME_NUMERICS", "tf32"}},
       "environment override INFERENCE_SERVER_RUNTIME_NUMERICS: tf32 needs "
       "runtime.backend cuda (the cpu backend computes f32 exactly)"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.env.begin()->first);
    EXPECT_EQ(dir.error(kMinimal, c.env), c.message);
  }
}

TEST(RegulatedProfile, SetsItsThreeSettings) {
  NodeDir dir;
  auto w = dir.worker("model_repo: repo\nglobal: {runtime: {profile: regulated, numerics: f32}}\n");
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  EXPECT_EQ(w->runtime.profile, Profile::kRegulated);
  EXPECT_EQ(w->runtime.batch_sizes, BatchSizes::kLargest);
  EXPECT_FALSE(w->scheduler.coalescing);
  EXPECT_EQ(w->runtime.xla_flags,
            (std::map<std::string, std::string>{{"xla_gpu_exclude_nondeterministic_ops", "true"}}));
  EXPECT_EQ(w->runtime.numerics, Numerics::kF32); // never touched by the profile
  EXPECT_EQ(w->profile_keys,
            (std::vector<std::string>{"runtime.batch_sizes", "scheduler.coalescing",
                                      "runtime.xla_flags.xla_gpu_exclude_nondeterministic_ops"}));
}

TEST(RegulatedProfile, DoesNotSetNumerics) {
  NodeDir dir;
  auto w = dir.worker("model_repo: repo\nglobal: {runtime: {profile: regulated}}\n");
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  EXPECT_EQ(w->runtime.numerics, Numerics::kAuto);
}

TEST(RegulatedProfile, ExplicitFileSettingsWin) {
  NodeDir dir;
  auto w = dir.worker(R"(model_repo: repo
global:
  runtime:
    profile: regulated
    batch_sizes: all
    xla_flags: {xla_gpu_exclude_nondeterministic_ops: false, xla_gpu_autotune_level: 0}
  scheduler: {coalescing: true}
)");
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  EXPECT_EQ(w->runtime.batch_sizes, BatchSizes::kAll);
  EXPECT_TRUE(w->scheduler.coalescing);
  EXPECT_EQ(w->runtime.xla_flags, (std::map<std::string, std::string>{
                                      {"xla_gpu_autotune_level", "0"},
                                      {"xla_gpu_exclude_nondeterministic_ops", "false"}}));
  EXPECT_TRUE(w->profile_keys.empty());
}

TEST(RegulatedProfile, OtherXlaFlagsKeepTheDeterminismFlag) {
  NodeDir dir;
  auto w = dir.worker("model_repo: repo\nglobal: {runtime: {profile: regulated, xla_flags: "
                      "{xla_gpu_autotune_level: 0}}}\n");
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  EXPECT_EQ(w->runtime.xla_flags,
            (std::map<std::string, std::string>{{"xla_gpu_autotune_level", "0"},
                                                {"xla_gpu_exclude_nondeterministic_ops", "true"}}));
}

TEST(RegulatedProfile, FromEnvironmentAndExplicitEnvWins) {
  NodeDir dir;
  auto w = dir.worker(kMinimal, {{"INFERENCE_SERVER_RUNTIME_PROFILE", "regulated"},
                                 {"INFERENCE_SERVER_RUNTIME_NUMERICS", "f32"},
                                 {"INFERENCE_SERVER_SCHEDULER_COALESCING", "true"}});
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  EXPECT_EQ(w->runtime.profile, Profile::kRegulated);
  EXPECT_EQ(w->runtime.numerics, Numerics::kF32);
  EXPECT_EQ(w->runtime.batch_sizes, BatchSizes::kLargest);
  EXPECT_TRUE(w->scheduler.coalescing); // set explicitly in the environment
  EXPECT_EQ(w->profile_keys,
            (std::vector<std::string>{"runtime.batch_sizes",
                                      "runtime.xla_flags.xla_gpu_exclude_nondeterministic_ops"}));

  // The environment can also turn the profile off over a file that sets it.
  auto off = dir.worker("model_repo: repo\nglobal: {runtime: {profile: regulated}}\n",
                        {{"INFERENCE_SERVER_RUNTIME_PROFILE", "none"}});
  ASSERT_TRUE(off.isOk()) << off.status().toString();
  EXPECT_EQ(off->runtime.profile, Profile::kNone);
  EXPECT_EQ(off->runtime.batch_sizes, BatchSizes::kAll);
  EXPECT_TRUE(off->scheduler.coalescing);
  EXPECT_TRUE(off->runtime.xla_flags.empty());
}

TEST(RegulatedProfile, PerWorkerOverride) {
  NodeDir dir;
  auto node = dir.parse(R"(model_repo: repo
base_port: 9000
global: {runtime: {profile: regulated}, endpoints: {http_port: 0}}
workers:
  - {name: a}
  - {name: b, runtime: {profile: none}}
)");
  ASSERT_TRUE(node.isOk()) << node.status().toString();
  auto a = resolveWorker(*node, 0);
  auto b = resolveWorker(*node, 1);
  ASSERT_TRUE(a.isOk() && b.isOk());
  EXPECT_EQ(a->runtime.batch_sizes, BatchSizes::kLargest);
  EXPECT_EQ(b->runtime.batch_sizes, BatchSizes::kAll);
  EXPECT_TRUE(b->scheduler.coalescing);
}

} // namespace
} // namespace rs::config
