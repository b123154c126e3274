//===- tools/probe_command.h - `reactant-server probe` ---------------------===//
//
// The release image's health check (docs/deploy.md, "The release image"): the image holds
// no shell and no curl, so its Healthcheck runs
//
//   reactant-server probe [--url http://127.0.0.1:8002/readyz] [--timeout-ms 2000]
//
// which sends one HTTP GET and exits 0 when the answer is 2xx, 1 for another status
// (printed with the body's first line) and 3 when nothing answers. /healthz is the
// liveness path, /readyz the readiness path (both on the metrics port).
//
// Thread safety: the function touches only its arguments and the network.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>

namespace rs::tools {

struct ProbeOptions {
  /// http://HOST:PORT/PATH
  std::string url = "http://127.0.0.1:8002/readyz";
  int64_t timeout_ms = 2000;
};

/// Sends the probe; returns kExitOk (2xx), kExitCheckFailed (another status) or kExitError
/// (a malformed URL, nothing listening, a timeout), with one line on `out` or `err`.
int runProbe(const ProbeOptions &options, std::ostream &out, std::ostream &err);

/// Registers `probe` on `app`.
void addProbeCommand(CLI::App &app);

} // namespace rs::tools
