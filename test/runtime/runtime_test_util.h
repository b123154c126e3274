//===- test/runtime/runtime_test_util.h - Temporary bundles and inputs -----===//
#pragma once

#include "bundle/safetensors.h"
#include "common/files.h"
#include "common/temp_dir.h"
#include "support/tensor.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace rs::runtime::testing {

namespace fs = std::filesystem;

inline const fs::path kBundles = fs::path(RS_SHARED_DIR) / "fixtures" / "bundles";
inline const fs::path kGolden = fs::path(RS_SHARED_DIR) / "fixtures" / "golden";

using rs::testing::readFile;
using rs::testing::TempDir;
using rs::testing::writeFile;

/// Copies fixture bundle `model` (top-level files only) to <dir>/<model>, writable.
inline fs::path copyBundle(const TempDir &dir, const std::string &model) {
  const fs::path to = dir.path() / model;
  rs::testing::copyBundleFiles(kBundles / model, to);
  return to;
}

/// The tensor `name` of golden/<model>/<file>.
inline Tensor goldenTensor(const std::string &model, const std::string &file,
                           const std::string &name) {
  auto f = bundle::SafetensorsFile::open((kGolden / model / file).string());
  EXPECT_TRUE(f.isOk()) << f.status().toString();
  if (!f.isOk())
    return {};
  auto t = f->tensor(name);
  EXPECT_TRUE(t.isOk()) << t.status().toString();
  return t.isOk() ? *t : Tensor{};
}

/// Captures the default logger's lines while alive.
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
  size_t count(std::string_view what) const {
    const std::string t = text();
    size_t n = 0;
    for (size_t p = t.find(what); p != std::string::npos; p = t.find(what, p + 1))
      ++n;
    return n;
  }

private:
  std::ostringstream os_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

inline std::string bytesOf(const Tensor &t) {
  return std::string(reinterpret_cast<const char *>(t.data()), static_cast<size_t>(t.byteSize()));
}

} // namespace rs::runtime::testing
