//===- tools/cache_command.h - `reactant-server cache export|import|verify` -===//
//
// Backing up the compile caches (docs/validation.md, seed/reproducibility.md
// "keep and back up the caches"):
//
//   reactant-server cache export ARCHIVE [--config NODE.yaml] [--model-repo DIR]
//       [--cache-dir DIR] [--autotune-cache-dir DIR]
//   reactant-server cache import ARCHIVE [--config NODE.yaml] [--model-repo DIR]
//       [--cache-dir DIR] [--autotune-cache-dir DIR]
//   reactant-server cache verify --metrics-url HOST:PORT [--log FILE] [--timeout-ms N]
//
// The caches (the roots): every model repository of the configuration (the node file's
// model_repo or INFERENCE_SERVER_MODEL_DIRS, or --model-repo) with the executable cache of
// each of its bundles (`<repo>/<bundle>/.cache/*`, runtime/executable_cache.h) and the
// repository's own `<repo>/.cache/*` (the TF32 probe's programs), or with the worker's
// top-level `cache_dir` set (or --cache-dir) where the worker keeps them then:
// `<cache_dir>/<bundle>/*` for each bundle of the repository and `<cache_dir>/.cache/*`
// (with the first repository of that cache_dir only). The archive names them as without
// cache_dir, so an archive exported with one layout imports into the other; and every
// `runtime.autotune_cache_dir` of the node file's workers (or --autotune-cache-dir), all of
// its files, recursively. Only regular files are taken; hidden files (the cache's
// temporary files) and symbolic links are left out. Repositories are named
// `model_repos/<i>` and autotune directories `autotune_cache/<i>` in configuration order
// (every listed worker of the node file, or worker 0, in order; duplicates once).
//
// The archive: a tar file (POSIX pax, written and read with libarchive), members
//   MANIFEST.json    {"format": "reactant-server cache archive 1", "created_by": the build
//                    (ServerBuild::toString()), "roots": [{"name", "kind": "model_repo" |
//                    "autotune_cache", "path": the directory exported}], "files":
//                    [{"path", "size" (bytes), "sha256" (64 lower-case hex)}]}
//   SHA256SUMS       the same sums as `sha256sum` writes them, so that `tar -x` followed
//                    by `sha256sum -c SHA256SUMS` checks an archive without this tool
//   <root name>/<path in the root>   every cache file, e.g.
//                    model_repos/0/iris_mlp/.cache/model.b8-<key>.rsexe
// Members are sorted by name. The archive is written to a temporary file beside ARCHIVE
// and renamed into place.
//
// Import restores into the roots of the configuration given to it, matched by name (the
// first model repository of the configuration receives model_repos/0, and so on; the
// paths recorded at export are only reported). It first reads the whole archive and
// checks it: a manifest of the known format; every member a regular file listed in the
// manifest with its size and SHA-256; every manifest file present; SHA256SUMS agreeing; every name
// inside a root of the manifest, without "." or ".." components, and under a model repository only
// `.cache/<file>` or `<bundle>/.cache/<file>`. Any failure refuses the archive before a
// file is written, naming the member (`model_repos/0/iris_mlp/.cache/model.b1-....rsexe
// fails its checksum: ...`). Then every file is written atomically (temporary file,
// fsync, rename) and its checksum checked once more. Entries of a bundle the repository
// does not hold are skipped and listed (a `.cache/` alone would not make a bundle).
// Existing entries with other names are left alone.
//
// Verify asks a running worker (its metrics port) whether every program of this start
// came from the executable cache: GET /readyz must answer 200 (every model loaded), and
// in GET /metrics worker_executable_cache_misses_total must be 0 and
// worker_executable_cache_hits_total (the programs loaded) above 0. With --log, the
// worker's log (text or JSON) from its last `Effective configuration` line on (the last
// start) must hold no `executable cache: miss` line (each is printed), as many
// `executable cache: hit` lines as the hit counter, and no `TF32 probe` leg with
// `executable_cache=miss`.
//
// Exit status (tools/exit_status.h): 0 success (export/import done; verify: every
// program loaded from the cache); 1 verify only: a program was compiled (or the worker is
// not ready); 3 error (bad configuration, unreadable or refused archive, worker
// unreachable, metrics without the cache counters); 2 bad command-line use (CLI11).
//
// Thread safety: the functions touch only their arguments, the file system and the worker.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"
#include "tools/exit_status.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace rs::tools {

/// "reactant-server cache archive 1": MANIFEST.json's `format`.
inline constexpr std::string_view kCacheArchiveFormat = "reactant-server cache archive 1";

/// Where the caches are: a node file and/or explicit directories.
struct CacheSourceOptions {
  /// Node file (`serve --config`); "" = none. Its INFERENCE_SERVER_* overrides apply.
  std::string config;
  /// Replaces the node file's model repository (`serve --model-repo`).
  std::string model_repo;
  /// Replaces the workers' top-level cache_dir (where the executable cache entries are).
  std::string cache_dir;
  /// Replaces every runtime.autotune_cache_dir of the node file.
  std::string autotune_cache_dir;
};

/// One directory that is backed up.
struct CacheRoot {
  std::string name; // "model_repos/0", "autotune_cache/0"
  std::string kind; // "model_repo" | "autotune_cache"
  std::string path; // the directory
  /// model_repo: the worker's top-level cache_dir ("" = each bundle's `.cache/`), so that
  /// the entries of bundle B are in runtime::executableCacheDir(<path>/B, cache_dir).
  std::string cache_dir;
  /// model_repo: the directory of the repository's own entries (runtime::
  /// repositoryCacheDir), "" when an earlier root already has the same one.
  std::string repository_entries;
};

/// The roots of `options` (see the file comment). InvalidArgument when neither a node
/// file nor a model repository is given; the node file's errors.
Result<std::vector<CacheRoot>> resolveCacheRoots(const CacheSourceOptions &options);

/// Runs `cache export ARCHIVE`: writes the archive, prints one line per root and a total
/// to `out`, errors to `err`. Returns kExitOk or kExitError.
int runCacheExport(const CacheSourceOptions &options, const std::string &archive, std::ostream &out,
                   std::ostream &err);

/// Runs `cache import ARCHIVE` (checks everything, then writes). Returns kExitOk or
/// kExitError (a refused archive names the member and writes nothing).
int runCacheImport(const CacheSourceOptions &options, const std::string &archive, std::ostream &out,
                   std::ostream &err);

struct CacheVerifyOptions {
  /// The worker's metrics port: "host:port", optionally with "http://".
  std::string metrics_url;
  /// The worker's log file; "" = the metrics only.
  std::string log_path;
  /// Per request, in milliseconds; 0 = 10 s.
  int64_t timeout_ms = 0;
};

/// What `cache verify` read.
struct CacheVerifyFigures {
  bool ready = false;
  int64_t hits = 0;   // worker_executable_cache_hits_total
  int64_t misses = 0; // worker_executable_cache_misses_total
  /// From the log (when given): `executable cache: hit` lines, and the miss lines
  /// (executable cache misses and TF32 probe legs that missed) verbatim.
  int64_t log_hits = 0;
  std::vector<std::string> log_misses;
};

/// Runs `cache verify`; `figures` (optional) receives what was read. Returns kExitOk,
/// kExitCheckFailed or kExitError.
int runCacheVerify(const CacheVerifyOptions &options, std::ostream &out, std::ostream &err,
                   CacheVerifyFigures *figures = nullptr);

/// Registers `cache export`, `cache import` and `cache verify` on `app`.
void addCacheCommand(CLI::App &app);

} // namespace rs::tools
