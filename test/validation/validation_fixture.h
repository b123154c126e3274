//===- test/validation/validation_fixture.h - Workers on copied bundles ----===//
//
// What the validation tests share: a temporary directory, copies of fixture bundles (top-
// level files only, made writable, so a test may change a weight and the executable
// cache may write `.cache/`), a real server::Worker on loopback with free ports, a release
// image's identity, and the outcome of a command and a copy of the log.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/files.h"
#include "common/temp_dir.h"
#include "common/test_worker.h"
#include "config/node_config.h"
#include "server/worker.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace rs::validation_test {

namespace fs = std::filesystem;

inline const std::string kShared = RS_SHARED_DIR;
inline const std::string kBundles = kShared + "/fixtures/bundles";
inline const std::string kGolden = kShared + "/fixtures/golden";

using rs::testing::readFile;
using rs::testing::TempDir;
using rs::testing::writeFile;

/// The outcome of one command: exit status and what it printed.
struct CommandRun {
  int status = -1;
  std::string out;
  std::string err;
};

/// Logs of the default logger also go to `path` while this lives.
class LogCapture {
public:
  explicit LogCapture(const std::string &path)
      : sink_(std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, true)) {
    spdlog::default_logger()->sinks().push_back(sink_);
  }
  ~LogCapture() {
    sink_->flush();
    auto &sinks = spdlog::default_logger()->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  void flush() { sink_->flush(); }

private:
  std::shared_ptr<spdlog::sinks::basic_file_sink_mt> sink_;
};

/// Copies fixture bundle `model` into `<repo>/<model>` (files only, owner-writable).
inline void copyBundle(const std::string &model, const std::string &repo) {
  rs::testing::copyBundleFiles(fs::path(kBundles) / model, fs::path(repo) / model);
}

/// A digest as REACTANT_IMAGE_DIGEST carries one: "sha256:" and 64 times `digit`.
inline std::string imageDigest(char digit) { return "sha256:" + std::string(64, digit); }

/// Writes a release image's identity file (config/image_identity.h) at `path` with
/// commit 40 times `commit_digit`, and returns the environment that names it and carries
/// `digest`.
inline config::Environment imageEnvironment(const std::string &path, char commit_digit,
                                            const std::string &digest) {
  writeFile(path, R"({"version": "0.4.0", "commit": ")" + std::string(40, commit_digit) +
                      R"(", "lock_sha256": ")" + std::string(64, 'c') + R"(", "variant": "cpu"})");
  return {{"REACTANT_IMAGE_IDENTITY_FILE", path}, {"REACTANT_IMAGE_DIGEST", digest}};
}

/// Starts a worker on `repo` with every front-end (metrics port included) on a free
/// loopback port. `global_yaml` is the body of the node file's `global:` block (indented
/// two spaces). `env` is the environment the worker resolves against (its image identity
/// variables included).
inline std::unique_ptr<server::Worker> startWorker(const std::string &repo,
                                                   const std::string &global_yaml = "",
                                                   const config::Environment &env = {}) {
  const std::string yaml =
      "model_repo: \"" + repo +
      "\"\nglobal:\n  endpoints: {host: 127.0.0.1, http_port: 18000, metrics_port: 18002}\n" +
      global_yaml;
  Result<config::WorkerConfig> cfg = rs::testing::firstWorker(yaml, "<validation test>", env);
  EXPECT_TRUE(cfg.isOk()) << cfg.status().toString();
  if (!cfg.isOk())
    return nullptr;
  Result<std::unique_ptr<server::Worker>> worker = rs::testing::startWorker(*cfg);
  EXPECT_TRUE(worker.isOk()) << worker.status().toString();
  return worker.isOk() ? std::move(worker).value() : nullptr;
}

} // namespace rs::validation_test
