//===- tools/serve_command.cc - `reactant-server serve` ---------------------===//
#include "tools/serve_command.h"

#include "config/node_config.h"
#include "server/worker.h"
#include "support/logging.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

namespace rs::tools {
namespace {

struct ServeArgs {
  std::string config;
  std::string worker;
  std::string model_repo;
  std::string log_format = "text";
  std::string log_level = "info";
  double exit_timeout_secs = 30;
};

/// Resolves the worker configuration from the node file (or defaults) and flags.
Result<config::WorkerConfig> resolveConfig(const ServeArgs &args) {
  config::Environment env = config::processEnvironment();
  Result<config::NodeConfig> node = Status(internalError() << "unset");
  if (!args.config.empty()) {
    node = config::loadNodeFile(args.config, env);
  } else {
    // No node file: a minimal one naming the repository given on the command line.
    if (args.model_repo.empty())
      return invalidArgument() << "give a node file (--config node.yaml) or --model-repo DIR";
    node =
        config::parseNodeFile("model_repo: \"" + args.model_repo + "\"\n", "<command line>", env);
  }
  if (!node.isOk())
    return node.status();
  if (!args.model_repo.empty())
    node->model_repo = args.model_repo;
  int64_t index = 0;
  if (!args.worker.empty()) {
    RS_ASSIGN_OR_RETURN(index, config::findWorker(*node, args.worker));
  }
  return config::resolveWorker(*node, index);
}

int runServe(const ServeArgs &args) {
  Result<LogFormat> format = parseLogFormat(args.log_format);
  if (!format.isOk()) {
    std::fprintf(stderr, "reactant-server: %s\n", format.status().message().c_str());
    return 1;
  }
  if (Status s = configureLogging(*format, args.log_level); !s.isOk()) {
    std::fprintf(stderr, "reactant-server: %s\n", s.message().c_str());
    return 1;
  }
  Result<config::WorkerConfig> config = resolveConfig(args);
  if (!config.isOk()) {
    spdlog::error("configuration error: {}", config.status().message());
    return 1;
  }
  // Block the signals in every thread; this thread waits for them below.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  server::Worker worker(
      server::WorkerOptions{.config = std::move(config).value(), .ephemeral_ports = false});
  if (Status s = worker.start(); !s.isOk()) {
    spdlog::error("startup failed: {}", s.message());
    worker.shutdown();
    return 1;
  }
  int sig = 0;
  sigwait(&signals, &sig);
  spdlog::info("received {}, shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
  // A second signal while draining ends the process at once.
  std::thread([signals] {
    int again = 0;
    sigset_t wait_for = signals;
    sigwait(&wait_for, &again);
    spdlog::warn("received {} again, exiting at once", again == SIGTERM ? "SIGTERM" : "SIGINT");
    spdlog::default_logger()->flush();
    std::_Exit(1);
  }).detach();
  const auto timeout =
      std::chrono::milliseconds(static_cast<int64_t>(std::max(0.0, args.exit_timeout_secs) * 1000));
  const bool drained = worker.drainAndShutdown(timeout);
  spdlog::info("shutdown complete drained={}", drained);
  return 0;
}

} // namespace

void addServeCommand(CLI::App &app) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App *cmd = app.add_subcommand("serve", "Serve a model repository (one worker)");
  cmd->add_option("-c,--config", args->config, "Node file (YAML)");
  cmd->add_option("--worker", args->worker, "Worker name in the node file (default: the first)");
  cmd->add_option("--model-repo", args->model_repo, "Model repository (overrides model_repo)");
  cmd->add_option("--log-format", args->log_format, "Log format: text or json")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--log-level", args->log_level, "Log level: debug, info, warn, error")
      ->check(
          CLI::IsMember({"trace", "debug", "info", "warn", "warning", "error", "critical", "off"}));
  cmd->add_option("--exit-timeout-secs", args->exit_timeout_secs,
                  "On SIGTERM/SIGINT, how long in-flight requests may finish (default 30)");
  cmd->callback([args] {
    if (args->config.empty() && args->model_repo.empty()) // usage error: exit 2 (bin/main.cc)
      throw CLI::ValidationError("serve", "needs --config FILE or --model-repo DIR");
    std::exit(runServe(*args));
  });
}

} // namespace rs::tools
