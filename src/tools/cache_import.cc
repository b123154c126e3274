//===- tools/cache_import.cc - `reactant-server cache import` ---------------===//
#include "tools/cache_archive_impl.h"

#include "runtime/executable_cache.h"
#include "support/digest.h"

#include <archive_entry.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include <fcntl.h>
#include <unistd.h>

namespace rs::tools::cache_detail {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

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
    roots.push_back({r["name"], r.value("kind", ""), r.value("path", ""), "", ""});
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

/// Where member `rel` (the path inside root `target`, checked by splitMember) is written:
/// an autotune file under the directory; a model repository's `.cache/<file>` in its
/// repository entries' directory, `<bundle>/.cache/<file>` in the bundle's entries'
/// directory (runtime::executableCacheDir). NotFound with the reason it is skipped when
/// the repository does not hold that bundle (a `.cache/` alone would not make one).
Result<fs::path> destination(const CacheRoot &target, const std::string &rel) {
  if (target.kind != "model_repo")
    return fs::path(target.path) / rel;
  const fs::path member(rel);
  const std::string file = member.filename().string();
  std::error_code ec;
  if (!fs::is_directory(target.path, ec))
    return notFound() << "no such model repository";
  if (member.begin()->string() == ".cache") {
    if (target.repository_entries.empty())
      return notFound() << "the repository's entries come from an earlier repository";
    return fs::path(target.repository_entries) / file;
  }
  const fs::path bundle = fs::path(target.path) / *member.begin();
  if (!fs::is_directory(bundle, ec))
    return notFound() << "no such bundle in the repository";
  return fs::path(runtime::executableCacheDir(bundle.string(), target.cache_dir)) / file;
}

} // namespace

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
    Result<fs::path> dest = destination(target, split.second);
    if (!dest.isOk()) {
      skipped.push_back(name + " (" + dest.status().message() + ")");
      continue;
    }
    RS_RETURN_IF_ERROR(extractMember(a.get(), name, *dest, want->second));
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
    out << "skipped " << s << "\n";
  out << "imported " << count << " files (" << bytes << " bytes) from " << archive;
  if (!skipped.empty())
    out << ", skipped " << skipped.size();
  out << "\n";
  return Status::ok();
}

} // namespace rs::tools::cache_detail
