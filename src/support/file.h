//===- support/file.h - Reading whole files ---------------------------------===//
//
// One way to read a configuration file, a manifest, a program text or a request file:
// checked to be a regular file first, so a directory or a device where a file is expected is
// an error that names it, never an exception (a std::ifstream on a directory throws from
// its stream buffer once read).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <string>

namespace rs {

/// The bytes of the regular file at `path`. Errors, each message starting with the path:
/// NotFound "cannot open: <reason>" (missing, no permission), InvalidArgument "is a
/// directory, not a file" / "is not a regular file", Internal "read failed: <reason>".
Result<std::string> readWholeFile(const std::string &path);

} // namespace rs
