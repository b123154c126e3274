//===- tools/main.cpp - reactant-server entry point -------------------------===//
//
// One binary with subcommands (DESIGN.md "Processes and ports"): serve, infer, bundle,
// run. `--version` prints the build's identity.
//
//===----------------------------------------------------------------------===//
#include "tools/build_info.h"
#include "tools/bundle_command.h"
#include "tools/infer_command.h"
#include "tools/serve_command.h"

#include <CLI/CLI.hpp>
#include <Eigen/Core>

#include <cstdio>

int main(int argc, char **argv) {
  CLI::App app{"reactant-server: a KServe V2 inference server for StableHLO bundles"};
  app.require_subcommand(0, 1);
  bool version = false;
  app.add_flag("--version", version, "Print the version and build identity");
  rs::tools::addServeCommand(app);
  rs::tools::addInferCommand(app);
  rs::tools::addBundleCommand(app);
  CLI11_PARSE(app, argc, argv);
  if (version) {
    std::printf("reactant-server %s\ncommit %s\ncompiler %s\nbuild type %s\neigen %d.%d.%d\n",
                RS_VERSION, RS_GIT_COMMIT, RS_COMPILER, RS_BUILD_TYPE, EIGEN_WORLD_VERSION,
                EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION);
    return 0;
  }
  if (app.get_subcommands().empty()) {
    std::fputs(app.help().c_str(), stdout);
    return 2;
  }
  return 0;
}
