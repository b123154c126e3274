//===- test/common/files.h - Reading and writing whole files in tests ------===//
#pragma once

#include <filesystem>
#include <string>

namespace rs::testing {

/// The bytes of the file at `path`; empty when it cannot be read.
std::string readFile(const std::filesystem::path &path);

/// Writes `bytes` to `path`, replacing it; a test failure (ADD_FAILURE) when it cannot.
void writeFile(const std::filesystem::path &path, const std::string &bytes);

/// Copies the regular files directly in `from` (a bundle directory: manifest, programs,
/// weights) into `to`, created if needed; `to` and every copy are owner-writable whatever
/// the source's bits.
void copyBundleFiles(const std::filesystem::path &from, const std::filesystem::path &to);

} // namespace rs::testing
