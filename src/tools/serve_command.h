//===- tools/serve_command.h - `reactant-server serve` ----------------------===//
//
// Runs one worker until SIGINT or SIGTERM: reads the node file (`--config`, default
// none: every default of reference-system.md §2.2), applies INFERENCE_SERVER_*
// environment overrides, picks the worker (`--worker NAME`, default the first), brings
// it up (server/worker.h) and shuts it down gracefully on the signal: readiness turns
// false and new requests get UNAVAILABLE at once, in-flight requests finish for up to
// `--exit-timeout-secs` (default 30, Triton's name and default), then the process exits.
// A second SIGINT or SIGTERM during that wait exits at once (status 1).
// Exit status: 0 after a clean shutdown (also when the exit timeout cut the wait short:
// the requests still queued were answered UNAVAILABLE), 1 on a configuration or startup
// error (the error is printed) or a second signal, 2 for bad command-line use (CLI11).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>

namespace rs::tools {

/// Registers the `serve` subcommand on `app`.
void addServeCommand(CLI::App &app);

} // namespace rs::tools
