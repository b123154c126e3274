//===- runtime/repository_watcher.h - model_control_mode: dynamic polling ---===//
//
// Watches a model repository directory for bundle changes (reference-system.md §7,
// Triton-style POLL). Every `model_poll_seconds` a poll scans each bundle directory under
// the root (restricted to the include list when non-empty) and computes its signature:
// (file name, mtime, size) of `manifest.yaml`, `weights.safetensors`, `model.jl`, `model.py` and
// the program files (`model.mlir`, `model.b{N}.mlir`, `model.v{i}.mlir`, `model.v{i}.b{N}.mlir`:
// bundle/program_files.h), plus the directory's (st_dev, inode). Other files (e.g.
// `.cache/`) are ignored.
//
// Debounce: a bundle's change is applied only once two consecutive polls saw the same
// signature, so a bundle whose files are still being written (or copied) is never
// loaded half-way. Actions, in this order per poll:
// - rename: a name that vanished and a new name whose directory has the same (dev, inode)
//   and an identical signature (both stable) -> Actions::rename;
// - unload: a vanished name -> Actions::unload;
// - load: a new name -> Actions::load; reload: a changed signature -> Actions::load.
// A failed action is logged (`watcher: action failed`) and retried on the next poll (the
// applied state is not updated). Each applied change logs `watcher: change detected` with
// action=load|reload|unload|rename. A missing root is skipped, not an error.
//
// Thread safety: poll() must not run concurrently with itself; start() runs it on its own
// thread every poll interval until stop(). The actions run on the polling thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace rs::runtime {

/// What identifies one version of a bundle directory.
struct BundleSignature {
  std::string dir;
  uint64_t device = 0;
  uint64_t inode = 0;
  /// Signature files by name: (mtime in ns since the epoch, size in bytes).
  std::map<std::string, std::pair<int64_t, int64_t>> files;

  /// Same files with the same mtimes and sizes (the directory identity is not compared).
  bool sameFiles(const BundleSignature &other) const { return files == other.files; }
};

/// Scans `root`: one signature per bundle directory (name = directory basename; hidden
/// directories skipped), restricted to `include` when non-empty. A missing or unreadable
/// root gives an empty map.
std::map<std::string, BundleSignature> scanRepository(const std::string &root,
                                                      const std::vector<std::string> &include);

/// One change the watcher applied.
struct WatcherChange {
  enum class Action : uint8_t { kLoad, kReload, kUnload, kRename };
  Action action = Action::kLoad;
  std::string name;
  /// For kRename: the old name.
  std::string from;
  std::string dir;
  bool operator==(const WatcherChange &) const = default;
};

std::string_view watcherActionName(WatcherChange::Action action);

class RepositoryWatcher {
public:
  struct Actions {
    /// Loads (or reloads, replacing) model `name` from `dir`.
    std::function<Status(const std::string &name, const std::string &dir)> load;
    /// Unloads `name` once its in-flight requests finish.
    std::function<Status(const std::string &name)> unload;
    /// Renames `from` to `to` (bundle now at `dir`) without recompiling.
    std::function<Status(const std::string &from, const std::string &to, const std::string &dir)>
        rename;
  };

  /// `poll_seconds` > 0 for start().
  RepositoryWatcher(std::string root, std::vector<std::string> include, double poll_seconds,
                    Actions actions);
  ~RepositoryWatcher();
  RepositoryWatcher(const RepositoryWatcher &) = delete;
  RepositoryWatcher &operator=(const RepositoryWatcher &) = delete;

  /// Records the current contents of the root as already applied (the startup load), so
  /// the first polls change nothing unless files change.
  void markCurrentApplied();
  /// One poll: scan, debounce, apply. Returns the changes applied successfully.
  std::vector<WatcherChange> poll();

  /// Polls every poll_seconds on a thread until stop() (idempotent).
  void start();
  void stop();

private:
  std::string root_;
  std::vector<std::string> include_;
  double poll_seconds_;
  Actions actions_;
  std::map<std::string, BundleSignature> applied_;
  /// Names whose load failed (the repository holds them as failed, not ready): when their
  /// directory vanishes they are unloaded too, so a removed bad copy stops holding readiness.
  std::map<std::string, BundleSignature> failed_;
  std::map<std::string, BundleSignature> previous_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false; // GUARDED_BY(mu_)
  std::thread thread_;
};

} // namespace rs::runtime
