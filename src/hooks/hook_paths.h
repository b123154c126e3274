//===- hooks/hook_paths.h - Where the hook runner and interpreter are -------===//
//
// The runner (python/reactant_hooks/runner.py) ships with the server and is found next to
// the running binary (docs/hooks.md, "Installation"):
//   <dir of the binary>/reactant_hooks/runner.py                       (the build tree: the
//                                                                       build copies it there)
//   <dir of the binary>/../share/reactant-server/reactant_hooks/runner.py  (an installation)
// The interpreter is `hooks.python` when set; else the project's virtual environment,
// the first `.venv/bin/python` in the binary's directory or one of its four parents (the
// build tree's build/src/tools/ finds the checkout's .venv); else `python3` on PATH.
//
// Thread safety: free functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <string>

namespace rs::hooks {

/// The runner's path. NotFound naming every place looked at when none holds it.
Result<std::string> findHookRunner();

/// The interpreter for `configured` (hooks.python; "" = the default described above), as
/// an absolute path. NotFound when `python3` is needed and not on PATH.
Result<std::string> resolveHookPython(const std::string &configured);

} // namespace rs::hooks
