//===- tools/cache_archive_impl.h - Private: the cache archive's two halves -===//
//
// What `cache export` (tools/cache_export.cc) and `cache import` (tools/cache_import.cc)
// share: the member names of the archive's own files, libarchive's handles and messages,
// and the temporary-file name of an atomic write. Not part of the public API.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tools/cache_command.h"

#include <archive.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace rs::tools::cache_detail {

constexpr std::string_view kManifestName = "MANIFEST.json";
constexpr std::string_view kSumsName = "SHA256SUMS";
constexpr size_t kChunkBytes = size_t{1} << 16;

using ArchivePtr = std::unique_ptr<struct archive, int (*)(struct archive *)>;

/// libarchive's message for `a`.
std::string archiveError(struct archive *a);

/// A name for a temporary file next to `path` (renamed over it once complete).
std::string temporaryBeside(const std::filesystem::path &path);

/// Writes `archive` from `roots`; MANIFEST.json's created_by is `created_by`.
Status exportArchive(const std::vector<CacheRoot> &roots, const std::string &archive,
                     const std::string &created_by, std::ostream &out);

/// Checks `archive` whole against its manifest, then extracts it into `targets` (nothing
/// is written when the check fails).
Status importArchive(const std::vector<CacheRoot> &targets, const std::string &archive,
                     std::ostream &out);

} // namespace rs::tools::cache_detail
