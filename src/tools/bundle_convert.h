//===- tools/bundle_convert.h - `reactant-server bundle convert` ----------===//
//
// `reactant-server bundle convert --to text|generic INPUT [-o OUTPUT] [--force]` writes
// what a program holds as MLIR text, so that a user can read a portable artifact
// (docs/bundles.md):
//
//   generic  MLIR's generic op form exactly as ir::printGeneric prints it: what the GPU
//            backend is given;
//   text     the same, with each op's source position kept as a trailing
//            `loc("file":line:col)` (ir::PrintOptions::locations).
//
// Both parse back (ir::parseModuleFile) to the module INPUT decodes to.
//
// INPUT is a program file (StableHLO text or a portable artifact) or a bundle directory
// (it must hold a manifest.yaml). For a file, OUTPUT is a file (written through a
// temporary file renamed into place); without -o the text goes to stdout. For a bundle,
// -o is required and OUTPUT is a new bundle directory: manifest.yaml and
// weights.safetensors copied, every model*.mlir converted under its own name; other files
// (a .cache/ directory, notes) are left behind. Every program is converted before
// anything is written, and the bundle is written into a temporary directory beside
// OUTPUT that is renamed into place.
//
// An existing OUTPUT is refused unless --force; even with --force, OUTPUT must not be
// INPUT, a file OUTPUT must not be a directory, and a directory OUTPUT is replaced only
// when it is empty or holds a manifest.yaml (a bundle), never any other directory.
//
// Errors go to stderr as `error <path>: <reason>`. With -o, success prints one line to
// stdout: `ok <OUTPUT>: 1 program as <form>`, or for a bundle `ok <OUTPUT>: 3 programs as
// <form>; copied manifest.yaml, weights.safetensors`.
// Exit status: 0 success, 1 an error (unreadable or undecodable input, refused or
// unwritable output), 2 bad command-line use (CLI11, or a bundle without -o).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <ostream>
#include <string>

namespace rs::tools {

/// The text form `bundle convert` writes.
enum class ConvertForm { kText, kGeneric };

struct ConvertOptions {
  ConvertForm to = ConvertForm::kText;
  std::string input;  ///< a program file or a bundle directory
  std::string output; ///< a file or a new bundle directory; empty: stdout (a file only)
  bool force = false; ///< replace an existing OUTPUT (see the file comment)
};

/// Runs the conversion described in the file comment; the converted module (no -o) and
/// the `ok` line go to `out`, error lines to `err`. Returns the exit status.
int convertBundle(const ConvertOptions &options, std::ostream &out, std::ostream &err);

} // namespace rs::tools
