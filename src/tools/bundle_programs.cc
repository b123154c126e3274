//===- tools/bundle_programs.cc - Program files for bundle inspect/convert -===//
#include "tools/bundle_programs.h"

#include "ir/parser.h"
#include "support/file.h"

#include <algorithm>
#include <filesystem>

namespace rs::tools::detail {

namespace fs = std::filesystem;

Result<ProgramFile> readProgramFile(const std::string &path) {
  ProgramFile program;
  program.path = path;
  RS_ASSIGN_OR_RETURN(std::string bytes, readWholeFile(path));
  program.size_bytes = static_cast<int64_t>(bytes.size());
  if (bytes.empty())
    return invalidArgument() << path
                             << ": is empty (expected StableHLO text or a portable artifact)";
  if (ir::isBytecode(bytes)) {
    RS_ASSIGN_OR_RETURN(program.artifact, ir::readPortableArtifactInfo(bytes, path));
    RS_ASSIGN_OR_RETURN(program.module, ir::readPortableArtifact(bytes, path));
  } else {
    RS_ASSIGN_OR_RETURN(program.module, ir::parseModule(bytes, path));
  }
  return program;
}

Result<std::vector<std::string>> listProgramFiles(const std::string &dir) {
  std::vector<std::string> names;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec)
    return notFound() << dir << ": cannot list the directory: " << ec.message();
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec)
      return notFound() << dir << ": cannot list the directory: " << ec.message();
    std::error_code type_ec;
    const std::string name = it->path().filename().string();
    if (it->is_regular_file(type_ec) && name.starts_with("model") && name.ends_with(".mlir"))
      names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool isDirectory(const std::string &path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

void printError(std::ostream &out, std::string_view path, const Status &status) {
  std::string_view reason = status.message();
  if (reason.size() > path.size() + 2 && reason.starts_with(path) &&
      reason.substr(path.size(), 2) == ": ")
    reason.remove_prefix(path.size() + 2);
  out << "error " << path << ": " << reason << "\n";
}

} // namespace rs::tools::detail
