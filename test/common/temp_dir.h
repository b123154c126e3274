//===- test/common/temp_dir.h - A temporary directory for one test ---------===//
#pragma once

#include <filesystem>
#include <string>

namespace rs::testing {

/// A fresh directory under the system temp dir (mkdtemp, so tests running in parallel never
/// share one), removed with its contents at the end, read-only entries included.
class TempDir {
public:
  /// `prefix` names the directory (`<prefix>XXXXXX`) so a leftover shows which test made it.
  explicit TempDir(const std::string &prefix = "rs_test_");
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::filesystem::path &path() const { return path_; }
  /// The path as a string.
  std::string str() const { return path_.string(); }
  /// The path of `name` in the directory (not created).
  std::string file(const std::string &name) const { return (path_ / name).string(); }

private:
  std::filesystem::path path_;
};

} // namespace rs::testing
