//===- bundle/program_files.h - A bundle's program files: names and choice -===//
//
// Which `.mlir` files of a bundle directory are its programs (reference-system.md §1):
//
//   single-shape (no input_shapes)   model.b{N}.mlir per compiled batch size N, or one
//                                    model.mlir (key 0: unbatched)
//   multi-shape (input_shapes)       model.v{i}.b{N}.mlir per variant i (0-based over the
//                                    input_shapes entries) and compiled batch size N, or one
//                                    model.v{i}.mlir per variant (unbatched)
//
// selectProgramFiles() applies the rules: if any `.b{N}` file exists, every size in
// batching.compiled_batch_sizes needs its file in every variant, and no unbatched file may
// stand beside them; otherwise every variant needs its unbatched file. A `.b{N}` file whose N
// is not listed, a `.v{i}` file whose i has no input_shapes entry, and any other
// `model.*.mlir` name that is none of the forms (model.b08.mlir: numbers have no leading
// zeros; model.b0.mlir) is not loaded and is reported as a warning. Program files of the
// other naming (model.b{N}.mlir in a multi-shape
// bundle, model.v{i}.*.mlir in a single-shape one) are errors,
// except one model.mlir alone in a multi-shape bundle: a shape-polymorphic program that
// loading refines per variant (bundle/polymorphic.h); beside model.v{i}.* files it is an error.
//
// Errors name the file (full path) and say what was expected: NotFound for a missing
// program ("<dir>/model.v1.b4.mlir: missing (shape variant 1 {s=16}, batch size 4 is listed in
// batching.compiled_batch_sizes [1, 4])"), InvalidArgument for a conflicting set of files,
// Internal when the directory cannot be listed part-way.
//
// Thread safety: plain functions over their arguments and the file system.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundle/manifest.h"
#include "support/status.h"

#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rs::bundle {

/// Which program of a bundle: a shape variant (index into Manifest::input_shapes; 0 for a
/// single-shape bundle) and a compiled batch size (0: the variant's unbatched program).
/// Ordered by variant, then batch size.
struct ProgramKey {
  size_t variant = 0;
  int64_t batch_size = 0;

  auto operator<=>(const ProgramKey &) const = default;
};

/// The file name of program `key`: model.b8.mlir / model.mlir for a single-shape bundle,
/// model.v1.b8.mlir / model.v1.mlir for a multi-shape one.
std::string programFileName(const ProgramKey &key, bool multi_shape);

/// A program file name taken apart: `variant` is set for model.v{i}[.b{N}].mlir; batch_size
/// is N, or 0 for model.mlir and model.v{i}.mlir.
struct ProgramFileName {
  std::optional<size_t> variant;
  int64_t batch_size = 0;
};

/// Parses a file name of one of the four program forms (N > 0, both numbers plain decimal
/// digits without leading zeros); nullopt for any other name (e.g. model.v1.x.mlir,
/// model.b0.mlir, model.b08.mlir, model.v00.mlir, weights.bin).
std::optional<ProgramFileName> parseProgramFileName(std::string_view name);

/// The program files a bundle loads, chosen by the rules of the file comment.
struct ProgramSelection {
  std::map<ProgramKey, std::string> paths; // full path by program
  /// Files not loaded: names that are no program form and variants outside input_shapes
  /// (by name), then batch sizes not listed (by program).
  std::vector<std::string> warnings;
  /// A multi-shape bundle holding one model.mlir (paths has it as key {0, 0}) and no
  /// model.v{i}.* files: it must be shape-polymorphic, and loading refines it per variant
  /// (bundle/polymorphic.h).
  bool shared_program = false;
};

/// Lists `dir` and chooses its program files for `manifest` (the file comment's rules).
Result<ProgramSelection> selectProgramFiles(const std::string &dir, const Manifest &manifest);

} // namespace rs::bundle
