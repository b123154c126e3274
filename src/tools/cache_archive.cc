//===- tools/cache_archive.cc - `reactant-server cache export|import` ------===//
#include "tools/cache_command.h"

#include "config/node_config.h"
#include "support/build_info.h"
#include "support/digest.h"

#include <archive.h>
#include <archive_entry.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <ostream>
#include <set>

#include <fcntl.h>
#include <unistd.h>

namespace rs::tools {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::string_view kManifestName = "MANIFEST.json";
constexpr std::string_view kSumsName = "SHA256SUMS";
constexpr size_t kChunkBytes = size_t{1} << 16;

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
    addCacheDir(fs::path(root.path) / ".cache", base + ".cache/", &files);
    for (fs::directory_iterator it(root.path, ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      if (hidden(it->path()) || it->is_symlink(ec) || !it->is_directory(ec))
        continue;
      const std::string bundle = it->path().filename().string();
      addCacheDir(it->path() / ".cache", base + bundle + "/.cache/", &files);
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

/// libarchive's message for `a`.
std::string archiveError(struct archive *a) {
  const char *e = archive_error_string(a);
  return e ? e : "unknown libarchive error";
}

using ArchivePtr = std::unique_ptr<struct archive, int (*)(struct archive *)>;
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

std::string temporaryBeside(const fs::path &path) {
  static std::atomic<uint64_t> counter{0};
  return (path.parent_path() /
          ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()) + "." +
           std::to_string(counter.fetch_add(1))))
      .string();
}

/// Writes `archive` from `roots`; MANIFEST.json's created_by is `created_by`.
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

/// What pass 1 of an import learnt about one member.
struct MemberFacts {
  int64_t size = 0;
  std::string sha256;
};

/// Opens `path` for reading (tar, optionally compressed).
Result<ArchivePtr> openForReading(const std::string &path) {
  ArchivePtr a(archive_read_new(), archive_read_free);
  archive_read_support_format_tar(a.get());
  archive_read_support_filter_all(a.get());
  if (archive_read_open_filename(a.get(), path.c_str(), kChunkBytes) != ARCHIVE_OK)
    return unavailable() << "cannot open " << path << ": " << archiveError(a.get());
  return a;
}

/// Splits member `name` into its root (one of `roots`) and the path inside it, checking
/// the rules of cache_command.h. InvalidArgument naming the member otherwise.
Result<std::pair<const CacheRoot *, std::string>> splitMember(const std::string &name,
                                                              const std::vector<CacheRoot> &roots) {
  for (const CacheRoot &r : roots) {
    if (name.size() <= r.name.size() + 1 || name.compare(0, r.name.size(), r.name) != 0 ||
        name[r.name.size()] != '/')
      continue;
    const std::string rel = name.substr(r.name.size() + 1);
    std::vector<std::string> parts;
    size_t start = 0;
    while (start <= rel.size()) {
      const size_t slash = std::min(rel.find('/', start), rel.size());
      parts.push_back(rel.substr(start, slash - start));
      start = slash + 1;
    }
    for (const std::string &p : parts)
      if (p.empty() || p == "." || p == "..")
        return invalidArgument() << "member " << name
                                 << " has an empty, '.' or '..' path component";
    if (r.kind == "model_repo") {
      const bool repo_level = parts.size() == 2 && parts[0] == ".cache";
      const bool bundle_level = parts.size() == 3 && parts[1] == ".cache" && parts[0][0] != '.';
      if ((!repo_level && !bundle_level) || parts.back()[0] == '.')
        return invalidArgument() << "member " << name << " is not a cache entry (expected "
                                 << r.name << "/.cache/<file> or " << r.name
                                 << "/<bundle>/.cache/<file>)";
    }
    return std::make_pair(&r, rel);
  }
  return invalidArgument() << "member " << name << " lies outside every root of the manifest";
}

/// Pass 1: reads every member, hashes it, and checks the archive against its manifest.
/// Returns the manifest's roots and files.
Result<std::pair<std::vector<CacheRoot>, std::map<std::string, MemberFacts>>>
checkArchive(const std::string &path) {
  RS_ASSIGN_OR_RETURN(ArchivePtr a, openForReading(path));
  std::string manifest_text, sums_text;
  bool have_manifest = false;
  std::map<std::string, MemberFacts> members;
  std::vector<char> buf(kChunkBytes);
  struct archive_entry *e = nullptr;
  int rc;
  while ((rc = archive_read_next_header(a.get(), &e)) == ARCHIVE_OK) {
    const std::string name = archive_entry_pathname(e) ? archive_entry_pathname(e) : "";
    if (archive_entry_filetype(e) != AE_IFREG)
      return invalidArgument() << "member " << name << " is not a regular file";
    if (members.count(name) || (name == kManifestName && have_manifest))
      return invalidArgument() << "member " << name << " appears twice";
    Sha256 sha;
    MemberFacts facts;
    la_ssize_t n;
    while ((n = archive_read_data(a.get(), buf.data(), buf.size())) > 0) {
      if (name == kManifestName)
        manifest_text.append(buf.data(), static_cast<size_t>(n));
      else if (name == kSumsName)
        sums_text.append(buf.data(), static_cast<size_t>(n));
      else
        sha.update(buf.data(), static_cast<size_t>(n));
      facts.size += n;
    }
    if (n < 0)
      return dataLoss() << "member " << name << " cannot be read: " << archiveError(a.get());
    if (name == kManifestName) {
      have_manifest = true;
    } else if (name != kSumsName) {
      facts.sha256 = sha.hexDigest();
      members[name] = std::move(facts);
    }
  }
  if (rc != ARCHIVE_EOF)
    return dataLoss() << "not a readable tar archive: " << archiveError(a.get());
  if (!have_manifest)
    return invalidArgument() << "no " << kManifestName << " member: not a cache archive";
  const json manifest = json::parse(manifest_text, nullptr, /*allow_exceptions=*/false);
  if (!manifest.is_object() || manifest.value("format", "") != kCacheArchiveFormat ||
      !manifest.contains("roots") || !manifest["roots"].is_array() || !manifest.contains("files") ||
      !manifest["files"].is_array())
    return invalidArgument() << kManifestName << " is not a '" << kCacheArchiveFormat
                             << "' manifest";
  std::vector<CacheRoot> roots;
  for (const json &r : manifest["roots"]) {
    if (!r.is_object() || !r.contains("name") || !r["name"].is_string())
      return invalidArgument() << kManifestName << ": a root without a name";
    roots.push_back({r["name"], r.value("kind", ""), r.value("path", "")});
    if (roots.back().kind != "model_repo" && roots.back().kind != "autotune_cache")
      return invalidArgument() << kManifestName << ": root " << roots.back().name
                               << " has unknown kind '" << roots.back().kind << "'";
  }
  std::map<std::string, MemberFacts> listed;
  for (const json &f : manifest["files"]) {
    if (!f.is_object() || !f.contains("path") || !f["path"].is_string() || !f.contains("size") ||
        !f["size"].is_number_integer() || !f.contains("sha256") || !f["sha256"].is_string())
      return invalidArgument() << kManifestName << ": a file entry without path, size or sha256";
    listed[f["path"]] = {f["size"].get<int64_t>(), f["sha256"]};
  }
  for (const auto &[name, want] : listed) {
    auto it = members.find(name);
    if (it == members.end())
      return dataLoss() << name << " is listed in " << kManifestName
                        << " but missing from the archive";
    if (it->second.size != want.size)
      return dataLoss() << name << " fails its checksum: " << it->second.size
                        << " bytes, the manifest says " << want.size;
    if (it->second.sha256 != want.sha256)
      return dataLoss() << name << " fails its checksum: SHA-256 " << it->second.sha256
                        << ", the manifest says " << want.sha256;
  }
  std::string sums;
  for (const auto &[name, want] : listed)
    sums += want.sha256 + "  " + name + "\n";
  if (sums_text != sums)
    return dataLoss() << kSumsName << " does not agree with " << kManifestName;
  for (const auto &[name, facts] : members) {
    if (!listed.count(name))
      return dataLoss() << "member " << name << " is not listed in " << kManifestName;
    RS_RETURN_IF_ERROR(splitMember(name, roots).status());
  }
  return std::make_pair(std::move(roots), std::move(listed));
}

/// Writes the current member of `a` to `dest` atomically, checking its checksum.
Status extractMember(struct archive *a, const std::string &name, const fs::path &dest,
                     const MemberFacts &want) {
  std::error_code ec;
  fs::create_directories(dest.parent_path(), ec);
  if (ec)
    return unavailable() << "cannot create " << dest.parent_path().string() << ": " << ec.message();
  const std::string tmp = temporaryBeside(dest);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return unavailable() << "cannot create " << tmp << ": " << std::strerror(errno);
  Sha256 sha;
  std::vector<char> buf(kChunkBytes);
  la_ssize_t n;
  Status s;
  while (s.isOk() && (n = archive_read_data(a, buf.data(), buf.size())) > 0) {
    sha.update(buf.data(), static_cast<size_t>(n));
    for (la_ssize_t done = 0; s.isOk() && done < n;) {
      const ssize_t w = ::write(fd, buf.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        s = unavailable() << "cannot write " << tmp << ": " << std::strerror(errno);
      else
        done += w;
    }
  }
  if (s.isOk() && n < 0)
    s = dataLoss() << "member " << name << " cannot be read: " << archiveError(a);
  if (s.isOk() && sha.hexDigest() != want.sha256)
    s = dataLoss() << name << " fails its checksum on the second read (the archive changed "
                   << "during the import)";
  if (s.isOk() && ::fsync(fd) != 0)
    s = unavailable() << "cannot flush " << tmp << ": " << std::strerror(errno);
  if (::close(fd) != 0 && s.isOk())
    s = unavailable() << "cannot close " << tmp << ": " << std::strerror(errno);
  if (s.isOk() && ::rename(tmp.c_str(), dest.c_str()) != 0)
    s = unavailable() << "cannot rename " << tmp << " to " << dest.string() << ": "
                      << std::strerror(errno);
  if (!s.isOk())
    ::unlink(tmp.c_str());
  return s;
}

Status importArchive(const std::vector<CacheRoot> &targets, const std::string &archive,
                     std::ostream &out) {
  Result<std::pair<std::vector<CacheRoot>, std::map<std::string, MemberFacts>>> checked =
      checkArchive(archive);
  if (!checked.isOk())
    return checked.status().withPrefix("archive " + archive + " refused (nothing was imported)");
  const auto &[roots, files] = *checked;
  std::map<std::string, const CacheRoot *> target_by_name;
  for (const CacheRoot &t : targets)
    target_by_name[t.name] = &t;
  for (const CacheRoot &r : roots) {
    auto it = target_by_name.find(r.name);
    if (it == target_by_name.end() || it->second->kind != r.kind)
      return failedPrecondition() << "archive " << archive << " holds " << r.name << " (" << r.kind
                                  << " " << r.path
                                  << " when exported) but the configuration has no such "
                                     "directory; nothing was imported";
  }

  RS_ASSIGN_OR_RETURN(ArchivePtr a, openForReading(archive));
  std::map<std::string, std::pair<int64_t, int64_t>> per_root; // files, bytes
  std::vector<std::string> skipped;
  struct archive_entry *e = nullptr;
  int rc;
  while ((rc = archive_read_next_header(a.get(), &e)) == ARCHIVE_OK) {
    const std::string name = archive_entry_pathname(e) ? archive_entry_pathname(e) : "";
    auto want = files.find(name);
    if (want == files.end()) // MANIFEST.json, SHA256SUMS
      continue;
    RS_ASSIGN_OR_RETURN(auto split, splitMember(name, roots));
    const CacheRoot &target = *target_by_name.at(split.first->name);
    const fs::path dest = fs::path(target.path) / split.second;
    std::error_code ec;
    if (target.kind == "model_repo" &&
        !fs::is_directory(dest.parent_path().parent_path(), ec)) { // the bundle (or repo)
      skipped.push_back(name);
      continue;
    }
    RS_RETURN_IF_ERROR(extractMember(a.get(), name, dest, want->second));
    per_root[target.name].first += 1;
    per_root[target.name].second += want->second.size;
  }
  if (rc != ARCHIVE_EOF)
    return dataLoss() << "archive " << archive << ": " << archiveError(a.get());
  int64_t count = 0, bytes = 0;
  for (const CacheRoot &r : roots) {
    const CacheRoot &t = *target_by_name.at(r.name);
    out << r.name << " -> " << t.path << ": " << per_root[r.name].first << " files, "
        << per_root[r.name].second << " bytes\n";
    count += per_root[r.name].first;
    bytes += per_root[r.name].second;
  }
  for (const std::string &s : skipped)
    out << "skipped " << s << " (no such bundle in the repository)\n";
  out << "imported " << count << " files (" << bytes << " bytes) from " << archive;
  if (!skipped.empty())
    out << ", skipped " << skipped.size();
  out << "\n";
  return Status::ok();
}

} // namespace

Result<std::vector<CacheRoot>> resolveCacheRoots(const CacheSourceOptions &options) {
  config::Environment env = config::processEnvironment();
  Result<config::NodeConfig> node = Status(internalError() << "unset");
  if (!options.config.empty()) {
    node = config::loadNodeFile(options.config, env);
  } else {
    if (options.model_repo.empty())
      return invalidArgument() << "give a node file (--config node.yaml) or --model-repo DIR";
    node = config::parseNodeFile("model_repo: \"" + options.model_repo + "\"\n", "<command line>",
                                 env);
  }
  if (!node.isOk())
    return node.status();
  if (!options.model_repo.empty())
    node->model_repo = options.model_repo;
  const size_t listed = config::listedWorkerCount(*node);
  std::vector<std::string> repos, autotune;
  auto addOnce = [](std::vector<std::string> &v, const std::string &dir) {
    const std::string abs = fs::absolute(dir).lexically_normal().string();
    if (std::find(v.begin(), v.end(), abs) == v.end())
      v.push_back(abs);
  };
  for (size_t i = 0; i < std::max<size_t>(listed, 1); ++i) {
    RS_ASSIGN_OR_RETURN(config::WorkerConfig w,
                        config::resolveWorker(*node, static_cast<int64_t>(i)));
    for (const std::string &d : w.model_dirs)
      addOnce(repos, d);
    if (options.autotune_cache_dir.empty() && !w.runtime.autotune_cache_dir.empty() &&
        w.runtime.autotune_cache.value_or(true))
      addOnce(autotune, w.runtime.autotune_cache_dir);
  }
  if (!options.autotune_cache_dir.empty())
    addOnce(autotune, options.autotune_cache_dir);
  std::vector<CacheRoot> roots;
  for (size_t i = 0; i < repos.size(); ++i)
    roots.push_back({"model_repos/" + std::to_string(i), "model_repo", repos[i]});
  for (size_t i = 0; i < autotune.size(); ++i)
    roots.push_back({"autotune_cache/" + std::to_string(i), "autotune_cache", autotune[i]});
  return roots;
}

int runCacheExport(const CacheSourceOptions &options, const std::string &archive, std::ostream &out,
                   std::ostream &err) {
  Result<std::vector<CacheRoot>> roots = resolveCacheRoots(options);
  Status s =
      roots.isOk() ? exportArchive(*roots, archive, thisBuild().toString(), out) : roots.status();
  if (!s.isOk()) {
    err << "cache export: " << s.message() << "\n";
    return kCacheError;
  }
  return kCacheOk;
}

int runCacheImport(const CacheSourceOptions &options, const std::string &archive, std::ostream &out,
                   std::ostream &err) {
  Result<std::vector<CacheRoot>> roots = resolveCacheRoots(options);
  Status s = roots.isOk() ? importArchive(*roots, archive, out) : roots.status();
  if (!s.isOk()) {
    err << "cache import: " << s.message() << "\n";
    return kCacheError;
  }
  return kCacheOk;
}

} // namespace rs::tools
