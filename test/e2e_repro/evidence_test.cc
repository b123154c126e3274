//===- test/e2e_repro/evidence_test.cc - Startup evidence lines ------------===//
//
// seed/reproducibility.md "Startup evidence": `Effective configuration` (every resolved
// setting, the build's identity, which keys came from the environment and which the
// profile set), `TF32 probe`, the `REGULATED PROFILE` banner (info under f32/tf32, a
// warning under auto, with batch_sizes, coalescing and XLA flags), `model loaded` (batch
// sizes actually loaded, numerics outcome) and `executable cache: hit|miss`, in the text
// log format and in the JSON one (one object per line, names unchanged). And numerics
// tf32 on the CPU fails startup with a message saying TF32 is not available.
//
//===----------------------------------------------------------------------===//
#include "repro_util.h"

#include "config/worker_config.h"
#include "support/build_info.h"
#include "support/logging.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <unistd.h>

namespace rs::repro {
namespace {

const std::string kRegulatedF32 = "  runtime: {profile: regulated, numerics: f32}\n";

TEST(Evidence, TextLinesUnderTheRegulatedProfile) {
  TempRepo repo({"digits_cnn", "tf32_algo"});
  auto cfg = workerConfig(repo.repo(), kRegulatedF32,
                          {{"INFERENCE_SERVER_SCHEDULER_MAX_QUEUE_DEPTH", "64"}});
  ASSERT_TRUE(cfg.isOk()) << cfg.status().toString();
  LogCapture log;
  auto w = startWorker(*cfg);
  ASSERT_NE(w, nullptr);

  const auto effective = log.lines("[info] Effective configuration worker=worker0 ");
  ASSERT_EQ(effective.size(), 1u) << log.text();
  const ServerBuild &build = thisBuild();
  EXPECT_NE(effective[0].find("build.version=" + build.version + " build.commit=" + build.commit +
                              " build.compiler=" + build.compiler + " build.build_type=" +
                              build.build_type + " build.eigen=" + build.eigen +
                              " image=none "), // not in a release image
            std::string::npos)
      << effective[0];
  // Every resolved setting, as effectiveSettings() lists them.
  for (const auto &[key, value] : config::effectiveSettings(*cfg))
    EXPECT_NE(effective[0].find(" " + key + "=" + value), std::string::npos) << key;
  for (const std::string s : {" runtime.numerics=f32 ", " runtime.profile=regulated ",
                              " runtime.batch_sizes=largest ", " scheduler.coalescing=false ",
                              " runtime.xla_flags={xla_gpu_exclude_nondeterministic_ops: true} ",
                              " runtime.autotune=true ", " runtime.executable_cache=true ",
                              " from_environment=[scheduler.max_queue_depth] ",
                              " from_profile=[runtime.batch_sizes, scheduler.coalescing, "
                              "runtime.xla_flags.xla_gpu_exclude_nondeterministic_ops]"})
    EXPECT_NE(effective[0].find(s), std::string::npos) << s;
  EXPECT_EQ(log.count("[info] Configuration overridden by environment "
                      "INFERENCE_SERVER_SCHEDULER_MAX_QUEUE_DEPTH=64"),
            1u);

  EXPECT_EQ(log.count("[info] TF32 probe numerics=f32 tf32_active=not applicable"), 1u);
  EXPECT_EQ(log.count("[info] REGULATED PROFILE numerics=f32 batch_sizes=largest "
                      "coalescing=false xla_flags={xla_gpu_exclude_nondeterministic_ops: true} "
                      "autotune=true executable_cache=true"),
            1u)
      << log.text();
  const auto digits = log.lines("[info] model loaded name=digits_cnn ");
  ASSERT_EQ(digits.size(), 1u);
  EXPECT_NE(digits[0].find(" batch_sizes=[8] "), std::string::npos) << digits[0];
  EXPECT_NE(digits[0].find(" numerics=f32 (pinned 1 dot_general, pinned 2 convolution)"),
            std::string::npos)
      << digits[0];
  const auto tf32 = log.lines("[info] model loaded name=tf32_algo ");
  ASSERT_EQ(tf32.size(), 1u);
  EXPECT_NE(tf32[0].find(" batch_sizes=[4] "), std::string::npos);
  EXPECT_NE(tf32[0].find(" numerics=f32 (rewrote 1 tf32 algorithm(s), pinned 1 dot_general)"),
            std::string::npos)
      << tf32[0];
  EXPECT_EQ(log.count("executable cache: miss model=digits_cnn batch_size=8 "), 1u);
  EXPECT_EQ(log.count("executable cache: miss model=tf32_algo batch_size=4 "), 1u);
  // Startup order: configuration, probe, banner, then the models.
  const std::string text = log.text();
  EXPECT_LT(text.find("Effective configuration"), text.find("TF32 probe"));
  EXPECT_LT(text.find("TF32 probe"), text.find("REGULATED PROFILE"));
  EXPECT_LT(text.find("REGULATED PROFILE"), text.find("model loaded"));
}

TEST(Evidence, BannerIsAWarningUnderAuto) {
  TempRepo repo({"iris_mlp"});
  auto cfg = workerConfig(repo.repo(), "  runtime: {profile: regulated}\n");
  ASSERT_TRUE(cfg.isOk());
  LogCapture log;
  auto w = startWorker(*cfg);
  ASSERT_NE(w, nullptr);
  const auto banner = log.lines("REGULATED PROFILE");
  ASSERT_EQ(banner.size(), 1u);
  EXPECT_EQ(banner[0],
            "[warning] REGULATED PROFILE numerics=auto: precision follows the hardware (TF32 "
            "where the GPU has it), so results differ between GPU generations; pin "
            "runtime.numerics to the validated mode (f32 or tf32) batch_sizes=largest "
            "coalescing=false xla_flags={xla_gpu_exclude_nondeterministic_ops: true} "
            "autotune=true executable_cache=true");
  EXPECT_EQ(log.count("numerics=auto (f32: target lacks TF32)"), 1u);
}

TEST(Evidence, NoBannerWithoutTheProfile) {
  TempRepo repo({"iris_mlp"});
  auto cfg = workerConfig(repo.repo(), "  runtime: {numerics: f32}\n");
  ASSERT_TRUE(cfg.isOk());
  LogCapture log;
  auto w = startWorker(*cfg);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(log.count("REGULATED PROFILE"), 0u);
  EXPECT_EQ(log.count(" batch_sizes=[1, 8, 32] "), 1u);
  EXPECT_EQ(log.count("numerics=f32 (pinned 6 dot_general)"), 1u);
}

TEST(Evidence, Tf32OnTheCpuFailsStartup) {
  TempRepo repo({"iris_mlp"});
  // The node file refuses it first (runtime.backend cpu)...
  auto refused = workerConfig(repo.repo(), "  runtime: {numerics: tf32}\n");
  ASSERT_FALSE(refused.isOk());
  EXPECT_NE(refused.status().message().find("tf32 needs runtime.backend cuda"), std::string::npos)
      << refused.status().message();
  // ...and a worker asked for it on a CPU backend (cuda falling back) fails start().
  auto cfg = workerConfig(repo.repo(), "  runtime: {backend: cuda, numerics: tf32}\n");
  ASSERT_TRUE(cfg.isOk()) << cfg.status().toString();
  cfg->runtime.backend = config::Backend::kCpu;
  server::Worker w(server::WorkerOptions{.config = *cfg, .ephemeral_ports = true});
  Status s = w.start();
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("tf32"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("TF32"), std::string::npos) << s.message();
}

/// Runs `body` with the JSON log format, capturing stderr into a file; returns its lines.
std::vector<nlohmann::json> jsonLogOf(const fs::path &file, const std::function<void()> &body) {
  std::fflush(stderr);
  const int saved = ::dup(2);
  FILE *f = std::fopen(file.c_str(), "w");
  EXPECT_NE(f, nullptr);
  ::dup2(::fileno(f), 2);
  auto previous = spdlog::default_logger();
  EXPECT_TRUE(configureLogging(LogFormat::kJson).isOk());
  body();
  spdlog::default_logger()->flush();
  std::fflush(stderr);
  spdlog::set_default_logger(previous);
  ::dup2(saved, 2);
  ::close(saved);
  std::fclose(f);
  std::vector<nlohmann::json> out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << line;
    if (!j.is_discarded())
      out.push_back(j);
  }
  return out;
}

TEST(Evidence, SameLinesInTheJsonFormat) {
  TempRepo repo({"digits_cnn"});
  auto cfg = workerConfig(repo.repo(), kRegulatedF32);
  ASSERT_TRUE(cfg.isOk());
  auto lines = jsonLogOf(repo.root() / "log.json", [&] {
    auto w = startWorker(*cfg);
    ASSERT_NE(w, nullptr);
  });
  std::map<std::string, std::string> level_of;
  for (const auto &j : lines) {
    ASSERT_TRUE(j.contains("ts") && j.contains("level") && j.contains("msg")) << j.dump();
    const std::string msg = j["msg"];
    for (const std::string name : {"Effective configuration", "TF32 probe", "REGULATED PROFILE",
                                   "model loaded", "executable cache: miss"})
      if (msg.rfind(name, 0) == 0)
        level_of[name] = j["level"];
  }
  EXPECT_EQ(level_of, (std::map<std::string, std::string>{{"Effective configuration", "info"},
                                                          {"REGULATED PROFILE", "info"},
                                                          {"TF32 probe", "info"},
                                                          {"executable cache: miss", "info"},
                                                          {"model loaded", "info"}}));
  bool numerics_seen = false;
  for (const auto &j : lines)
    if (std::string(j["msg"]).find("numerics=f32 (pinned 1 dot_general, pinned 2 convolution)") !=
        std::string::npos)
      numerics_seen = true;
  EXPECT_TRUE(numerics_seen);
}

} // namespace
} // namespace rs::repro
