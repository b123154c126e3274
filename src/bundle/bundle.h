//===- bundle/bundle.h - Load and validate a model bundle -----------------===//
//
// A bundle (reference-system.md §1, DESIGN.md "Compatibility promises") is a directory
// named after the model holding:
//   manifest.yaml            format 2.0 (bundle/manifest.h)
//   model.b{N}.mlir          one program per compiled batch size N, or
//   model.mlir               a single unbatched program (key 0: serves any size), or a
//                            shape-polymorphic one (`?` dims in main's inputs) refined
//                            per compiled batch size and variant (bundle/polymorphic.h)
//   weights.safetensors      weights; __metadata__.argument_order (a JSON list of names)
//                            gives their order as trailing arguments of main
// A multi-shape bundle (the manifest has `input_shapes`) holds one program per shape
// variant i and batch size instead: model.v{i}.b{N}.mlir, or model.v{i}.mlir unbatched
// (bundle/program_files.h has the naming rules, bundle/shape_variant.h the routing).
// The program is called as main(inputs..., weights...): the manifest's executable_inputs
// in order, then the weights in argument_order; its results are executable_outputs.
//
// loadBundle() checks everything that can be checked before compiling:
//   - every program file the manifest needs exists (bundle/program_files.h); a
//     model.b{N}.mlir whose N is not listed, or a model.v{i}.* whose variant i is not in
//     input_shapes, is not loaded and is reported in Bundle::warnings;
//   - argument_order is a JSON list of distinct names that all exist in the weights file
//     (tensors it does not list are reported in warnings);
//   - each program parses (ir/parser.h) and its `main` signature matches: arity ==
//     n_inputs + n_weights; each input argument's dtype and row-major shape at that batch
//     size (manifest letters reversed) and, in a multi-shape bundle, with the variant's
//     sizes on the variable axes; each weight argument's dtype and shape; and the results
//     against executable_outputs (variable axes of outputs take the variant's sizes too).
//     For the unbatched key 0 the batch axis size is not checked.
// A bundle with model.py carries Python pre/post-processing hooks (docs/hooks.md; run by
// hooks/, not here): Bundle::hooks is set and the manifest may declare client_inputs and
// client_outputs. A `kind: meta` bundle is model.py (register_meta_model) and the manifest
// only: no programs, no weights (InvalidArgument otherwise). Not supported (errors): model.jl
// hooks
// (Unimplemented: this server runs no Julia code, and serving without them would change
// outputs silently).
//
// Errors name the file (full path) and give expected and actual values, e.g.
// ".../model.b8.mlir: main takes 9 arguments but the manifest has 1 input and the weights
// file has 6 weights (7 expected)", or for a variant ".../model.v1.b4.mlir: argument 0
// (input 'input_ids'): type tensor<4x8xi32> does not match manifest i32[4,16] (shape variant
// 1 {s=16})". Codes: InvalidArgument for a malformed bundle, NotFound for a missing
// directory/manifest/program file, DataLoss for a corrupt weights file, Unimplemented as
// above, and the IR parser's codes.
//
// Thread safety: loadBundle() touches only its arguments; a Bundle is immutable after
// loading, so concurrent readers are fine.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundle/manifest.h"
#include "bundle/polymorphic.h"
#include "bundle/program_files.h"
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
  int64_t batch_size = 0; // 0: the unbatched model.mlir (model.v{i}.mlir)
  size_t variant = 0;     // index into Manifest::input_shapes; 0 for a single-shape bundle
  std::string path;       // full path of the .mlir file
  /// Made from a shape-polymorphic model.mlir (`path`) by refining it for this key
  /// (bundle/polymorphic.h); `module` is the refined, static module.
  bool refined = false;
  ir::Module module;
};

/// A loaded, validated bundle.
struct Bundle {
  std::string name; // directory basename: the served model name
  std::string dir;  // the directory as given to loadBundle
  Manifest manifest;
  /// The bundle has model.py: its hooks run around the programs (docs/hooks.md).
  bool hooks = false;
  /// Weight names in argument order (empty when the bundle has no weights).
  std::vector<std::string> weight_names;
  /// Weights in argument order: zero-copy views of the mmaped weights.safetensors.
  std::vector<Tensor> weights;
  /// Programs by shape variant, then batch size, ascending. A single-shape bundle has
  /// variant 0 only; an unbatched one a single batch size 0 per variant.
  std::map<ProgramKey, Program> programs;
  /// Things that do not stop the load but deserve a log line (stray program files,
  /// unlisted weight tensors), in a fixed order.
  std::vector<std::string> warnings;
  /// The dynamic axes of a shape-polymorphic model.mlir's main (empty for static
  /// programs); its programs are the refined ones (Program::refined).
  std::vector<DynamicAxis> dynamic_axes;

  /// The compiled batch sizes actually present (programs' batch sizes, ascending, each
  /// once: every variant has the same sizes).
  std::vector<int64_t> batchSizes() const;
  /// True for unbatched programs (model.mlir, or model.v{i}.mlir per variant: key 0).
  bool unbatched() const { return !programs.empty() && programs.begin()->first.batch_size == 0; }
  /// True when the manifest has input_shapes (programs named model.v{i}.*).
  bool multiShape() const { return !manifest.input_shapes.empty(); }
};

/// Loads and validates the bundle in directory `dir` (see the file comment).
Result<Bundle> loadBundle(const std::string &dir);

/// The immediate subdirectories of `model_repo` that hold a manifest.yaml (hidden ones,
/// starting with '.', are skipped), as full paths sorted by name. Empty if `model_repo`
/// is not a readable directory.
std::vector<std::string> discoverBundles(const std::string &model_repo);

} // namespace rs::bundle
