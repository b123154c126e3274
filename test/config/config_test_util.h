//===- test/config/config_test_util.h - helpers for config tests -----------===//
#pragma once

#include "common/temp_dir.h"
#include "config/node_config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace rs::config::testing {

/// A temporary folder with a `repo/` model repository; node files are written into it.
class NodeDir {
public:
  NodeDir() { std::filesystem::create_directories(path_ + "/repo"); }
  NodeDir(const NodeDir &) = delete;
  NodeDir &operator=(const NodeDir &) = delete;

  const std::string &path() const { return path_; }
  std::string nodeFile() const { return path_ + "/node.yaml"; }
  std::string repo() const { return path_ + "/repo"; }

  /// Parses `yaml` as <dir>/node.yaml against `env`.
  Result<NodeConfig> parse(const std::string &yaml, const Environment &env = {}) const {
    return parseNodeFile(yaml, nodeFile(), env);
  }
  /// Parses and resolves worker `index`.
  Result<WorkerConfig> worker(const std::string &yaml, const Environment &env = {},
                              int64_t index = 0) const {
    auto node = parse(yaml, env);
    if (!node.isOk())
      return node.status();
    return resolveWorker(*node, index);
  }
  /// The error message of parsing `yaml`, with "<dir>/node.yaml" shortened to "node.yaml".
  std::string error(const std::string &yaml, const Environment &env = {}) const {
    auto node = parse(yaml, env);
    if (node.isOk())
      return "(no error)";
    EXPECT_EQ(node.status().code(), StatusCode::kInvalidArgument) << node.status().toString();
    std::string msg = node.status().message();
    const std::string prefix = path_ + "/";
    for (size_t pos = msg.find(prefix); pos != std::string::npos; pos = msg.find(prefix))
      msg.erase(pos, prefix.size());
    return msg;
  }

private:
  rs::testing::TempDir tmp_{"rs_config_test_"};
  std::string path_ = tmp_.str();
};

} // namespace rs::config::testing
