//===- tools/bundle_inspect.h - `reactant-server bundle inspect` ----------===//
//
// `reactant-server bundle inspect DIR|FILE...` describes bundles and program files
// without loading them into a backend (docs/bundles.md). For each argument, in order:
//
//   bundle <DIR>                       a bundle directory
//     name: <manifest name>            (none) when the manifest has no name
//     inputs: <name> <dtype[shape]>, ...   wire shapes, -1 for the batch axis; none
//     outputs: <name> <dtype[shape]>, ...
//     batch sizes: 1, 8, 32            batching.compiled_batch_sizes; none
//     weights: <tensors in weights.safetensors>   none without the file
//     program <name>                   one block per model*.mlir, in name order
//       format: text | portable artifact (VHLO <v>, bytecode <n>, producer <string>)
//       size: <bytes> bytes
//       main: (<argument types>) -> (<result types>)   none without a main
//       functions: <func.func ops>
//       ops: <every op of the module, nested ones included, the module itself not>
//
//   program <FILE>                     a single program file: the same block, with its
//     format: ...                      lines indented by two spaces less
//
// What cannot be read (the manifest, the weights file, a program, an argument that does
// not exist) is reported in place of its lines as `error <path>: <reason>`, at the start
// of a line, and the rest is still described. Output is deterministic: it depends only on
// the files' contents and the paths as given.
//
// Exit status: 0 when everything could be read, 1 after an error line (2 for bad
// command-line use, from CLI11).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace rs::tools {

/// Describes every path of `paths` (bundle directories or program files) on `out` in the
/// format above; returns the exit status (0, or 1 after an error line).
int inspectBundles(const std::vector<std::string> &paths, std::ostream &out);

} // namespace rs::tools
