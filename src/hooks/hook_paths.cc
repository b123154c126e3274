//===- hooks/hook_paths.cc - Where the hook runner and interpreter are ------===//
#include "hooks/hook_paths.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace rs::hooks {
namespace {

namespace fs = std::filesystem;

fs::path binaryDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path(ec) : exe.parent_path();
}

bool executable(const fs::path &p) { return ::access(p.c_str(), X_OK) == 0; }

} // namespace

Result<std::string> findHookRunner() {
  const fs::path dir = binaryDir();
  const fs::path candidates[] = {dir / "reactant_hooks" / "runner.py",
                                 dir / ".." / "share" / "reactant-server" / "reactant_hooks" /
                                     "runner.py"};
  std::ostringstream looked;
  std::error_code ec;
  for (const fs::path &c : candidates) {
    if (fs::is_regular_file(c, ec))
      return fs::weakly_canonical(c, ec).string();
    looked << (looked.tellp() > 0 ? ", " : "") << c.lexically_normal().string();
  }
  return notFound() << "the hook runner reactant_hooks/runner.py is not installed next to the "
                    << "server binary (looked at " << looked.str() << ")";
}

Result<std::string> resolveHookPython(const std::string &configured) {
  if (!configured.empty())
    return configured;
  fs::path dir = binaryDir();
  for (int up = 0; up <= 4 && !dir.empty(); ++up, dir = dir.parent_path()) {
    const fs::path venv = dir / ".venv" / "bin" / "python";
    if (executable(venv))
      return venv.string();
    if (dir == dir.root_path())
      break;
  }
  const char *path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string d; std::getline(dirs, d, ':');)
    if (!d.empty() && executable(fs::path(d) / "python3"))
      return (fs::path(d) / "python3").string();
  return notFound() << "hooks.python is not set, no .venv/bin/python is beside the server "
                    << "binary, and python3 is not on PATH";
}

} // namespace rs::hooks
