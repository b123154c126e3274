//===- runtime/model_repository.h - Loaded models of one worker -------------===//
//
// Loads bundles (bundle/) and compiles every program (each compiled batch size, and in a
// multi-shape bundle each shape variant at each size) on a Backend, keeping, per model,
// either a LoadedModel or the reason its load failed. A bad bundle
// never stops the others: its failure is logged (`model load failed`) and reported by
// readiness (DESIGN.md "Invariants").
//
// Each of the bundle's warnings (bundle::Bundle::warnings) is logged as `model bundle
// warning name=<model> warning=<path>: <what>` before its programs compile.
//
// Per program, before compile: the numerics pass (passes/numerics.h) with the worker's
// `runtime.numerics` and the backend's TF32 capability; a failed f32 check fails the
// model's load. Then the executable cache (runtime/executable_cache.h) loads the program
// or compiles it; each program logs `executable cache: hit` or `executable cache: miss`
// with model, batch size, program file and reason. The `model loaded` line lists the batch
// sizes actually loaded, for a multi-shape bundle its shape variants
// (`shape_variants=[{s=8}, {s=16}]`), for programs refined from a shape-polymorphic model.mlir
// `refined_from=model.mlir`, and ends with the numerics outcome (`numerics=f32 (pinned 1
// dot_general, pinned 2 convolution)`, reference-system.md §3.2).
//
// A shape-polymorphic model.mlir arrives as one refined, static program per key
// (bundle/polymorphic.h); each is compiled and cached like a per-size file, its cache entry
// and log lines named `model.mlir@b8` (`model.mlir@v1.b8`), its file hash that of model.mlir,
// and the refined module's hash kept in LoadedModel::refined_sha256.
//
// Thread safety: all methods may be called concurrently; a LoadedModel is immutable
// and shared (std::shared_ptr), so a dispatch keeps the model it started with alive.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundle/manifest.h"
#include "bundle/program_files.h"
#include "passes/numerics.h"
#include "runtime/backend.h"
#include "runtime/executable_cache.h"
#include "runtime/model_extension.h"
#include "support/build_info.h"

#include <atomic>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rs::runtime {

/// One model, compiled and ready to run.
struct LoadedModel {
  std::string name;
  std::string dir;
  bundle::Manifest manifest;
  /// Weights in argument order (zero-copy views of the mmaped safetensors file).
  std::vector<Tensor> weights;
  /// The weights as Backend::upload() placed them at load (device buffers on the PJRT
  /// backend, the host tensors themselves on the CPU one); run() passes them to
  /// Executable::executeWithResident(), so no request copies weights. Null: run() passes
  /// `weights` as arguments.
  std::shared_ptr<const ResidentTensors> resident_weights;
  /// Compiled programs by shape variant (0 for a single-shape bundle) and batch size; batch
  /// size 0 is an unbatched `model.mlir` (`model.v{i}.mlir`). Shared, so a renamed copy of
  /// the model (ModelRepository::renamedCopy) runs the same executables.
  std::map<bundle::ProgramKey, std::shared_ptr<Executable>> programs;
  /// Compiled batch sizes, ascending, the same for every shape variant (empty for a model
  /// without a batch axis). Under `runtime.batch_sizes: largest` only the largest program
  /// (of each variant) is compiled and listed.
  std::vector<int64_t> batch_sizes;
  /// The backend's platform ("cpu", "cuda"), as DeviceInfo names it.
  std::string platform;
  /// The numerics pass's counts over every loaded program (the `numerics=` outcome).
  passes::NumericsReport numerics;
  /// Executable cache outcome per loaded program (keys as in `programs`).
  std::map<bundle::ProgramKey, CacheOutcome> cache;
  /// SHA-256 (64 lower-case hex digits) of each bundle file as read at load, by its name
  /// in the bundle directory: "manifest.yaml", "weights.safetensors" (when present) and
  /// every loaded program ("model.b8.mlir", "model.v1.b8.mlir"). Deployment evidence
  /// (server/evidence.h).
  std::map<std::string, std::string> file_sha256;
  /// The bundle file each loaded program was read from ("model.b8.mlir"; "model.mlir" for
  /// every program refined from a shape-polymorphic model.mlir).
  std::map<bundle::ProgramKey, std::string> program_files;
  /// For programs refined from a shape-polymorphic model.mlir (bundle/polymorphic.h): the
  /// SHA-256 of the refined module in generic form (ir/printer.h), the text the executable
  /// cache keys on. Empty for a bundle of per-size files.
  std::map<bundle::ProgramKey, std::string> refined_sha256;
  /// The bundle's warnings (bundle::Bundle::warnings: files not loaded, weights not used),
  /// each starting with the file's path; loading logs each as `model bundle warning`.
  std::vector<std::string> warnings;
  /// The model.py hooks of a bundle that has them (runtime/model_extension.h), started by
  /// ModelRepositoryOptions::extensions before the programs compile; null otherwise. Its
  /// files are in file_sha256 and its identity in every program's cache key.
  std::shared_ptr<const ModelExtension> extension;

  /// Runs the program for `batch_size` on `inputs` (manifest order) followed by the
  /// weights (resident_weights when set); batch_size 0 runs the only program of a model
  /// without a batch axis. In a multi-shape bundle the program is the one of the shape
  /// variant the inputs' variable axes match (bundle/shape_variant.h). Errors:
  /// InvalidArgument if the inputs match no shape variant; NotFound if no program has that
  /// batch size; the backend's errors.
  Result<std::vector<Tensor>> run(int64_t batch_size, std::vector<Tensor> inputs) const;
};

/// A model the repository knows: loaded, failed with a reason, or unloaded.
struct ModelState {
  std::string name;
  std::string dir;
  std::shared_ptr<const LoadedModel> model; // null when the load failed or it was unloaded
  Status status;                            // OK when loaded
  /// A loaded model whose reload failed: that failure (the loaded version serves on); OK
  /// otherwise. The repository index shows it as the READY entry's reason.
  Status last_failure;
  /// Unloaded on request (or its bundle removed): kept so that the index lists it as
  /// UNAVAILABLE and ModelReady answers false (Triton's semantics); contains() is false.
  bool unloaded = false;
};

/// Load failures of one model with one reason (`worker_model_load_failures_total`).
struct LoadFailureCount {
  std::string model;
  /// The failure's status code name ("INVALID_ARGUMENT", "NOT_FOUND", ...): a label of
  /// bounded cardinality; the message is in the log and the model's state.
  std::string reason;
  int64_t count = 0;
};

/// How a repository turns bundles into executables (from the worker's configuration).
struct ModelRepositoryOptions {
  /// `runtime.numerics`: the numerics pass runs on every program before compile, with
  /// the backend's TF32 capability (DeviceInfo::has_tf32, runtime/numerics_gate.h).
  passes::NumericsMode numerics = passes::NumericsMode::kAuto;
  /// `runtime.batch_sizes: largest`: compile (load) only each bundle's largest program.
  bool largest_batch_only = false;
  /// `runtime.executable_cache`: keep compiled programs in each bundle's `.cache/`.
  bool executable_cache = true;
  /// The worker's top-level `cache_dir`: when set, the entries of the bundle called B live
  /// in `<cache_dir>/B/` instead of its `.cache/` (executableCacheDir).
  std::string cache_dir;
  /// The bytes of `runtime.executable_cache_key_file` ("" = none): the HMAC key of the
  /// cache entries (runtime/executable_cache.h).
  std::string executable_cache_key;
  /// Settings besides the module that change what the backend compiles (XLA flags,
  /// autotune); part of every cache key.
  std::string compile_settings;
  /// ServerBuild::toString() of the build that compiles; part of every cache key.
  std::string server_build = thisBuild().toString();
  /// Starts the hooks of a bundle with model.py (runtime/model_extension.h); unset: such a
  /// bundle fails to load (FailedPrecondition).
  ModelExtensionFactory extensions;
};

class ModelRepository {
public:
  explicit ModelRepository(std::shared_ptr<Backend> backend,
                           ModelRepositoryOptions options = ModelRepositoryOptions());

  /// Loads the bundle in `dir` (model name = directory basename), compiles each of its
  /// programs, and records the model as loaded or failed. Returns the load status; a
  /// failure is also logged and kept for readiness. Replaces an earlier model of that name.
  Status loadModel(const std::string &dir);
  /// The first half of loadModel(): loads and compiles the bundle in `dir` (name = its
  /// basename) and logs `model loaded ... source=<source>` (or `model load failed`), but
  /// publishes nothing, so the model of that name (if any) serves on meanwhile. `source`
  /// is "startup" or "dynamic" (reference-system.md §3.5). Errors: the bundle's and the
  /// backend's (bundle/bundle.h), prefixed with the program file where one failed (full
  /// paths; the states keep them relative to the bundle, for clients). A failure counts in
  /// loadFailures().
  Result<std::shared_ptr<const LoadedModel>> buildModel(const std::string &dir,
                                                        std::string_view source);
  /// Logs `model load failed name=<name> dir=<dir> source=<source> reason=<status>` and
  /// counts the failure in loadFailures(): buildModel() does so for its own failures, the
  /// server for a built model it refuses afterwards (a meta model whose callees do not fit).
  void reportLoadFailure(const std::string &name, const std::string &dir, std::string_view source,
                         const Status &status);
  /// Makes `model` the served model of its name (replacing any earlier one atomically:
  /// requests already running keep the LoadedModel they hold).
  void publish(std::shared_ptr<const LoadedModel> model);
  /// Records `name` (bundle `dir`) as failed with `status`, its paths made bundle-relative.
  void recordFailure(const std::string &name, const std::string &dir, Status status);
  /// Records `status` (bundle-relative) as the last failure of loaded model `name`, which
  /// serves on (ModelState::last_failure); nothing when `name` is not loaded.
  void recordReloadFailure(const std::string &name, Status status);
  /// A copy of loaded model `from` named `to`, with its bundle now in `dir`: the same
  /// executables, weights and cache outcomes; nothing is read or compiled (a rename of the
  /// bundle directory keeps its inode, so the weights' mapping stays valid). Not published.
  /// Errors: NotFound if `from` is unknown or not loaded.
  Result<std::shared_ptr<const LoadedModel>>
  renamedCopy(const std::string &from, const std::string &to, const std::string &dir) const;
  /// Loads every bundle directory under `model_repo` (sorted by name), restricted to
  /// `include` when it is non-empty. Errors: NotFound if `model_repo` is not a directory.
  Status loadRepository(const std::string &model_repo, const std::vector<std::string> &include);
  /// Forgets a model.
  void removeModel(const std::string &name);
  /// Marks `name` unloaded: its executables and weights are released, its state stays
  /// (ModelState::unloaded, status Unavailable "unloaded"). Nothing for an unknown name.
  void markUnloaded(const std::string &name);

  /// The state of `name` (an unloaded one included), or nullopt if unknown.
  std::optional<ModelState> state(const std::string &name) const;
  /// Whether `name` is known (loaded, or failed to load; not unloaded): state(name)
  /// without the copy.
  bool contains(const std::string &name) const;
  /// Every model the repository has seen, unloaded ones included, sorted by name.
  std::vector<ModelState> states() const;
  /// Every failed load (startup, reload or new bundle) since the repository was made, by
  /// model and reason, sorted.
  std::vector<LoadFailureCount> loadFailures() const;
  const Backend &backend() const { return *backend_; }
  const ModelRepositoryOptions &options() const { return options_; }

  /// Programs whose executable was not loaded from the executable cache (compiled) /
  /// loaded from it, since this repository was made (`worker_executable_cache_misses_total`).
  /// With the cache off every compile counts as a miss.
  int64_t executableCacheMisses() const { return cache_misses_.load(); }
  int64_t executableCacheHits() const { return cache_hits_.load(); }

private:
  std::shared_ptr<Backend> backend_;
  ModelRepositoryOptions options_;
  std::atomic<int64_t> cache_misses_{0};
  std::atomic<int64_t> cache_hits_{0};
  mutable std::mutex mu_;
  std::map<std::string, ModelState> models_;                             // GUARDED_BY(mu_)
  std::map<std::pair<std::string, std::string>, int64_t> load_failures_; // GUARDED_BY(mu_)
};

} // namespace rs::runtime
