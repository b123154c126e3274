//===- runtime/model_repository.h - Loaded models of one worker -------------===//
//
// Loads bundles (bundle/) and compiles every compiled batch size's program on a Backend,
// keeping, per model, either a LoadedModel or the reason its load failed. A bad bundle
// never stops the others: its failure is logged (`model load failed`) and reported by
// readiness (DESIGN.md "Invariants").
//
// Thread safety: all methods may be called concurrently; a LoadedModel is immutable
// and shared (std::shared_ptr), so a dispatch keeps the model it started with alive.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundle/manifest.h"
#include "runtime/backend.h"
#include "runtime/inference.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace rs::runtime {

/// One model, compiled and ready to run.
struct LoadedModel {
  std::string name;
  std::string dir;
  bundle::Manifest manifest;
  /// Weights in argument order (zero-copy views of the mmaped safetensors file).
  std::vector<Tensor> weights;
  /// Compiled programs by batch size; key 0 is an unbatched `model.mlir`.
  std::map<int64_t, std::unique_ptr<Executable>> programs;
  /// Compiled batch sizes, ascending (empty for a model without a batch axis).
  std::vector<int64_t> batch_sizes;
  ModelMetadata metadata;

  /// Runs the program for `batch_size` on `inputs` (manifest order) followed by the
  /// weights; batch_size 0 runs the only program of a model without a batch axis.
  /// Errors: NotFound if no program has that batch size; the backend's errors.
  Result<std::vector<Tensor>> run(int64_t batch_size, std::vector<Tensor> inputs) const;
};

/// A model the repository knows: loaded, or failed with a reason.
struct ModelState {
  std::string name;
  std::string dir;
  std::shared_ptr<const LoadedModel> model; // null when the load failed
  Status status;                            // OK when loaded
};

class ModelRepository {
public:
  explicit ModelRepository(std::shared_ptr<Backend> backend);

  /// Loads the bundle in `dir` (model name = directory basename), compiles each of its
  /// programs, and records the model as loaded or failed. Returns the load status; a
  /// failure is also logged and kept for readiness. Replaces an earlier model of that name.
  Status loadModel(const std::string &dir);
  /// Loads every bundle directory under `model_repo` (sorted by name), restricted to
  /// `include` when it is non-empty. Errors: NotFound if `model_repo` is not a directory.
  Status loadRepository(const std::string &model_repo, const std::vector<std::string> &include);
  /// Forgets a model.
  void removeModel(const std::string &name);

  /// The state of `name`, or nullopt if unknown.
  std::optional<ModelState> state(const std::string &name) const;
  /// Every known model, sorted by name.
  std::vector<ModelState> states() const;
  const Backend &backend() const { return *backend_; }

private:
  std::shared_ptr<Backend> backend_;
  mutable std::mutex mu_;
  std::map<std::string, ModelState> models_; // GUARDED_BY(mu_)
};

} // namespace rs::runtime
