//===- node/supervisor.cc - Worker processes and the embedded gateway -------===//
#include "node/supervisor.h"

#include "gateway/gateway.h"
#include "node/output_pump.h"

#include <fcntl.h>
#include <fmt/ranges.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>
#include <thread>

extern char **environ;

namespace rs::node {
namespace {

using Clock = std::chrono::steady_clock;

/// Uptime that resets the restart counter, and the backoff cap.
constexpr double kStableSeconds = 60;
constexpr double kMaxBackoffSeconds = 30;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// min(2^(n-1), 30) seconds for the n-th restart (n >= 1).
double backoffSeconds(int n) {
  return std::min(std::ldexp(1.0, std::max(n, 1) - 1), kMaxBackoffSeconds);
}

std::string exitText(int status) {
  if (WIFEXITED(status))
    return "status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  return "wait status " + std::to_string(status);
}

std::string cpuText(const std::vector<int> &cpus) {
  return cpus.empty() ? "all" : fmt::to_string(fmt::join(cpus, ","));
}

} // namespace

struct Supervisor::Impl {
  struct Child {
    WorkerPlan plan;
    pid_t pid = -1;
    Clock::time_point started{};
    int restarts = 0; // since it last ran kStableSeconds
    std::optional<Clock::time_point> restart_at;
  };

  NodePlan plan;
  SupervisorOptions options;
  OutputPump pump;
  std::vector<Child> children;
  std::unique_ptr<gateway::Gateway> gateway;
  std::atomic<bool> gateway_fatal{false};
  int gateway_restarts = 0;
  Clock::time_point gateway_started{};
  std::optional<Clock::time_point> gateway_restart_at;
  int64_t total_restarts = 0;

  Status spawn(Child &c);
  Status startGateway();
  /// True when the node may restart once more (counts it).
  bool allowRestart();
  void reap();
  void stopWorkers();
  int run(const sigset_t &signals);
};

Status Supervisor::Impl::spawn(Child &c) {
  // Everything the child needs is built before fork: after it, only async-signal-safe calls.
  std::vector<std::string> args = {options.executable, "serve",    "--config",
                                   options.node_file,  "--worker", c.plan.name};
  args.insert(args.end(), options.worker_args.begin(), options.worker_args.end());
  std::vector<std::string> env;
  for (char **e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    std::string_view key = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const auto &[k, v] : c.plan.env)
      overridden = overridden || k == key;
    if (!overridden)
      env.emplace_back(entry);
  }
  for (const auto &[k, v] : c.plan.env)
    env.push_back(k + "=" + v);
  std::vector<char *> argv, envp;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string &e : env)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (int cpu : c.plan.cpus)
    CPU_SET(cpu, &cpus);
  const bool pin = !c.plan.cpus.empty();

  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0)
    return internalError() << "worker '" << c.plan.name << "': pipe: " << std::strerror(errno);
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return internalError() << "worker '" << c.plan.name << "': pipe: " << std::strerror(errno);
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {out[0], out[1], err[0], err[1]})
      close(fd);
    return internalError() << "worker '" << c.plan.name << "': fork: " << std::strerror(errno);
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
      _exit(1);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    if (pin)
      sched_setaffinity(0, sizeof(cpus), &cpus);
    execve(argv[0], argv.data(), envp.data());
    const char msg[] = "exec of the worker binary failed\n";
    [[maybe_unused]] ssize_t n = write(STDERR_FILENO, msg, sizeof(msg) - 1);
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  pump.add(out[0], c.plan.name, STDOUT_FILENO);
  pump.add(err[0], c.plan.name, STDERR_FILENO);
  c.pid = pid;
  c.started = Clock::now();
  c.restart_at.reset();
  spdlog::info("worker '{}' started pid={} device={} cpus={} grpc={} metrics={}", c.plan.name, pid,
               c.plan.device.empty() ? "cpu" : c.plan.device, cpuText(c.plan.cpus),
               c.plan.grpc_endpoint,
               c.plan.metrics_endpoint.empty() ? "off" : c.plan.metrics_endpoint);
  return Status::ok();
}

Status Supervisor::Impl::startGateway() {
  gateway_fatal = false;
  gateway::GatewayOptions o;
  o.config = *plan.gateway;
  o.on_fatal = [this](const Status &) { gateway_fatal = true; };
  gateway = std::make_unique<gateway::Gateway>(std::move(o));
  gateway_started = Clock::now();
  Status s = gateway->start();
  if (!s.isOk())
    gateway.reset();
  return s;
}

bool Supervisor::Impl::allowRestart() {
  ++total_restarts;
  if (options.max_restarts > 0 && total_restarts > options.max_restarts) {
    spdlog::error("restart limit reached: {} restarts (REACTANT_SUPERVISOR_MAX_RESTARTS={}); "
                  "stopping the node",
                  total_restarts - 1, options.max_restarts);
    return false;
  }
  return true;
}

void Supervisor::Impl::reap() {
  int status = 0;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (Child &c : children) {
      if (c.pid != pid)
        continue;
      const double up = secondsSince(c.started);
      if (up >= kStableSeconds)
        c.restarts = 0;
      ++c.restarts;
      const double delay = backoffSeconds(c.restarts);
      c.pid = -1;
      c.restart_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(delay));
      spdlog::warn("worker '{}' (pid {}) exited with {} after {:.1f} s; restart {} in {:.0f} s",
                   c.plan.name, pid, exitText(status), up, c.restarts, delay);
    }
  }
}

void Supervisor::Impl::stopWorkers() {
  for (Child &c : children)
    if (c.pid > 0)
      kill(c.pid, SIGTERM);
  const auto deadline = Clock::now() + options.worker_grace;
  while (true) {
    bool any = false;
    for (Child &c : children) {
      if (c.pid <= 0)
        continue;
      int status = 0;
      pid_t r = waitpid(c.pid, &status, WNOHANG);
      if (r == c.pid || (r < 0 && errno == ECHILD)) {
        spdlog::info("worker '{}' (pid {}) stopped with {}", c.plan.name, c.pid,
                     r == c.pid ? exitText(status) : "unknown status");
        c.pid = -1;
      } else {
        any = true;
      }
    }
    if (!any)
      return;
    if (Clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (Child &c : children) {
    if (c.pid <= 0)
      continue;
    spdlog::warn("worker '{}' (pid {}) did not stop within {} ms; SIGKILL", c.plan.name, c.pid,
                 options.worker_grace.count());
    kill(c.pid, SIGKILL);
    int status = 0;
    waitpid(c.pid, &status, 0);
    c.pid = -1;
  }
}

int Supervisor::Impl::run(const sigset_t &signals) {
  for (const std::string &a : plan.advisories)
    spdlog::warn("advisory: {}", a);
  spdlog::info("node role={} workers={} gateway={}", config::roleName(plan.role),
               plan.workers.size(), plan.gateway ? "embedded" : "none");
  for (const WorkerPlan &w : plan.workers) {
    Child c;
    c.plan = w;
    children.push_back(std::move(c));
  }
  int exit_status = 0;
  for (Child &c : children)
    if (Status s = spawn(c); !s.isOk()) {
      spdlog::error("{}", s.message());
      c.restart_at = Clock::now() + std::chrono::seconds(1);
    }
  if (plan.gateway) {
    if (Status s = startGateway(); !s.isOk()) {
      spdlog::error("gateway failed to start: {}", s.message());
      stopWorkers();
      pump.stop();
      return 1;
    }
  }
  while (true) {
    siginfo_t info;
    timespec wait{0, 100 * 1000 * 1000};
    const int sig = sigtimedwait(&signals, &info, &wait);
    if (sig == SIGTERM || sig == SIGINT) {
      spdlog::info("received {}: draining the gateway, then the workers",
                   sig == SIGTERM ? "SIGTERM" : "SIGINT");
      break;
    }
    reap();
    bool give_up = false;
    for (Child &c : children) {
      if (c.pid > 0 || !c.restart_at || Clock::now() < *c.restart_at)
        continue;
      if (!allowRestart()) {
        give_up = true;
        break;
      }
      if (Status s = spawn(c); !s.isOk()) {
        spdlog::error("{}", s.message());
        ++c.restarts;
        c.restart_at =
            Clock::now() + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(backoffSeconds(c.restarts)));
      }
    }
    if (!give_up && plan.gateway && gateway_fatal && gateway) {
      gateway->shutdown(options.gateway_grace);
      gateway.reset();
      if (secondsSince(gateway_started) >= kStableSeconds)
        gateway_restarts = 0;
      ++gateway_restarts;
      const double delay = backoffSeconds(gateway_restarts);
      spdlog::warn("gateway stopped on a fatal condition; restart {} in {:.0f} s", gateway_restarts,
                   delay);
      gateway_restart_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(delay));
    }
    if (!give_up && plan.gateway && !gateway && gateway_restart_at &&
        Clock::now() >= *gateway_restart_at) {
      if (!allowRestart()) {
        give_up = true;
      } else if (Status s = startGateway(); !s.isOk()) {
        spdlog::error("gateway failed to start: {}", s.message());
        gateway_restart_at =
            Clock::now() + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(backoffSeconds(++gateway_restarts)));
      } else {
        gateway_restart_at.reset();
      }
    }
    if (give_up) {
      exit_status = 1;
      break;
    }
  }
  if (gateway) {
    gateway->shutdown(options.gateway_grace);
    gateway.reset();
  }
  stopWorkers();
  pump.stop();
  spdlog::info("node stopped");
  return exit_status;
}

Supervisor::Supervisor(NodePlan plan, SupervisorOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->plan = std::move(plan);
  impl_->options = std::move(options);
}

Supervisor::~Supervisor() = default;

int Supervisor::run(const sigset_t &signals) { return impl_->run(signals); }

} // namespace rs::node
