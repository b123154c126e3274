//===- tools/node_command.h - `reactant-server node` -------------------------===//
//
// Runs a node (node/supervisor.h): the workers of a node file, one process each, plus the
// embedded gateway on the public ports when there are two or more:
//
//   reactant-server node [NODE_FILE] [--role all|workers|gateway]
//                        [--log-format text|json] [--log-level LEVEL]
//
// NODE_FILE defaults to REACTANT_NODE_FILE, else /etc/reactantserver/node.yaml. GPUs come
// from REACTANT_GPUS, the file's `gpus:`, CUDA_VISIBLE_DEVICES, nvidia-smi or /dev/nvidia*
// (node/gpu_detect.h); CPU workers from a `workers:` list or REACTANT_CPU_WORKERS. The
// gateway reads REACTANT_GATEWAY_FILE (or /etc/reactantserver/gateway.yml) and the
// REACTANT_GATEWAY_* variables; its public ports are listen.grpc / listen.http /
// listen.metrics (8001 / 8000 / 8002). The worker processes log with the same flags; every
// line they print is prefixed "[<worker>] ", the node's own "[supervisor] " (text format).
// Exit status: 0 after SIGTERM/SIGINT and a clean drain; 1 on a configuration error or
// when REACTANT_SUPERVISOR_MAX_RESTARTS is exceeded; 2 for bad command-line use.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>

namespace rs::tools {

/// Registers the `node` subcommand on `app`.
void addNodeCommand(CLI::App &app);

} // namespace rs::tools
