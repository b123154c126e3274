//===- tools/file_output.h - Files the subcommands write -------------------===//
//
// Shared by the subcommands that write a file a user or another run reads back
// (`validate record`'s record, `validate check`'s report, `bundle convert`'s output): it
// appears whole or not at all.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <string>

namespace rs::tools::detail {

/// Writes `text` to `path` through `path`.tmp renamed into place, so `path` holds either
/// its old contents or all of `text`. Internal, naming `path`, on failure.
Status writeFileAtomically(const std::string &path, const std::string &text);

} // namespace rs::tools::detail
