//===- tools/cache_export.cc - `reactant-server cache export` ---------------===//
#include "tools/cache_archive_impl.h"

#include "runtime/executable_cache.h"
#include "support/digest.h"

#include <archive_entry.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>

#include <fcntl.h>
#include <unistd.h>

namespace rs::tools::cache_detail {

namespace fs = std::filesystem;
using nlohmann::json;

/// libarchive's message for `a`.
std::string archiveError(struct archive *a) {
  const char *e = archive_error_string(a);
  return e ? e : "unknown libarchive error";
}

std::string temporaryBeside(const fs::path &path) {
  static std::atomic<uint64_t> counter{0};
  return (path.parent_path() /
          ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()) + "." +
           std::to_string(counter.fetch_add(1))))
      .string();
}

namespace {

/// One file of the archive.
struct CacheFile {
  std::string name;   // member name: "<root name>/<relative path>"
  std::string source; // the file on disk (export)
  int64_t size = 0;
  std::string sha256;
};

bool hidden(const fs::path &p) {
  const std::string n = p.filename().string();
  return !n.empty() && n[0] == '.';
}

/// Regular, non-hidden files directly in `dir` (none when it does not exist).
void addCacheDir(const fs::path &dir, const std::string &prefix, std::vector<CacheFile> *out) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (hidden(it->path()) || it->is_symlink(ec) || !it->is_regular_file(ec))
      continue;
    out->push_back({prefix + it->path().filename().string(), it->path().string(), 0, ""});
  }
}

/// The cache files of `root` (see cache_command.h), unsorted.
Result<std::vector<CacheFile>> listRoot(const CacheRoot &root) {
  std::vector<CacheFile> files;
  std::error_code ec;
  if (!fs::is_directory(root.path, ec)) {
    if (root.kind == "autotune_cache" && !fs::exists(root.path, ec))
      return files; // configured but not made yet (the CPU backend never makes it)
    return notFound() << root.kind << " " << root.path << " is not a directory";
  }
  const std::string base = root.name + "/";
  if (root.kind == "model_repo") {
    if (!root.repository_entries.empty())
      addCacheDir(root.repository_entries, base + ".cache/", &files);
    for (fs::directory_iterator it(root.path, ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      if (hidden(it->path()) || it->is_symlink(ec) || !it->is_directory(ec))
        continue;
      const std::string bundle = it->path().filename().string();
      addCacheDir(runtime::executableCacheDir(it->path().string(), root.cache_dir),
                  base + bundle + "/.cache/", &files);
    }
  } else {
    fs::recursive_directory_iterator it(root.path, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      if (hidden(it->path())) {
        if (it->is_directory(ec))
          it.disable_recursion_pending();
        continue;
      }
      if (it->is_symlink(ec) || !it->is_regular_file(ec))
        continue;
      files.push_back({base + fs::relative(it->path(), root.path).generic_string(),
                       it->path().string(), 0, ""});
    }
  }
  if (ec)
    return unavailable() << "cannot list " << root.path << ": " << ec.message();
  return files;
}

/// Hashes `file.source` into `file.size` and `file.sha256`.
Status hashFile(CacheFile &file) {
  std::ifstream in(file.source, std::ios::binary);
  if (!in)
    return unavailable() << "cannot read " << file.source << ": " << std::strerror(errno);
  Sha256 sha;
  std::vector<char> buf(kChunkBytes);
  int64_t size = 0;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::streamsize n = in.gcount();
    sha.update(buf.data(), static_cast<size_t>(n));
    size += n;
  }
  if (in.bad())
    return unavailable() << "cannot read " << file.source;
  file.size = size;
  file.sha256 = sha.hexDigest();
  return Status::ok();
}

using EntryPtr = std::unique_ptr<struct archive_entry, void (*)(struct archive_entry *)>;

/// Writes one member header for a regular file of `size` bytes.
Status writeHeader(struct archive *a, const std::string &name, int64_t size) {
  EntryPtr e(archive_entry_new(), archive_entry_free);
  archive_entry_set_pathname(e.get(), name.c_str());
  archive_entry_set_size(e.get(), size);
  archive_entry_set_filetype(e.get(), AE_IFREG);
  archive_entry_set_perm(e.get(), 0644);
  archive_entry_set_mtime(e.get(), std::time(nullptr), 0);
  if (archive_write_header(a, e.get()) != ARCHIVE_OK)
    return unavailable() << "cannot write member " << name << ": " << archiveError(a);
  return Status::ok();
}

Status writeData(struct archive *a, const std::string &name, const char *data, size_t size) {
  if (size > 0 && archive_write_data(a, data, size) != static_cast<la_ssize_t>(size))
    return unavailable() << "cannot write member " << name << ": " << archiveError(a);
  return Status::ok();
}

Status writeMember(struct archive *a, const std::string &name, const std::string &bytes) {
  RS_RETURN_IF_ERROR(writeHeader(a, name, static_cast<int64_t>(bytes.size())));
  return writeData(a, name, bytes.data(), bytes.size());
}

/// Copies `file.source` into the archive, checking that it still has its checksum.
Status writeFileMember(struct archive *a, const CacheFile &file) {
  RS_RETURN_IF_ERROR(writeHeader(a, file.name, file.size));
  std::ifstream in(file.source, std::ios::binary);
  Sha256 sha;
  std::vector<char> buf(kChunkBytes);
  int64_t size = 0;
  while (in && size < file.size) {
    in.read(buf.data(), static_cast<std::streamsize>(
                            std::min<int64_t>(static_cast<int64_t>(buf.size()), file.size - size)));
    const size_t n = static_cast<size_t>(in.gcount());
    sha.update(buf.data(), n);
    RS_RETURN_IF_ERROR(writeData(a, file.name, buf.data(), n));
    size += static_cast<int64_t>(n);
  }
  if (size != file.size || sha.hexDigest() != file.sha256)
    return failedPrecondition() << file.source
                                << " changed while it was exported (is a worker writing the "
                                   "cache?); export again";
  return Status::ok();
}

/// fsync()s `path` (the archive before its rename).
Status syncFile(const std::string &path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return unavailable() << "cannot open " << path << ": " << std::strerror(errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0)
    return unavailable() << "cannot flush " << path << ": " << std::strerror(err);
  return Status::ok();
}

} // namespace

Status exportArchive(const std::vector<CacheRoot> &roots, const std::string &archive,
                     const std::string &created_by, std::ostream &out) {
  std::vector<CacheFile> files;
  std::map<std::string, std::pair<int64_t, int64_t>> per_root; // files, bytes
  for (const CacheRoot &root : roots) {
    RS_ASSIGN_OR_RETURN(std::vector<CacheFile> listed, listRoot(root));
    for (CacheFile &f : listed) {
      RS_RETURN_IF_ERROR(hashFile(f));
      per_root[root.name].first += 1;
      per_root[root.name].second += f.size;
      files.push_back(std::move(f));
    }
  }
  std::sort(files.begin(), files.end(),
            [](const CacheFile &a, const CacheFile &b) { return a.name < b.name; });

  json manifest = {{"format", kCacheArchiveFormat},
                   {"created_by", created_by},
                   {"roots", json::array()},
                   {"files", json::array()}};
  for (const CacheRoot &r : roots)
    manifest["roots"].push_back({{"name", r.name}, {"kind", r.kind}, {"path", r.path}});
  std::string sums;
  int64_t total = 0;
  for (const CacheFile &f : files) {
    manifest["files"].push_back({{"path", f.name}, {"size", f.size}, {"sha256", f.sha256}});
    sums += f.sha256 + "  " + f.name + "\n";
    total += f.size;
  }

  const fs::path target = fs::absolute(archive);
  const std::string tmp = temporaryBeside(target);
  ArchivePtr a(archive_write_new(), archive_write_free);
  archive_write_set_format_pax_restricted(a.get());
  if (archive_write_open_filename(a.get(), tmp.c_str()) != ARCHIVE_OK)
    return unavailable() << "cannot create " << tmp << ": " << archiveError(a.get());
  Status s = writeMember(a.get(), std::string(kManifestName), manifest.dump(2) + "\n");
  if (s.isOk())
    s = writeMember(a.get(), std::string(kSumsName), sums);
  for (size_t i = 0; s.isOk() && i < files.size(); ++i)
    s = writeFileMember(a.get(), files[i]);
  if (s.isOk() && archive_write_close(a.get()) != ARCHIVE_OK)
    s = unavailable() << "cannot write " << tmp << ": " << archiveError(a.get());
  a.reset();
  if (s.isOk())
    s = syncFile(tmp);
  if (s.isOk() && ::rename(tmp.c_str(), target.c_str()) != 0)
    s = unavailable() << "cannot rename " << tmp << " to " << target.string() << ": "
                      << std::strerror(errno);
  if (!s.isOk()) {
    ::unlink(tmp.c_str());
    return s;
  }
  for (const CacheRoot &r : roots)
    out << r.name << " (" << r.kind << " " << r.path << "): " << per_root[r.name].first
        << " files, " << per_root[r.name].second << " bytes\n";
  out << "exported " << files.size() << " files (" << total << " bytes) to " << target.string()
      << "\n";
  return Status::ok();
}

} // namespace rs::tools::cache_detail
