//===- test/bundle/test_util.h - helpers for bundle tests ------------------===//
//
// Temporary directories, raw file writing and editing, fixture paths and the error check
// shared by the bundle tests.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "support/status.h"

#include <gtest/gtest.h>

namespace rs::bundle::testing {

inline std::string sharedDir() { return RS_SHARED_DIR; }
inline std::string fixtureBundle(const std::string &model) {
  return sharedDir() + "/fixtures/bundles/" + model;
}
inline std::string goldenFile(const std::string &model, const std::string &file) {
  return sharedDir() + "/fixtures/golden/" + model + "/" + file;
}

/// A fresh directory under the test temp dir, removed with its contents on destruction.
class TempDir {
public:
  TempDir() {
    std::string tmpl = std::filesystem::temp_directory_path().string() + "/rs_bundle_test_XXXXXX";
    char *made = ::mkdtemp(tmpl.data());
    EXPECT_NE(made, nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

inline void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Replaces the first `from` in the file at `path` by `to` (a test failure if absent).
inline void replaceInFile(const std::string &path, const std::string &from, const std::string &to) {
  std::string text = readFile(path);
  const size_t pos = text.find(from);
  ASSERT_NE(pos, std::string::npos) << from << " not in " << path;
  text.replace(pos, from.size(), to);
  writeFile(path, text);
}

/// Expects `b` to have failed with `code` and exactly `message`.
template <typename T>
void expectError(const Result<T> &b, StatusCode code, const std::string &message) {
  ASSERT_FALSE(b.isOk());
  EXPECT_EQ(b.status().code(), code) << b.status().toString();
  EXPECT_EQ(b.status().message(), message);
}

/// Bytes of a safetensors file: length prefix, `header` verbatim, then `data`.
inline std::string safetensorsBytes(const std::string &header, const std::string &data) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

} // namespace rs::bundle::testing
