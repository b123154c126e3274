//===- ir/bytecode.h - StableHLO portable artifacts (VHLO bytecode) ------===//
//
// Reads a StableHLO portable artifact, the file that `jax.export`, the reference exporter
// (ReactantServerExport) and `stablehlo-translate --serialize` write: MLIR bytecode
// (format versions 0 to 6) holding a module in the VHLO dialect, for any StableHLO
// target from 0.9.0 to 1.20.x. The reader is our own code, with no LLVM or MLIR
// dependency; reference/vhlo-bytecode.md describes the format with its sources.
//
// The result is the same ir::Module that the text parser (ir/parser.h) gives for the
// module's StableHLO text: every VHLO op is first upgraded to its newest version (the
// defaults StableHLO's VhloToVersion pass fills in), then mapped to its StableHLO op
// (`vhlo.add_v1` -> `stablehlo.add`, `func_v1` -> `func.func`, `return_v1` ->
// `func.return` or `stablehlo.return`), with its attributes converted as StableHLO's
// VhloLegalizeToStablehlo pass does (integer-list tensors to dense arrays, dimension
// numbers to #stablehlo structs, the dot algorithm, channel handles, symbol references)
// and the attributes equal to StableHLO's defaults dropped. Ops of other dialects that a
// producer let through (`allowOtherDialects`) are kept as they are. Values are numbered
// as the text parser numbers them, so `readPortableArtifact(bc) == parseModule(text)`
// for the same module.
//
// Locations: an op's Location names the artifact file and the byte offset of the op,
// with the source position its debug location carries (`loc("model.py":12:3)`), if any.
//
// Errors (InvalidArgument): "<file>: invalid portable artifact: byte <offset> (<section>
// section): <what was expected>"; an op, attribute or type code that the reader does not
// know is refused by name and the producer's version ("vhlo.constant_v99 is not a VHLO
// op of any StableHLO version up to 1.20.0 (the file was written for 2.0.0)"). The
// reader never reads outside the buffer, bounds every count by the bytes left and its
// nesting depth, and never crashes or hangs on hostile input.
//
// Thread safety: free functions, no shared state.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/ir.h"
#include "support/status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rs::ir {

/// True when `bytes` starts with the MLIR bytecode magic `ML\xefR`.
bool isBytecode(std::string_view bytes);

/// What the header of a portable artifact says.
struct PortableArtifactInfo {
  uint64_t bytecode_version = 0; ///< MLIR bytecode format version (0 to 6)
  std::string producer;          ///< e.g. "StableHLO_v1.18.0"
  /// The StableHLO (VHLO) target version from the producer, e.g. "1.18.0"; empty when
  /// the producer is not StableHLO.
  std::string vhlo_version;
  /// The op names of the artifact's dialect table, in file order ("builtin.module",
  /// "vhlo.add_v1", ...).
  std::vector<std::string> op_names;
};

/// Reads the header and the tables of `bytes` (magic, bytecode version, producer, op
/// names), not the program itself. InvalidArgument naming `file` when the magic is
/// missing or the header or a table is malformed.
Result<PortableArtifactInfo> readPortableArtifactInfo(std::string_view bytes,
                                                      std::string_view file);

/// Decodes a whole portable artifact into a Module (see the file comment). `file` names
/// it in errors and locations.
Result<Module> readPortableArtifact(std::string_view bytes, std::string_view file);

} // namespace rs::ir
