//===- node/supervisor.h - Worker processes and the embedded gateway --------===//
//
// `reactant-server node` (reference-system.md section 9): runs a NodePlan.
//
// - Each worker is a child process `<executable> serve --config <node file> --worker
//   <name>` started with fork/exec, with the plan's environment (CUDA_VISIBLE_DEVICES,
//   REACTANT_WORKER_NAME, port overrides) and, for a CPU worker, its CPU affinity set
//   before exec. Children get PR_SET_PDEATHSIG SIGTERM, so they never outlive the node.
// - Their stdout and stderr are multiplexed onto the node's as "[<worker>] <line>"
//   (output_pump.h); the node's own log lines are "[supervisor] ...".
// - A worker that exits is restarted after min(2^(n-1), 30) s for its n-th restart; a
//   worker that ran 60 s or more starts again from n = 1.
//   REACTANT_SUPERVISOR_MAX_RESTARTS (default 0, unlimited) caps the restarts of the node;
//   past it the node stops with exit status 1.
// - The gateway, when the plan has one, runs inside the supervisor process on the public
//   ports; it reaches the workers over gRPC and routes around a restarting one. A fatal
//   gateway condition restarts the gateway with the same backoff.
// - SIGTERM or SIGINT: the gateway drains first (no new calls; in-flight ones finish, up to
//   10 s), then every worker gets SIGTERM and up to 15 s to finish before SIGKILL; exit
//   status 0.
//
// Thread safety: run() once, from the thread that blocked the signals.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "node/node_plan.h"

#include <signal.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace rs::node {

struct SupervisorOptions {
  /// The binary to run as `serve` (the running one by default).
  std::string executable = "/proc/self/exe";
  /// The node file the workers read (the same file the plan came from).
  std::string node_file;
  /// Extra arguments after `serve --config F --worker W` (e.g. --log-format json).
  std::vector<std::string> worker_args;
  /// Restarts allowed in total before the node gives up (0: unlimited).
  int64_t max_restarts = 0;
  std::chrono::milliseconds worker_grace{15000};
  std::chrono::milliseconds gateway_grace{10000};
};

class Supervisor {
public:
  Supervisor(NodePlan plan, SupervisorOptions options);
  ~Supervisor();
  Supervisor(const Supervisor &) = delete;
  Supervisor &operator=(const Supervisor &) = delete;

  /// Runs the node until SIGTERM or SIGINT; returns the exit status. `signals` holds
  /// SIGTERM, SIGINT and SIGCHLD, blocked in every thread of the process by the caller.
  int run(const sigset_t &signals);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace rs::node
