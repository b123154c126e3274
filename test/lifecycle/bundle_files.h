//===- test/lifecycle/bundle_files.h - Writable bundle copies for the tests --===//
//
// A temporary model repository (removed at the end of the test) holding writable copies
// of the fixture bundles, and the edits the lifecycle tests make to them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundle/safetensors.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace rs::lifecycle_test {

namespace fs = std::filesystem;

inline const fs::path kFixtures = fs::path(RS_SHARED_DIR) / "fixtures" / "bundles";

/// A fresh directory under the system temporary directory, removed with its contents.
struct TempRepo {
  fs::path root;
  TempRepo() {
    std::random_device rd;
    root = fs::temp_directory_path() / ("rs_lifecycle_" + std::to_string(rd()));
    fs::create_directories(root);
  }
  ~TempRepo() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  /// Copies the fixture bundle's files (writable) to root/name.
  fs::path copyBundle(const std::string &fixture, const std::string &name) const {
    const fs::path dst = root / name;
    fs::create_directories(dst);
    for (const auto &e : fs::directory_iterator(kFixtures / fixture))
      if (e.is_regular_file()) {
        fs::copy_file(e.path(), dst / e.path().filename());
        fs::permissions(dst / e.path().filename(), fs::perms::owner_write, fs::perm_options::add);
      }
    return dst;
  }
};

/// Rewrites `dir`/weights.safetensors with every f32 weight scaled by `factor`, through a
/// temporary file renamed into place (the old file stays valid for its mappings).
inline void scaleWeights(const fs::path &dir, float factor) {
  const std::string path = (dir / "weights.safetensors").string();
  auto file = bundle::SafetensorsFile::open(path);
  ASSERT_TRUE(file.isOk()) << file.status().toString();
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const std::string &name : file->names()) {
    auto t = file->tensor(name);
    ASSERT_TRUE(t.isOk());
    Tensor copy = Tensor::copyOf(t->dtype(), t->shape(), t->bytes());
    if (copy.dtype() == DType::kF32)
      for (int64_t i = 0; i < copy.numElements(); ++i)
        copy.mutableDataAs<float>()[i] *= factor;
    tensors.emplace_back(name, copy);
  }
  ASSERT_TRUE(bundle::writeSafetensors(path, tensors, file->metadata()).isOk());
}

/// The iris_mlp input the tests send: one row of four features.
inline Tensor irisInput() {
  Tensor t = Tensor::zeros(DType::kF32, {1, 4});
  const float v[4] = {0.5f, -1.25f, 0.75f, 2.0f};
  for (int i = 0; i < 4; ++i)
    t.mutableDataAs<float>()[i] = v[i];
  return t;
}

} // namespace rs::lifecycle_test
