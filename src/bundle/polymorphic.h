//===- bundle/polymorphic.h - One shape-polymorphic model.mlir, refined ----===//
//
// A bundle may hold one shape-polymorphic `model.mlir` instead of a file per compiled size:
// `main` takes inputs with `?` dims, as `jax.export` writes them for
// `jax.export.symbolic_shape("b, ...")`. Loading refines it (passes/refine_shapes.h) once
// per program the manifest asks for, so the bundle serves exactly as one with per-size
// files:
//
//   single-shape, batched     one program per batching.compiled_batch_sizes entry N
//                             (key {0, N}), the batch axis of every input set to N
//   multi-shape, batched      one per input_shapes variant i and size N (key {i, N}), the
//                             variable axes set to the variant's sizes
//   unbatched                 one per variant (key {i, 0})
//
// The argument types come from the manifest (TensorSpec::shapeForBatch) and the weights
// file: main(inputs..., weights...) as for any program. Each refined module is then checked
// against the manifest like a per-size file, with the batch axis compared. Dimension
// arguments (leading integer scalars before the inputs, older jax.export) are not
// supported: main must take exactly the inputs and the weights.
//
// Errors name the file and the program being made, e.g.
// ".../model.mlir: refining for batch size 4 (shape variant 1 {s=16}): model.mlir:9:5:
// error: 'stablehlo.custom_call' op shape assertion failed: ..." (InvalidArgument);
// a polymorphic model.mlir in a batched bundle without batching.compiled_batch_sizes is
// InvalidArgument too.
//
// Thread safety: plain functions over their arguments.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundle/manifest.h"
#include "bundle/program_files.h"
#include "ir/ir.h"
#include "support/status.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rs::bundle {

/// A dynamic (`?`) axis of one argument of a polymorphic main: argument index, the
/// manifest input it belongs to (empty past the inputs) and the row-major axis.
struct DynamicAxis {
  size_t argument = 0;
  std::string input;
  int64_t axis = 0;
  char letter = 0; // the manifest letter of that axis, 0 when unknown
};

/// The dynamic axes of `main`'s arguments, in argument then axis order; empty when `main`
/// is missing or fully static (a non-polymorphic program). `inputs` names the arguments.
std::vector<DynamicAxis> dynamicAxes(const ir::Module &module,
                                     const std::vector<TensorSpec> &inputs);

/// "input 'x' axis 0 (n)" for each axis, ", " between them.
std::string dynamicAxesText(const std::vector<DynamicAxis> &axes);

/// The name of the program refined for `key` in logs and executable cache entries:
/// "model.mlir@b8", "model.mlir@v1.b8" in a multi-shape bundle, "model.mlir@v1" unbatched
/// ("model.mlir" for the single unbatched program).
std::string refinedProgramName(const ProgramKey &key, bool multi_shape);

/// The keys a polymorphic model.mlir is refined for under `manifest` (the file comment's
/// table), ascending. Errors: InvalidArgument naming `path` when the manifest is batched
/// but lists no compiled batch sizes.
Result<std::vector<ProgramKey>> refinementKeys(const Manifest &manifest, const std::string &path);

/// `module` (parsed from `path`) refined for program `key`: main's arguments take the
/// manifest's shapes at that key and the weights' shapes. Errors: the pass's, prefixed
/// with the path and the program ("refining for batch size 4 (shape variant 1 {s=16})").
Result<ir::Module> refineForProgram(const ir::Module &module, const std::string &path,
                                    const Manifest &manifest, const std::vector<Tensor> &weights,
                                    const ProgramKey &key);

} // namespace rs::bundle
