//===- bundle/bundle.h - Load and validate a model bundle -----------------===//
//
// A bundle (reference-system.md §1, DESIGN.md "Compatibility promises") is a directory
// named after the model holding:
//   manifest.yaml            format 2.0 (bundle/manifest.h)
//   model.b{N}.mlir          one program per compiled batch size N, or
//   model.mlir               a single unbatched program (key 0: serves any size)
//   weights.safetensors      weights; __metadata__.argument_order (a JSON list of names)
//                            gives their order as trailing arguments of main
// The program is called as main(inputs..., weights...): the manifest's executable_inputs
// in order, then the weights in argument_order; its results are executable_outputs.
//
// loadBundle() checks everything that can be checked before compiling:
//   - every batching.compiled_batch_sizes entry has its model.b{N}.mlir; a model.b{N}.mlir
//     whose N is not listed is not loaded and is reported in Bundle::warnings;
//   - argument_order is a JSON list of distinct names that all exist in the weights file
//     (tensors it does not list are reported in warnings);
//   - each program parses (ir/parser.h) and its `main` signature matches: arity ==
//     n_inputs + n_weights; each input argument's dtype and row-major shape at that batch
//     size (manifest letters reversed); each weight argument's dtype and shape; and the
//     results against executable_outputs. For the unbatched key 0 the batch axis size is
//     not checked.
// Not supported (errors): kind: meta (Unimplemented), multi-shape bundles with
// input_shapes / model.v{i}.*.mlir (Unimplemented), model.jl hooks (Unimplemented: this
// server runs no Julia code, and serving without them would change outputs silently).
//
// Errors name the file (full path) and give expected and actual values, e.g.
// ".../model.b8.mlir: main takes 9 arguments but the manifest has 1 input and the weights
// file has 6 weights (7 expected)". Codes: InvalidArgument for a malformed bundle, NotFound
// for a missing directory/manifest/program file, DataLoss for a corrupt weights file,
// Unimplemented as above, and the IR parser's codes.
//
// Thread safety: loadBundle() touches only its arguments; a Bundle is immutable after
// loading, so concurrent readers are fine.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundle/manifest.h"
#include "ir/ir.h"
#include "support/status.h"
#include "support/tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rs::bundle {

/// One parsed program of a bundle.
struct Program {
  int64_t batch_size = 0; // 0: the unbatched model.mlir
  std::string path;       // full path of the .mlir file
  ir::Module module;
};

/// A loaded, validated bundle.
struct Bundle {
  std::string name; // directory basename: the served model name
  std::string dir;  // the directory as given to loadBundle
  Manifest manifest;
  /// Weight names in argument order (empty when the bundle has no weights).
  std::vector<std::string> weight_names;
  /// Weights in argument order: zero-copy views of the mmaped weights.safetensors.
  std::vector<Tensor> weights;
  /// Programs by batch size, ascending; a single key 0 for an unbatched model.mlir.
  std::map<int64_t, Program> programs;
  /// Things that do not stop the load but deserve a log line (stray program files,
  /// unlisted weight tensors), in a fixed order.
  std::vector<std::string> warnings;

  /// The compiled batch sizes actually present (programs' keys, ascending).
  std::vector<int64_t> batchSizes() const;
  /// True for a single unbatched model.mlir (key 0).
  bool unbatched() const { return programs.size() == 1 && programs.begin()->first == 0; }
};

/// Loads and validates the bundle in directory `dir` (see the file comment).
Result<Bundle> loadBundle(const std::string &dir);

/// The immediate subdirectories of `model_repo` that hold a manifest.yaml (hidden ones,
/// starting with '.', are skipped), as full paths sorted by name. Empty if `model_repo`
/// is not a readable directory.
std::vector<std::string> discoverBundles(const std::string &model_repo);

} // namespace rs::bundle
