//===- test/runtime/runtime_test_util.h - Temporary bundles and inputs -----===//
#pragma once

#include "bundle/safetensors.h"
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

/// A temporary directory, removed (made writable first) at the end.
class TempDir {
public:
  TempDir() {
    std::string tmpl = fs::temp_directory_path().string() + "/rs_runtime_test_XXXXXX";
    EXPECT_NE(::mkdtemp(tmpl.data()), nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(path_, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const fs::path &path() const { return path_; }

  /// Copies fixture bundle `model` (top-level files only) to <dir>/<model>, writable.
  fs::path copyBundle(const std::string &model) const {
    const fs::path to = path_ / model;
    fs::create_directories(to);
    for (const auto &e : fs::directory_iterator(kBundles / model))
      if (e.is_regular_file())
        fs::copy_file(e.path(), to / e.path().filename());
    fs::permissions(to, fs::perms::owner_all, fs::perm_options::add);
    for (const auto &e : fs::directory_iterator(to))
      fs::permissions(e.path(), fs::perms::owner_read | fs::perms::owner_write,
                      fs::perm_options::add);
    return to;
  }

private:
  fs::path path_;
};

inline std::string readFile(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void writeFile(const fs::path &p, const std::string &bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
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
