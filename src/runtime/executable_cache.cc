//===- runtime/executable_cache.cc - Compiled programs kept in .cache/ -----===//
#include "runtime/executable_cache.h"
#include "support/file.h"

#include "ir/printer.h"
#include "support/digest.h"

#include <openssl/crypto.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <unistd.h>

namespace rs::runtime {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMagic = "reactant-server executable cache entry 1";
constexpr std::string_view kKeyFormat = "reactant-server executable cache key 1";
constexpr std::string_view kSuffix = ".rsexe";

/// Appends "<name> <size>\n<value>\n" so that no two field lists hash alike.
void addField(std::string &out, std::string_view name, std::string_view value) {
  out += name;
  out += ' ';
  out += std::to_string(value.size());
  out += '\n';
  out += value;
  out += '\n';
}

/// Splits off the next '\n'-terminated header line of `rest`; false when there is none.
bool nextLine(std::string_view &rest, std::string_view *line) {
  const size_t nl = rest.find('\n');
  if (nl == std::string_view::npos)
    return false;
  *line = rest.substr(0, nl);
  rest.remove_prefix(nl + 1);
  return true;
}

/// HMAC-SHA256 under `hmac_key` of the entry's cache key and payload, as 64 hex digits.
std::string entryMac(std::string_view hmac_key, std::string_view key, std::string_view payload) {
  std::string material;
  material.reserve(key.size() + 1 + payload.size());
  material.append(key).append("\n").append(payload);
  return hmacSha256Hex(hmac_key, material);
}

/// `expected` == `got`, compared in constant time (no timing oracle on the MAC).
bool hmacMatches(const std::string &expected, std::string_view got) {
  return expected.size() == got.size() &&
         CRYPTO_memcmp(expected.data(), got.data(), got.size()) == 0;
}

/// The payload of an entry whose header names `key`, or the reason it is unusable. With
/// `hmac_key` set, the entry must carry the HMAC-SHA256 of its key and payload under it.
Result<std::string_view> parseEntry(std::string_view bytes, std::string_view key,
                                    std::string_view hmac_key) {
  std::string_view rest = bytes, line;
  if (!nextLine(rest, &line) || line != kMagic)
    return dataLoss() << "corrupt entry: not a reactant-server cache entry";
  std::string_view entry_key, size_text, digest, hmac;
  for (int i = 0;; ++i) {
    if (!nextLine(rest, &line) || i > 5)
      return dataLoss() << "corrupt entry: truncated header";
    if (line.empty())
      break;
    const size_t sp = line.find(' ');
    const std::string_view field = line.substr(0, sp);
    const std::string_view value = sp == std::string_view::npos ? "" : line.substr(sp + 1);
    if (field == "key")
      entry_key = value;
    else if (field == "size")
      size_text = value;
    else if (field == "sha256")
      digest = value;
    else if (field == "hmac-sha256")
      hmac = value;
    else if (field != "program")
      return dataLoss() << "corrupt entry: unexpected header field '" << field << "'";
  }
  if (entry_key != key)
    return failedPrecondition() << "foreign entry: it holds key " << entry_key.substr(0, 16)
                                << "..., expected " << key.substr(0, 16) << "...";
  uint64_t size = 0;
  for (char c : size_text) {
    if (c < '0' || c > '9' || size > (uint64_t{1} << 50))
      return dataLoss() << "corrupt entry: bad size '" << size_text << "'";
    size = size * 10 + static_cast<uint64_t>(c - '0');
  }
  if (size_text.empty())
    return dataLoss() << "corrupt entry: missing size";
  if (rest.size() != size)
    return dataLoss() << "corrupt entry: payload is " << rest.size() << " bytes, header says "
                      << size << (rest.size() < size ? " (truncated)" : "");
  if (sha256Hex(rest) != digest)
    return dataLoss() << "corrupt entry: payload checksum mismatch";
  if (!hmac_key.empty()) {
    if (hmac.empty())
      return StatusBuilder(StatusCode::kPermissionDenied)
             << "unauthenticated entry: no HMAC (runtime."
                "executable_cache_key_file is set)";
    if (!hmacMatches(entryMac(hmac_key, key, rest), hmac))
      return StatusBuilder(StatusCode::kPermissionDenied)
             << "forged entry: HMAC mismatch (not written with "
                "runtime.executable_cache_key_file's key)";
  }
  return rest;
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory,
/// fsync, rename. Returns the OS error text on failure.
Status writeAtomically(const fs::path &path, std::string_view bytes) {
  static std::atomic<uint64_t> counter{0};
  const fs::path tmp =
      path.parent_path() / ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()) +
                            "." + std::to_string(counter.fetch_add(1)));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return unavailable() << "cannot create " << tmp.string() << ": " << std::strerror(errno);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return unavailable() << "cannot write " << tmp.string() << ": " << std::strerror(err);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return unavailable() << "cannot flush " << tmp.string() << ": " << std::strerror(err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return unavailable() << "cannot rename " << tmp.string() << " to " << path.string() << ": "
                         << std::strerror(err);
  }
  return Status::ok();
}

/// Whether `dir`'s permission bits let anyone write to it. Checked before writing, as
/// well as the OS's answer, so that a bundle made read-only by its mode (the shared
/// fixtures, a validated bundle) stays untouched even for a process running as root.
bool modeAllowsWriting(const fs::path &dir) {
  std::error_code ec;
  const fs::perms p = fs::status(dir, ec).permissions();
  if (ec)
    return false;
  return (p & (fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write)) !=
         fs::perms::none;
}

} // namespace

std::string executableCacheKey(std::string_view module_text, const CacheKeyParts &parts) {
  std::string material;
  material.reserve(module_text.size() + 1024);
  addField(material, "format", kKeyFormat);
  addField(material, "module", module_text);
  addField(material, "entry", parts.options.entry);
  addField(material, "compile_settings", parts.compile_settings);
  addField(material, "platform", parts.device.platform);
  addField(material, "device_kind", parts.device.device_kind);
  addField(material, "compute_capability", parts.device.compute_capability);
  addField(material, "backend_version", parts.device.backend_version);
  addField(material, "server_build", parts.server_build);
  return sha256Hex(material);
}

std::string executableCacheDir(const std::string &bundle_dir, const std::string &cache_dir) {
  fs::path bundle(bundle_dir);
  if (cache_dir.empty())
    return (bundle / ".cache").string();
  if (!bundle.has_filename()) // "models/iris_mlp/" is the bundle iris_mlp
    bundle = bundle.parent_path();
  return (fs::path(cache_dir) / bundle.filename()).string();
}

std::string repositoryCacheDir(const std::string &model_dir, const std::string &cache_dir) {
  return ((cache_dir.empty() ? fs::path(model_dir) : fs::path(cache_dir)) / ".cache").string();
}

ExecutableCache::ExecutableCache(std::string dir, bool enabled, std::string hmac_key)
    : dir_(std::move(dir)), enabled_(enabled), hmac_key_(std::move(hmac_key)) {}

Result<CachedProgram> ExecutableCache::loadOrCompile(Backend &backend, const ir::Module &module,
                                                     std::string_view program,
                                                     const CacheKeyParts &parts) {
  CachedProgram out;
  if (!enabled_) {
    out.outcome.miss_reason = "executable cache off";
    RS_ASSIGN_OR_RETURN(out.executable, backend.compile(module, parts.options));
    return out;
  }
  out.outcome.key = executableCacheKey(ir::printGeneric(module), parts);
  std::string stem(program);
  if (stem.ends_with(".mlir"))
    stem.resize(stem.size() - 5);
  const fs::path entry = fs::path(dir_) / (stem + "-" + out.outcome.key + std::string(kSuffix));
  out.outcome.entry = entry.string();

  std::error_code ec;
  if (!fs::exists(entry, ec)) {
    out.outcome.miss_reason = "no entry";
  } else {
    const Result<std::string> bytes = readWholeFile(entry.string());
    Result<std::string_view> payload =
        bytes.isOk() ? parseEntry(*bytes, out.outcome.key, hmac_key_)
                     : Result<std::string_view>(dataLoss() << "corrupt entry: cannot read it");
    if (!payload.isOk()) {
      out.outcome.miss_reason = payload.status().message();
    } else {
      Result<std::unique_ptr<Executable>> exe = backend.deserialize(*payload, parts.options);
      if (exe.isOk()) {
        out.executable = std::move(exe).value();
        out.outcome.hit = true;
        out.outcome.payload_sha256 = sha256Hex(*payload);
        return out;
      }
      out.outcome.miss_reason = "the backend could not load the entry: " + exe.status().message();
    }
  }

  RS_ASSIGN_OR_RETURN(out.executable, backend.compile(module, parts.options));
  Result<std::string> payload = out.executable->serialize();
  if (!payload.isOk()) {
    out.outcome.write_warning = "not written: " + payload.status().message();
    return out;
  }
  out.outcome.payload_sha256 = sha256Hex(*payload);
  std::string bytes;
  bytes.reserve(payload->size() + 256);
  bytes += kMagic;
  bytes += "\nkey " + out.outcome.key + "\nprogram " + std::string(program) + "\nsize " +
           std::to_string(payload->size()) + "\nsha256 " + out.outcome.payload_sha256 + "\n";
  if (!hmac_key_.empty())
    bytes += "hmac-sha256 " + entryMac(hmac_key_, out.outcome.key, *payload) + "\n";
  bytes += "\n";
  bytes += *payload;
  // The directory holding the entries' directory (the bundle directory, or cache_dir),
  // or the nearest one above it that exists, must be writable by its mode; so must the
  // entries' directory when it exists.
  fs::path holder = fs::path(dir_).parent_path();
  while (!fs::is_directory(holder, ec) && holder.has_relative_path())
    holder = holder.parent_path();
  if (holder.empty())
    holder = ".";
  if (!modeAllowsWriting(holder)) {
    out.outcome.write_warning =
        "directory " + holder.string() + " is read-only (no write permission bit)";
    return out;
  }
  if (!fs::is_directory(dir_, ec)) {
    fs::create_directories(dir_, ec);
    if (ec) {
      out.outcome.write_warning = "cannot create " + dir_ + ": " + ec.message();
      return out;
    }
  } else if (!modeAllowsWriting(dir_)) {
    out.outcome.write_warning = dir_ + " is read-only (no write permission bit)";
    return out;
  }
  if (Status s = writeAtomically(entry, bytes); !s.isOk())
    out.outcome.write_warning = s.message();
  return out;
}

} // namespace rs::runtime
