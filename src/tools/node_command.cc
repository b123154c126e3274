//===- tools/node_command.cc - `reactant-server node` ------------------------===//
#include "tools/node_command.h"

#include "config/node_config.h"
#include "node/gpu_detect.h"
#include "node/node_plan.h"
#include "node/supervisor.h"
#include "support/logging.h"

#include <sched.h>

#include <spdlog/spdlog.h>

#include <charconv>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

namespace rs::tools {
namespace {

struct NodeArgs {
  std::string node_file;
  std::string role;
  std::string log_format = "text";
  std::string log_level = "info";
};

std::vector<int> allowedCpus() {
  std::vector<int> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    return out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set))
      out.push_back(cpu);
  return out;
}

int runNode(const NodeArgs &args) {
  // Block the signals before any thread exists; the supervisor waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Result<LogFormat> format = parseLogFormat(args.log_format);
  if (!format.isOk()) {
    std::fprintf(stderr, "reactant-server node: %s\n", format.status().message().c_str());
    return 1;
  }
  if (Status s = configureLogging(*format, args.log_level); !s.isOk()) {
    std::fprintf(stderr, "reactant-server node: %s\n", s.message().c_str());
    return 1;
  }
  if (*format == LogFormat::kText)
    spdlog::set_pattern("[supervisor] [%Y-%m-%d %H:%M:%S.%e] [%l] %v");

  const config::Environment env = config::processEnvironment();
  std::string path = args.node_file;
  if (path.empty()) {
    auto it = env.find("REACTANT_NODE_FILE");
    path = it != env.end() && !it->second.empty() ? it->second : "/etc/reactantserver/node.yaml";
  }
  std::error_code ec;
  const std::string absolute = std::filesystem::absolute(path, ec).string();
  Result<config::NodeConfig> node = config::loadNodeFile(ec ? path : absolute, env);
  if (!node.isOk()) {
    spdlog::error("configuration error: {}", node.status().message());
    return 1;
  }
  node::PlanInputs inputs;
  inputs.env = env;
  inputs.cpus = allowedCpus();
  if (!args.role.empty()) {
    Result<config::Role> role = node::parseRole(args.role);
    if (!role.isOk()) {
      spdlog::error("--role: {}", role.status().message());
      return 1;
    }
    inputs.role_flag = *role;
  }
  Result<std::vector<std::string>> gpus =
      node::detectGpus(node->gpus, env, node::systemGpuProbes(node::gpuVendorOf(*node)));
  if (!gpus.isOk()) {
    spdlog::error("configuration error: {}", gpus.status().message());
    return 1;
  }
  inputs.gpus = std::move(gpus).value();
  Result<node::NodePlan> plan = node::planNode(*node, inputs);
  if (!plan.isOk()) {
    spdlog::error("configuration error: {}", plan.status().message());
    return 1;
  }
  node::SupervisorOptions options;
  options.node_file = node->path;
  options.worker_args = {"--log-format", args.log_format, "--log-level", args.log_level};
  if (auto it = env.find("REACTANT_SUPERVISOR_MAX_RESTARTS"); it != env.end()) {
    const std::string &v = it->second;
    auto [ptr, err] = std::from_chars(v.data(), v.data() + v.size(), options.max_restarts);
    if (v.empty() || err != std::errc() || ptr != v.data() + v.size() || options.max_restarts < 0) {
      spdlog::error("REACTANT_SUPERVISOR_MAX_RESTARTS: expected a count >= 0, got '{}'", v);
      return 1;
    }
  }
  node::Supervisor supervisor(std::move(plan).value(), std::move(options));
  return supervisor.run(signals);
}

} // namespace

void addNodeCommand(CLI::App &app) {
  auto args = std::make_shared<NodeArgs>();
  CLI::App *cmd = app.add_subcommand(
      "node", "Supervise a node: one worker process per GPU (or N CPU workers) plus the gateway");
  cmd->add_option("node_file", args->node_file,
                  "Node file (default: REACTANT_NODE_FILE or /etc/reactantserver/node.yaml)");
  cmd->add_option("--role", args->role,
                  "all, workers or gateway (default: REACTANT_ROLE, the "
                  "node file's role, else all)");
  cmd->add_option("--log-format", args->log_format, "Log format: text or json");
  cmd->add_option("--log-level", args->log_level, "Log level: debug, info, warn, error");
  cmd->callback([args] { std::exit(runNode(*args)); });
}

} // namespace rs::tools
