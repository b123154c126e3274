//===- support/build_info.cc - This binary's build identity -----------------===//
#include "support/build_info.h"

#include "build_identity.h" // generated (support/CMakeLists.txt)

namespace rs {

std::string ServerBuild::toString() const {
  return "version=" + version + " commit=" + commit + " compiler=" + compiler +
         " build_type=" + build_type + " eigen=" + eigen;
}

std::string ServerBuild::versionText() const {
  return "reactant-server " + version + "\ncommit " + commit + "\ncompiler " + compiler +
         "\nbuild type " + build_type + "\neigen " + eigen +
         "\npjrt plugin: none loaded (runtime.backend: cuda logs the plugin and its version at "
         "startup)\n";
}

const ServerBuild &thisBuild() {
  static const ServerBuild build{RS_VERSION, RS_GIT_COMMIT, RS_COMPILER, RS_BUILD_TYPE,
                                 RS_EIGEN_VERSION};
  return build;
}

} // namespace rs
