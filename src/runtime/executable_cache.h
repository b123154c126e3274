//===- runtime/executable_cache.h - Compiled programs kept in .cache/ ------===//
//
// The executable cache (`runtime.executable_cache`, default on; DESIGN.md "Caches",
// seed/reproducibility.md "Compilation and autotuning"): each compiled program is kept
// in its bundle's `.cache/` directory and loaded on later starts, so a restart runs the
// very program (kernel choices included) that the previous start compiled.
//
// Key: SHA-256 over, in this order and each length-prefixed, a format tag; the program's
// module after passes, printed in MLIR generic form (ir/printer.h); the CompileOptions;
// the compile settings that reach the compiler (XLA flags, autotune level: the caller's
// text); the backend (platform, device kind, compute capability, backend and plugin
// version: DeviceInfo); and the server build (ServerBuild::toString()). Any change to one
// of them gives another key, so the program is compiled fresh.
//
// Entry: `<bundle>/.cache/<program>-<key>.rsexe` (`model.b8-3fa1...e0.rsexe`), or with the
// worker's top-level `cache_dir` set, `<cache_dir>/<bundle name>/<program>-<key>.rsexe`
// (a read-only bundle, such as KServe's /mnt/models, keeps its cache elsewhere; the key,
// the format and every check are the same). It holds a text header, then the bytes of
// Executable::serialize():
//   reactant-server executable cache entry 1\n
//   key <64 hex>\n  program <file name>\n  size <payload bytes>\n  sha256 <64 hex>\n
//   [hmac-sha256 <64 hex>\n]  \n
//   <payload>
// A load checks the magic line, that the entry's key is the expected one (otherwise the
// file is foreign: copied or renamed from another program or build), the size
// (truncation) and the payload's SHA-256 (corruption); with a key
// (runtime.executable_cache_key_file) the HMAC-SHA256 of "<key>\n<payload>" under it, so an
// entry edited by someone without the key (its checksum recomputed) is a miss
// ("forged entry"); then Backend::deserialize(). Without a key the SHA-256 only detects
// accidents: the evidence lists each program's payload SHA-256 (CacheOutcome), so a
// validation record shows an entry whose program changed. Any
// failure is a miss with a reason, never a crash; the program is compiled and the entry
// rewritten. Writes are atomic: a temporary file in `.cache/` is written, flushed
// (fsync) and renamed over the entry, so a reader sees the old entry or the new one.
// An unwritable entries directory (a read-only bundle) is reported as a warning in the
// outcome; the program still loads. "Unwritable" includes permission bits: when the
// directory holding the entries directory (the bundle directory, or cache_dir; when that
// does not exist yet, the nearest directory above it that does) or the entries directory
// itself has no write bit set, nothing is written (even by root), so a read-only bundle such as the
// shared test fixtures stays untouched; its existing entries are still read. Entries for other keys
// are left alone (delete the entries directory to reclaim them).
//
// Thread safety: an ExecutableCache is used by one model load at a time; distinct
// bundles' caches are independent (the repository counts hits and misses).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/ir.h"
#include "runtime/backend.h"
#include "support/status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace rs::runtime {

/// Everything besides the module that goes into a cache key.
struct CacheKeyParts {
  CompileOptions options;
  /// Settings that change what the backend compiles, e.g. "xla_flags={...} autotune=true".
  std::string compile_settings;
  DeviceInfo device;
  /// ServerBuild::toString() of the build that compiles (support/build_info.h).
  std::string server_build;
};

/// The cache key of `module_text` (generic form, after passes): 64 lower-case hex digits.
std::string executableCacheKey(std::string_view module_text, const CacheKeyParts &parts);

/// What one lookup-or-compile did.
struct CacheOutcome {
  bool hit = false;
  /// Why it missed: "no entry", "corrupt entry: ...", "foreign entry: ...",
  /// "forged entry: ..." / "unauthenticated entry: ..." (with an HMAC key), "the backend
  /// could not load the entry: ...", or "executable cache off".
  std::string miss_reason;
  /// Set when the entry could not be written (read-only `.cache/`, full disk, or a
  /// backend that cannot serialize); the program is served anyway.
  std::string write_warning;
  std::string key;   // the cache key
  std::string entry; // the entry's path
  /// SHA-256 of the compiled program's bytes as loaded (hit) or written (miss); "" with the
  /// cache off or a backend that cannot serialize. Deployment evidence lists it, so a
  /// validation record notices an entry whose program changed.
  std::string payload_sha256;
};

struct CachedProgram {
  std::unique_ptr<Executable> executable;
  CacheOutcome outcome;
};

/// The directory of the entries of the bundle in `bundle_dir`: `<bundle_dir>/.cache` when
/// `cache_dir` (the worker's top-level key) is "", else `<cache_dir>/<bundle name>` (the
/// bundle directory's last component).
std::string executableCacheDir(const std::string &bundle_dir, const std::string &cache_dir);

/// The directory of the repository-level entries (the TF32 probe's programs) of the model
/// directory `model_dir`: `<model_dir>/.cache`, or `<cache_dir>/.cache` when `cache_dir` is
/// set (no bundle is called `.cache`: bundle names never start with '.').
std::string repositoryCacheDir(const std::string &model_dir, const std::string &cache_dir);

/// The executable cache of one bundle (or of the repository's own programs).
class ExecutableCache {
public:
  /// `dir`: the directory of the entries (executableCacheDir, repositoryCacheDir), made
  /// when the first entry is written. `enabled` false (`runtime.executable_cache: false`)
  /// compiles every program and touches no file. `hmac_key` (the bytes of
  /// runtime.executable_cache_key_file; empty = none): entries are written with an
  /// HMAC-SHA256 under it and only entries whose HMAC verifies are loaded.
  ExecutableCache(std::string dir, bool enabled, std::string hmac_key = "");

  /// Loads the entry for `module` (after passes) or compiles it on `backend` and writes
  /// the entry. `program` names the program file ("model.b8.mlir") in the entry name.
  /// Errors: only the backend's compile errors; cache problems are misses/warnings.
  Result<CachedProgram> loadOrCompile(Backend &backend, const ir::Module &module,
                                      std::string_view program, const CacheKeyParts &parts);

  /// The directory of the entries.
  const std::string &dir() const { return dir_; }

private:
  std::string dir_;
  bool enabled_;
  std::string hmac_key_;
};

} // namespace rs::runtime
