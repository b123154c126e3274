//===- config/keys.h - The key tables of the node file and gateway.yml ----===//
//
// The rows of every configuration key (config/key_table.h): the node file's top level
// (node_keys.cc), a worker's keys under `global:` and a worker's override blocks
// (worker_keys.cc, worker_runtime_keys.cc, worker_scheduler_keys.cc), and gateway.yml plus its
// process settings (gateway_keys.cc). Keys, defaults and variables are the reference
// implementation's (reference-system.md §2, §8.1) plus the reproducibility page's and this server's
// own, each row saying which.
//
// Thread safety: each table is built once, on first use, and immutable afterwards.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "config/gateway_config.h"
#include "config/key_table.h"
#include "config/node_config.h"
#include "config/worker_config.h"

namespace rs::config {

/// The node file's top-level keys (documented; parsed by node_config.cc).
const KeyTable<NodeConfig> &nodeKeys();
/// A worker's keys (`global:`, a worker's override block, INFERENCE_SERVER_* variables).
const KeyTable<WorkerConfig> &workerKeys();
/// gateway.yml's keys and the gateway's REACTANT_GATEWAY_* process settings.
const KeyTable<GatewayConfig> &gatewayKeys();

} // namespace rs::config
