//===- test/validation/validation_fixture.h - Workers on copied bundles ----===//
//
// What the validation tests share: a temporary directory, copies of fixture bundles (top-
// level files only, made writable, so a test may change a weight and the executable
// cache may write `.cache/`), and a real server::Worker on loopback with free ports.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/files.h"
#include "common/temp_dir.h"
#include "common/test_worker.h"
#include "config/node_config.h"
#include "server/worker.h"

#include <gtest/gtest.h>

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

/// Copies fixture bundle `model` into `<repo>/<model>` (files only, owner-writable).
inline void copyBundle(const std::string &model, const std::string &repo) {
  rs::testing::copyBundleFiles(fs::path(kBundles) / model, fs::path(repo) / model);
}

/// Starts a worker on `repo` with every front-end (metrics port included) on a free
/// loopback port. `global_yaml` is the body of the node file's `global:` block (indented
/// two spaces).
inline std::unique_ptr<server::Worker> startWorker(const std::string &repo,
                                                   const std::string &global_yaml = "") {
  const std::string yaml =
      "model_repo: \"" + repo +
      "\"\nglobal:\n  endpoints: {host: 127.0.0.1, http_port: 18000, metrics_port: 18002}\n" +
      global_yaml;
  Result<config::WorkerConfig> cfg = rs::testing::firstWorker(yaml, "<validation test>");
  EXPECT_TRUE(cfg.isOk()) << cfg.status().toString();
  if (!cfg.isOk())
    return nullptr;
  Result<std::unique_ptr<server::Worker>> worker = rs::testing::startWorker(*cfg);
  EXPECT_TRUE(worker.isOk()) << worker.status().toString();
  return worker.isOk() ? std::move(worker).value() : nullptr;
}

} // namespace rs::validation_test
