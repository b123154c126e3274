//===- tools/bin/main.cc - reactant-server entry point ----------------------===//
//
// One binary with subcommands (DESIGN.md "Processes and ports"): serve, gateway, node,
// infer, loadgen, bundle, run, validate, cache, config, bench, verify-image, probe.
// `--version` prints the build's identity.
//
//===----------------------------------------------------------------------===//
#include "support/build_info.h"
#include "tools/bench_command.h"
#include "tools/bundle_command.h"
#include "tools/cache_command.h"
#include "tools/config_command.h"
#include "tools/gateway_command.h"
#include "tools/infer_command.h"
#include "tools/loadgen_command.h"
#include "tools/node_command.h"
#include "tools/probe_command.h"
#include "tools/run_command.h"
#include "tools/serve_command.h"
#include "tools/validate_command.h"
#include "tools/verify_image.h"

#include <CLI/CLI.hpp>
#include <absl/synchronization/mutex.h>

#include <cstdio>
#include <malloc.h>

int main(int argc, char **argv) {
  // Debian's Abseil is built without NDEBUG, so its deadlock detector is on: every
  // absl::Mutex acquisition takes a global spin lock to record itself in a lock graph, and
  // gRPC takes many per call. Our own code uses std::mutex; gRPC's locks are not ours to check.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // Blocks of 4 MiB and more (tensors, payloads) come from mmap and go back to the system
  // when freed. Left alone, glibc raises this threshold to 32 MiB after the first such free,
  // and freed tensors then stay in the arena of whichever thread freed them (one per gRPC and
  // answer thread), which raises the serving peak by about a batch's activations per thread
  // (bench/serve_rss.sh; docs/performance.md, "Peak resident memory while serving"). The
  // CPU executor's own intermediates are recycled by its BlockCache, not by malloc.
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  // Setting the mmap threshold by hand also freezes the trim threshold at its 128 KiB
  // default (glibc raises both together only while neither is set). Every free that leaves
  // more than 128 KiB at the top of an arena's heap would then hand those pages back to the
  // kernel, and the next answer or request of that size faults them in again, page by page,
  // on the serving path (docs/performance.md, "Heap trimming on the serving path").
  // Twice the mmap threshold is the value glibc itself pairs with it; the memory trimmer
  // (server/memory_trimmer.h) still returns free memory after a peak.
  mallopt(M_TRIM_THRESHOLD, 8 << 20);
  CLI::App app{"reactant-server: a KServe V2 inference server for StableHLO bundles"};
  app.require_subcommand(0, 1);
  bool version = false;
  app.add_flag("--version", version, "Print the version and build identity");
  rs::tools::addServeCommand(app);
  rs::tools::addInferCommand(app);
  rs::tools::addLoadgenCommand(app);
  rs::tools::addBundleCommand(app);
  rs::tools::addRunCommand(app);
  rs::tools::addGatewayCommand(app);
  rs::tools::addNodeCommand(app);
  rs::tools::addValidateCommand(app);
  rs::tools::addCacheCommand(app);
  rs::tools::addBenchCommand(app);
  rs::tools::addConfigCommand(app);
  rs::tools::addVerifyImageCommand(app);
  rs::tools::addProbeCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // --help: 0. Misuse (an unknown or missing option, a value that does not convert): the
    // message and a hint go to stderr and the status is 2, the usual one for a usage error
    // (CLI11's own codes, 105-109, say nothing to a shell script).
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (version) {
    std::fputs(rs::thisBuild().versionText().c_str(), stdout);
    return 0;
  }
  if (app.get_subcommands().empty()) {
    std::fputs(app.help().c_str(), stdout);
    return 2;
  }
  return 0;
}
