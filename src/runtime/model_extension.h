//===- runtime/model_extension.h - Code a model runs besides its programs ---===//
//
// A bundle may carry code that runs around its programs: model.py's pre/post-processing
// hooks (docs/hooks.md). The layer that runs them (hooks/) sits above runtime/, so the
// repository knows them only through this interface: ModelRepositoryOptions::extensions
// starts one for a bundle that has model.py, before its programs compile, and the loaded
// model keeps it (LoadedModel::extension) for as long as a request may use it.
//
// Thread safety: an extension is shared by every request of its model; its methods may be
// called concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundle/manifest.h"
#include "support/status.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace rs::runtime {

/// The environment an extension's code runs in, as deployment evidence.
struct ExtensionEnvironment {
  std::string runtime;               // "cpython 3.11.7"
  std::vector<std::string> packages; // "numpy==2.4.6", sorted
  /// Where the code's imports come from beyond its bundle (hooks.python_path), in order.
  std::vector<std::string> python_path;
  /// The packages its imports are restricted to (hooks.allowed_packages); empty = any.
  std::vector<std::string> allowed_packages;
};

class ModelExtension {
public:
  virtual ~ModelExtension() = default;
  /// The text the `model loaded` line ends with, e.g. "hooks=postprocess
  /// hook_env=cpython-3.11.7 hook_packages=27 hook_sha256=3fa1...".
  virtual std::string describe() const = 0;
  /// SHA-256 (64 hex digits) of everything the extension's behaviour depends on: its code,
  /// the files it reads and its environment. Part of every program's executable cache key.
  virtual std::string identity() const = 0;
  /// SHA-256 of each bundle file the extension depends on, by its path in the bundle
  /// ("model.py", "vocab.txt"): deployment evidence beside the programs' hashes.
  virtual std::map<std::string, std::string> files() const = 0;
  /// The interpreter and the packages installed for it.
  virtual ExtensionEnvironment environment() const = 0;
};

/// Starts the extension of bundle `dir` (model `name`, its parsed `manifest`); an error
/// fails the model's load.
using ModelExtensionFactory = std::function<Result<std::shared_ptr<const ModelExtension>>(
    const std::string &name, const std::string &dir, const bundle::Manifest &manifest)>;

} // namespace rs::runtime
