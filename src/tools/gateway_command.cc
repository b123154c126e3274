//===- tools/gateway_command.cc - `reactant-server gateway` ------------------===//
#include "tools/gateway_command.h"

#include "config/node_config.h"
#include "gateway/gateway.h"
#include "support/logging.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

namespace rs::tools {
namespace {

struct GatewayArgs {
  std::string config;
  std::string log_format;
  std::string log_level;
};

int runGateway(const GatewayArgs &args) {
  // Block the signals before any thread exists; this thread waits for them below.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const config::Environment env = config::processEnvironment();
  const std::string path = args.config.empty() ? config::gatewayFilePath(env) : args.config;
  Result<config::GatewayConfig> cfg =
      path.empty() ? config::parseGatewayConfig("", "", env) : config::loadGatewayConfig(path, env);
  if (!cfg.isOk()) {
    std::fprintf(stderr, "reactant-server gateway: configuration error: %s\n",
                 cfg.status().message().c_str());
    return 1;
  }
  const std::string format_text = args.log_format.empty() ? cfg->logging_format : args.log_format;
  Result<LogFormat> format = parseLogFormat(format_text);
  if (!format.isOk()) {
    std::fprintf(stderr, "reactant-server gateway: %s\n", format.status().message().c_str());
    return 1;
  }
  if (Status s =
          configureLogging(*format, args.log_level.empty() ? cfg->logging_level : args.log_level);
      !s.isOk()) {
    std::fprintf(stderr, "reactant-server gateway: %s\n", s.message().c_str());
    return 1;
  }
  const double startup_wait = cfg->startup_wait_seconds;
  std::atomic<bool> fatal{false};
  gateway::GatewayOptions options;
  options.config = std::move(cfg).value();
  options.on_fatal = [&fatal](const Status &) { fatal = true; };
  gateway::Gateway gw(std::move(options));
  if (Status s = gw.start(); !s.isOk()) {
    spdlog::error("startup failed: {}", s.message());
    return 1;
  }
  if (Status s = gw.waitForWorkers(startup_wait); !s.isOk()) {
    spdlog::error("startup failed: {} (REACTANT_GATEWAY_STARTUP_WAIT_SECONDS={})", s.message(),
                  startup_wait);
    gw.shutdown();
    return 1;
  }
  int exit_status = 0;
  while (true) {
    siginfo_t info;
    timespec wait{0, 100 * 1000 * 1000};
    const int sig = sigtimedwait(&signals, &info, &wait);
    if (sig == SIGINT || sig == SIGTERM) {
      spdlog::info("received {}, shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
      break;
    }
    if (fatal) {
      exit_status = 1;
      break;
    }
  }
  gw.shutdown();
  spdlog::info("shutdown complete");
  return exit_status;
}

} // namespace

void addGatewayCommand(CLI::App &app) {
  auto args = std::make_shared<GatewayArgs>();
  CLI::App *cmd =
      app.add_subcommand("gateway", "KServe V2 reverse proxy in front of any number of workers");
  cmd->add_option("-c,--config", args->config, "gateway.yml (default: REACTANT_GATEWAY_FILE)");
  cmd->add_option("--log-format", args->log_format, "Log format: text or json (logging.format)");
  cmd->add_option("--log-level", args->log_level,
                  "Log level: debug, info, warn, error (logging.level)");
  cmd->callback([args] { std::exit(runGateway(*args)); });
}

} // namespace rs::tools
