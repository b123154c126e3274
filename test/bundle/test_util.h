//===- test/bundle/test_util.h - helpers for bundle tests ------------------===//
//
// Raw file editing, fixture paths and the error check
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

#include "common/files.h"
#include "common/temp_dir.h"
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

using rs::testing::readFile;
using rs::testing::TempDir;
using rs::testing::writeFile;

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
