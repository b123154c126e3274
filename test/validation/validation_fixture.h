//===- test/validation/validation_fixture.h - Workers on copied bundles ----===//
//
// What the validation tests share: a temporary directory, copies of fixture bundles (top-
// level files only, made writable, so a test may change a weight and the executable
// cache may write `.cache/`), and a real server::Worker on loopback with free ports.
//
//===----------------------------------------------------------------------===//
#pragma once

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

/// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
public:
  TempDir() {
    std::string tmpl = fs::temp_directory_path().string() + "/rs_validation_test_XXXXXX";
    EXPECT_NE(::mkdtemp(tmpl.data()), nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

/// Copies fixture bundle `model` into `<repo>/<model>` (files only, owner-writable).
inline void copyBundle(const std::string &model, const std::string &repo) {
  const fs::path to = fs::path(repo) / model;
  fs::create_directories(to);
  for (const fs::directory_entry &e : fs::directory_iterator(fs::path(kBundles) / model)) {
    if (!e.is_regular_file())
      continue;
    const fs::path dest = to / e.path().filename();
    fs::copy_file(e.path(), dest, fs::copy_options::overwrite_existing);
    fs::permissions(dest, fs::perms::owner_read | fs::perms::owner_write);
  }
}

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
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
  Result<config::NodeConfig> node = config::parseNodeFile(yaml, "<validation test>", {});
  EXPECT_TRUE(node.isOk()) << node.status().toString();
  if (!node.isOk())
    return nullptr;
  Result<config::WorkerConfig> cfg = config::resolveWorker(*node, 0);
  EXPECT_TRUE(cfg.isOk()) << cfg.status().toString();
  if (!cfg.isOk())
    return nullptr;
  auto worker = std::make_unique<server::Worker>(
      server::WorkerOptions{.config = *cfg, .ephemeral_ports = true});
  Status s = worker->start();
  EXPECT_TRUE(s.isOk()) << s.toString();
  return s.isOk() ? std::move(worker) : nullptr;
}

} // namespace rs::validation_test
