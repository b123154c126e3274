//===- test/e2e_repro/repro_util.h - Workers on temporary bundle copies ----===//
//
// End-to-end reproducibility tests (seed/reproducibility.md, issue 5) run server::Worker
// in-process on copies of the fixture bundles in a temporary directory (so `.cache/` is
// writable), talk to it through its InferenceService, and capture its log lines.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundle/safetensors.h"
#include "common/files.h"
#include "common/temp_dir.h"
#include "common/test_worker.h"
#include "config/node_config.h"
#include "protocol/service.h"
#include "server/worker.h"
#include "server/worker_service.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <sstream>
#include <string>
#include <vector>

namespace rs::repro {

namespace fs = std::filesystem;

inline const fs::path kBundles = fs::path(RS_SHARED_DIR) / "fixtures" / "bundles";
inline const fs::path kGolden = fs::path(RS_SHARED_DIR) / "fixtures" / "golden";

/// A temporary model repository holding writable copies of fixture bundles.
class TempRepo {
public:
  explicit TempRepo(const std::vector<std::string> &models) : root_("rs_repro_") {
    fs::create_directories(repo());
    for (const std::string &m : models)
      rs::testing::copyBundleFiles(kBundles / m, repo() / m);
  }
  TempRepo(const TempRepo &) = delete;
  TempRepo &operator=(const TempRepo &) = delete;

  fs::path repo() const { return root_.path() / "repo"; }
  fs::path root() const { return root_.path(); }
  /// The entries in <repo>/<model>/.cache, sorted.
  std::vector<fs::path> cacheEntries(const std::string &model) const {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(repo() / model / ".cache", ec))
      out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }

private:
  rs::testing::TempDir root_;
};

/// A worker configuration from a node file whose `global:` block is `global_yaml`
/// (indented by two spaces) over `repo`, resolved against `env`.
inline Result<config::WorkerConfig> workerConfig(const fs::path &repo,
                                                 const std::string &global_yaml,
                                                 const config::Environment &env = {}) {
  const std::string yaml = "model_repo: \"" + repo.string() +
                           "\"\nglobal:\n  endpoints: {host: 127.0.0.1, http_port: 0}\n" +
                           global_yaml;
  return rs::testing::firstWorker(yaml, (repo.parent_path() / "node.yaml").string(), env);
}

/// A started worker (ephemeral ports). Fails the test when start() fails.
inline std::unique_ptr<server::Worker> startWorker(const config::WorkerConfig &config) {
  Result<std::unique_ptr<server::Worker>> w = rs::testing::startWorker(config);
  EXPECT_TRUE(w.isOk()) << w.status().toString();
  return w.isOk() ? std::move(w).value() : nullptr;
}

/// The worker's WorkerService (what Worker::service() is).
inline server::WorkerService &workerService(server::Worker &w) {
  return static_cast<server::WorkerService &>(w.service());
}

/// Sends `request` and waits for the reply.
inline Result<protocol::InferResponse> infer(server::Worker &w, protocol::InferRequest request) {
  std::promise<Result<protocol::InferResponse>> done;
  auto future = done.get_future();
  w.service().infer(std::move(request),
                    [&done](Result<protocol::InferResponse> r) { done.set_value(std::move(r)); });
  return future.get();
}

inline std::string bytesOf(const Tensor &t) {
  return std::string(reinterpret_cast<const char *>(t.data()), static_cast<size_t>(t.byteSize()));
}

/// Every output's name and bytes, in order.
inline std::string replyBytes(const protocol::InferResponse &r) {
  std::string all;
  for (const auto &o : r.outputs)
    all += o.name + ":" + bytesOf(o.tensor) + ";";
  return all;
}

/// The tensor `name` of golden/<model>/<file>.
inline Tensor golden(const std::string &model, const std::string &file, const std::string &name) {
  auto f = bundle::SafetensorsFile::open((kGolden / model / file).string());
  EXPECT_TRUE(f.isOk()) << f.status().toString();
  if (!f.isOk())
    return {};
  auto t = f->tensor(name);
  EXPECT_TRUE(t.isOk()) << t.status().toString();
  return t.isOk() ? *t : Tensor{};
}

/// Rows `rows` (indices along axis 0, repeats allowed) of `t`, as a new tensor.
inline Tensor pickRows(const Tensor &t, const std::vector<int64_t> &rows) {
  Shape shape = t.shape();
  const int64_t row_bytes = t.byteSize() / shape[0];
  shape[0] = static_cast<int64_t>(rows.size());
  Tensor out = Tensor::zeros(t.dtype(), shape);
  for (size_t i = 0; i < rows.size(); ++i)
    std::memcpy(out.mutableData() + static_cast<int64_t>(i) * row_bytes,
                t.data() + rows[i] * row_bytes, static_cast<size_t>(row_bytes));
  return out;
}

/// Row `row` of `t` along axis 0, as bytes.
inline std::string rowBytes(const Tensor &t, int64_t row) {
  const int64_t row_bytes = t.byteSize() / t.shape()[0];
  return std::string(reinterpret_cast<const char *>(t.data()) + row * row_bytes,
                     static_cast<size_t>(row_bytes));
}

/// Captures the default logger's lines ("[level] message") while alive.
class LogCapture {
public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(os_)) {
    sink_->set_pattern("[%l] %v");
    spdlog::default_logger()->sinks().push_back(sink_);
  }
  ~LogCapture() {
    auto &sinks = spdlog::default_logger()->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  std::string text() const { return os_.str(); }
  /// Lines containing `what`.
  std::vector<std::string> lines(std::string_view what) const {
    std::vector<std::string> out;
    std::istringstream in(text());
    std::string line;
    while (std::getline(in, line))
      if (line.find(what) != std::string::npos)
        out.push_back(line);
    return out;
  }
  size_t count(std::string_view what) const { return lines(what).size(); }

private:
  std::ostringstream os_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

} // namespace rs::repro
