//===- tools/bundle_programs.h - Program files for bundle inspect/convert --===//
//
// Private to tools/bundle_*.cc: what `bundle inspect` and `bundle convert` share. A
// program file is read whole once and decoded by its magic (a StableHLO portable
// artifact when it starts with `ML\xefR`, StableHLO text otherwise), as
// ir::parseModuleFile does, keeping the artifact's header for inspect. The program files
// of a bundle are every regular file named model*.mlir, in name order (byte-wise).
//
// Errors print as one line, `error <path>: <reason>`, where the reason is the error's
// message without its own leading "<path>: ".
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/bytecode.h"
#include "ir/ir.h"
#include "support/status.h"

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace rs::tools::detail {

/// One program file, read and decoded.
struct ProgramFile {
  std::string path;
  int64_t size_bytes = 0;
  /// The artifact's header for a portable artifact; none for text.
  std::optional<ir::PortableArtifactInfo> artifact;
  ir::Module module;
};

/// Reads and decodes `path`. Errors: those of readWholeFile (NotFound, InvalidArgument for
/// a directory), InvalidArgument for an empty file, those of readPortableArtifactInfo /
/// readPortableArtifact and of parseModule.
Result<ProgramFile> readProgramFile(const std::string &path);

/// The names (not paths) of the program files of directory `dir`, sorted. NotFound when
/// the directory cannot be listed.
Result<std::vector<std::string>> listProgramFiles(const std::string &dir);

/// True when `path` is a directory (a bundle for inspect and convert) rather than a file.
bool isDirectory(const std::string &path);

/// Writes `error <path>: <reason>` and a newline to `out`.
void printError(std::ostream &out, std::string_view path, const Status &status);

} // namespace rs::tools::detail
