//===- tools/file_output.cc - Files the subcommands write ------------------===//
#include "tools/file_output.h"

#include <filesystem>
#include <fstream>

namespace rs::tools::detail {

Status writeFileAtomically(const std::string &path, const std::string &text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      return internalError() << path << ": cannot write";
    out << text;
    out.flush();
    if (!out)
      return internalError() << path << ": write failed";
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec)
    return internalError() << path << ": cannot rename into place: " << ec.message();
  return Status::ok();
}

} // namespace rs::tools::detail
