//===- support/build_info.h - This binary's build identity ------------------===//
//
// Who built this binary, from what: the project version, the git commit, the compiler, the
// CMake build type and the Eigen version of the CPU executor. CMake writes the values once,
// at configure time (support/build_identity.h.in); nothing sets them at run time. The
// identity is part of every executable cache key, the `Effective configuration` line, the
// `reactant_server_build_info` metric, the deployment evidence and the cache archive, each
// of which receives it in its options.
//
// Thread safety: immutable values.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace rs {

/// The identity of a server build. Printed by `reactant-server --version` and in
/// `Effective configuration`.
struct ServerBuild {
  std::string version = "unknown";    // project version, "0.1.0"
  std::string commit = "unknown";     // git HEAD, 12 hex digits ("-dirty": local changes)
  std::string compiler;               // "GNU 12.2.0"
  std::string build_type = "unknown"; // CMake build type
  std::string eigen;                  // Eigen version used by the CPU executor, "3.4.0"

  /// "version=0.1.0 commit=83f1385c0b2a compiler=GNU 12.2.0 build_type=RelWithDebInfo
  /// eigen=3.4.0" (the `build` of the Effective configuration line and of cache keys).
  std::string toString() const;
  /// What `reactant-server --version` prints, one fact per line:
  ///   reactant-server 0.1.0
  ///   commit 83f1385c0b2a
  ///   compiler GNU 12.2.0
  ///   build type RelWithDebInfo
  ///   eigen 3.4.0
  ///   pjrt plugin: none loaded (runtime.backend: cuda logs the plugin and its version at startup)
  std::string versionText() const;
};

/// The identity recorded when this binary was built (cmake/build_identity.cmake; "unknown"
/// commit outside a git checkout unless RS_SOURCE_COMMIT is set).
const ServerBuild &thisBuild();

} // namespace rs
