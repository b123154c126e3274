//===- tools/loadgen_command.h - `reactant-server loadgen` ------------------===//
//
// A load generator for a running KServe V2 server (client/load_generator.h):
//
//   reactant-server loadgen --model NAME [--protocol grpc|http|both]
//       [--grpc-url host:port] [--http-url host:port] [--concurrency N]
//       [--duration S | --requests N] [--malformed FRACTION] [--shm] [--rows N]
//       [--payloads N] [--no-verify] [--rtol R] [--seed N] [--timeout-ms N]
//       [--metrics-url host:port] [--rss-interval S] [--stop-when-unreachable N]
//
// It prints the report: throughput, p50/p90/p99/max latency of the valid requests, the
// error count, and per request kind the answers by status code (and, with --metrics-url,
// the server's resident memory over time).
// Exit status: 0 when every answer was the expected one (valid requests OK with the same
// outputs as the first answer to their payload, or UNAVAILABLE / RESOURCE_EXHAUSTED;
// malformed requests their 4xx / INVALID_ARGUMENT-class error); 1 when any answer was
// unexpected or the run could not start; 2 for bad command-line use (CLI11).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>

namespace rs::tools {

/// Registers the `loadgen` subcommand on `app`.
void addLoadgenCommand(CLI::App &app);

} // namespace rs::tools
