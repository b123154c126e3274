//===- test/e2e_repro/cache_restart_test.cc - Warm restarts and bad entries -===//
//
// Issue 5 acceptance (seed/reproducibility.md "Compilation and autotuning"): after a
// restart with a warm executable cache every program logs `executable cache: hit` and
// worker_executable_cache_misses_total is 0; corrupting one cache file gives exactly one
// logged miss, a correct answer, and a rewritten entry; a change of compile settings
// (XLA flags) misses every program.
//
//===----------------------------------------------------------------------===//
#include "common/files.h"
#include "repro_util.h"

#include <fstream>

namespace rs::repro {
namespace {

using rs::testing::readFile;
using rs::testing::writeFile;

protocol::InferRequest irisRequest() {
  protocol::InferRequest r;
  r.model_name = "iris_mlp";
  r.inputs.push_back({"features", golden("iris_mlp", "b8.safetensors", "features")});
  return r;
}

protocol::InferRequest digitsRequest() {
  protocol::InferRequest r;
  r.model_name = "digits_cnn";
  r.inputs.push_back(
      {"image", pickRows(golden("digits_cnn", "testset.safetensors", "image"), {3, 4, 5})});
  return r;
}

/// The value of the worker's (single) series `name` in its /metrics text; -1 if absent.
double metricValue(server::Worker &w, const std::string &name) {
  std::istringstream in(workerService(w).renderMetrics());
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + "{", 0) == 0 && line.find("worker=\"worker0\"") != std::string::npos)
      return std::stod(line.substr(line.rfind(' ') + 1));
  return -1;
}

TEST(ExecutableCacheRestart, WarmRestartHitsEveryProgramAndCorruptionIsOneMiss) {
  TempRepo repo({"digits_cnn", "iris_mlp"});
  // batch_sizes: all, so that every compiled size (3 + 3 programs) goes through the cache.
  auto cfg = workerConfig(repo.repo(), "  runtime: {numerics: f32}\n");
  ASSERT_TRUE(cfg.isOk()) << cfg.status().toString();
  std::string want_iris, want_digits;
  {
    LogCapture log;
    auto cold = startWorker(*cfg);
    ASSERT_NE(cold, nullptr);
    EXPECT_EQ(log.count("executable cache: miss"), 6u) << log.text();
    EXPECT_EQ(log.count("reason=no entry"), 6u);
    EXPECT_EQ(cold->repository().executableCacheMisses(), 6);
    EXPECT_EQ(metricValue(*cold, "worker_executable_cache_misses_total"), 6);
    want_iris = replyBytes(*infer(*cold, irisRequest()));
    want_digits = replyBytes(*infer(*cold, digitsRequest()));
  }
  ASSERT_EQ(repo.cacheEntries("digits_cnn").size(), 3u);
  ASSERT_EQ(repo.cacheEntries("iris_mlp").size(), 3u);

  {
    LogCapture log;
    auto warm = startWorker(*cfg);
    ASSERT_NE(warm, nullptr);
    for (const std::string model : {"digits_cnn", "iris_mlp"})
      for (int64_t b : warm->repository().state(model)->model->batch_sizes)
        EXPECT_EQ(log.count("executable cache: hit model=" + model +
                            " batch_size=" + std::to_string(b) + " "),
                  1u)
            << log.text();
    EXPECT_EQ(log.count("executable cache: hit"), 6u);
    EXPECT_EQ(log.count("executable cache: miss"), 0u);
    EXPECT_EQ(warm->repository().executableCacheMisses(), 0);
    EXPECT_EQ(metricValue(*warm, "worker_executable_cache_misses_total"), 0);
    EXPECT_EQ(replyBytes(*infer(*warm, irisRequest())), want_iris);
    EXPECT_EQ(replyBytes(*infer(*warm, digitsRequest())), want_digits);
  }

  // Corrupt one byte of iris_mlp's batch-8 entry.
  fs::path victim;
  for (const fs::path &p : repo.cacheEntries("iris_mlp"))
    if (p.filename().string().rfind("model.b8-", 0) == 0)
      victim = p;
  ASSERT_FALSE(victim.empty());
  const std::string good = readFile(victim);
  std::string bad = good;
  bad[bad.size() / 2] ^= 0x01;
  writeFile(victim, bad);
  {
    LogCapture log;
    auto w = startWorker(*cfg);
    ASSERT_NE(w, nullptr);
    const auto misses = log.lines("executable cache: miss");
    ASSERT_EQ(misses.size(), 1u) << log.text();
    EXPECT_NE(misses[0].find("model=iris_mlp batch_size=8 program=model.b8.mlir reason=corrupt "
                             "entry: payload checksum mismatch"),
              std::string::npos)
        << misses[0];
    EXPECT_EQ(log.count("executable cache: hit"), 5u);
    EXPECT_EQ(w->repository().executableCacheMisses(), 1);
    EXPECT_EQ(metricValue(*w, "worker_executable_cache_misses_total"), 1);
    EXPECT_EQ(replyBytes(*infer(*w, irisRequest())), want_iris); // a correct answer
  }
  EXPECT_EQ(readFile(victim), good); // rewritten

  // Truncate it: again one miss, then rewritten.
  writeFile(victim, good.substr(0, good.size() - 100));
  {
    LogCapture log;
    auto w = startWorker(*cfg);
    ASSERT_NE(w, nullptr);
    const auto misses = log.lines("executable cache: miss");
    ASSERT_EQ(misses.size(), 1u) << log.text();
    EXPECT_NE(misses[0].find("(truncated)"), std::string::npos) << misses[0];
    EXPECT_EQ(replyBytes(*infer(*w, irisRequest())), want_iris);
  }
  EXPECT_EQ(readFile(victim), good);

  // Another XLA flag is another compile setting: every program misses, and both sets of
  // entries are kept.
  auto flagged = workerConfig(
      repo.repo(), "  runtime: {numerics: f32, xla_flags: {xla_gpu_autotune_level: 0}}\n");
  ASSERT_TRUE(flagged.isOk()) << flagged.status().toString();
  {
    LogCapture log;
    auto w = startWorker(*flagged);
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(log.count("executable cache: miss"), 6u);
    EXPECT_EQ(replyBytes(*infer(*w, irisRequest())), want_iris);
  }
  EXPECT_EQ(repo.cacheEntries("iris_mlp").size(), 6u);
}

TEST(ExecutableCacheRestart, CacheOffCountsEveryCompileAsAMiss) {
  TempRepo repo({"iris_mlp"});
  auto cfg = workerConfig(repo.repo(), "  runtime: {executable_cache: false}\n");
  ASSERT_TRUE(cfg.isOk()) << cfg.status().toString();
  LogCapture log;
  auto w = startWorker(*cfg);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(log.count("executable cache: miss model=iris_mlp"), 3u);
  EXPECT_EQ(log.count("reason=executable cache off"), 3u);
  EXPECT_EQ(metricValue(*w, "worker_executable_cache_misses_total"), 3);
  EXPECT_TRUE(repo.cacheEntries("iris_mlp").empty());
}

} // namespace
} // namespace rs::repro
