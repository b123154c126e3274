//===- test/node/node_process_test.cc - reactant-server node and gateway -----===//
//
// The real binary, as separate processes on loopback ports:
// - `reactant-server node` with three CPU workers: SIGKILL one under load from 8 clients;
//   every request gets an answer, the supervisor restarts the worker, traffic returns.
// - `reactant-server gateway` in front of two `reactant-server serve` processes addressed
//   as two hosts (by address:port, one by name), as a multi-host deployment is.
// Timings are printed for the record, never asserted.
//
//===----------------------------------------------------------------------===//
#include "common/files.h"
#include "common/ports.h"
#include "common/temp_dir.h"
#include "protocol/proto/grpc_service.grpc.pb.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

extern char **environ;

namespace rs::node {
namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

const std::string kBinary = RS_SERVER_BINARY;
const std::string kModelRepo = std::string(RS_SOURCE_DIR) + "/examples/model_repo";

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

using rs::testing::freePort;
using rs::testing::reservePorts;
using rs::testing::TempDir;

/// Writes `text` to <dir>/<name>; returns the file's path.
std::string writeIn(const TempDir &dir, const std::string &name, const std::string &text) {
  rs::testing::writeFile(dir.path() / name, text);
  return dir.file(name);
}

/// A child process running the binary, its output in `log`.
class Process {
public:
  Process(std::vector<std::string> args, const std::map<std::string, std::string> &env,
          const std::string &log)
      : log_(log) {
    args.insert(args.begin(), kBinary);
    std::vector<std::string> envs;
    for (char **e = environ; e && *e; ++e) {
      std::string entry(*e);
      const std::string key = entry.substr(0, entry.find('='));
      if (!env.count(key) && !key.starts_with("REACTANT_") && !key.starts_with("INFERENCE_SERVER_"))
        envs.push_back(entry);
    }
    for (const auto &[k, v] : env)
      envs.push_back(k + "=" + v);
    std::vector<char *> argv, envp;
    for (auto &a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto &e : envs)
      envp.push_back(e.data());
    envp.push_back(nullptr);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    close(fd);
  }
  ~Process() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  /// SIGTERM and wait; the exit status (or -signal).
  int terminate() {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }
  std::string output() const {
    std::ifstream in(log_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

private:
  std::string log_;
  pid_t pid_ = -1;
};

int httpStatus(int port, const std::string &path, std::string *body = nullptr) {
  httplib::Client cli("127.0.0.1", port);
  cli.set_connection_timeout(1, 0);
  cli.set_read_timeout(10, 0);
  httplib::Result r = cli.Get(path);
  if (body)
    *body = r ? r->body : "";
  return r ? r->status : 0;
}

/// Polls `ok` every 50 ms for up to `seconds`.
template <typename F> bool waitFor(double seconds, F ok) {
  const auto start = Clock::now();
  while (since(start) < seconds) {
    if (ok())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return ok();
}

double requestsServed(int metrics_port) {
  std::string text;
  if (httpStatus(metrics_port, "/metrics", &text) != 200)
    return -1;
  double sum = 0;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with("worker_requests_total{") &&
        line.find("status=\"OK\"") != std::string::npos)
      sum += std::stod(line.substr(line.rfind(' ') + 1));
  return sum;
}

/// True when `text` has a sample of `name` whose labels contain `label`.
bool hasSample(const std::string &text, const std::string &name, const std::string &label) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with(name + "{") && line.find(label) != std::string::npos)
      return true;
  return false;
}

/// The child of `parent` whose command line ends "--worker <name> ...", or -1.
pid_t workerPid(pid_t parent, const std::string &name) {
  for (const auto &e : fs::directory_iterator("/proc")) {
    const std::string pid = e.path().filename().string();
    if (pid.empty() || !std::isdigit(static_cast<unsigned char>(pid[0])))
      continue;
    std::ifstream stat(e.path() / "stat");
    std::string text;
    std::getline(stat, text);
    const size_t close_paren = text.rfind(')');
    if (close_paren == std::string::npos)
      continue;
    std::istringstream fields(text.substr(close_paren + 2));
    std::string state;
    pid_t ppid = 0;
    fields >> state >> ppid;
    if (ppid != parent || state == "Z")
      continue;
    std::ifstream cmd(e.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
    if (cmdline.find(std::string("--worker") + '\0' + name + '\0') != std::string::npos)
      return static_cast<pid_t>(std::stoi(pid));
  }
  return -1;
}

inference::ModelInferRequest irisRequest() {
  inference::ModelInferRequest req;
  req.set_model_name("iris_mlp");
  auto *in = req.add_inputs();
  in->set_name("features");
  in->set_datatype("FP32");
  in->add_shape(1);
  in->add_shape(4);
  const float x[4] = {5.1f, 3.5f, 1.4f, 0.2f};
  req.add_raw_input_contents(std::string(reinterpret_cast<const char *>(x), sizeof(x)));
  return req;
}

TEST(NodeProcessTest, RestartsAWorkerKilledUnderLoad) {
  TempDir dir;
  const int base = reservePorts(3), mbase = reservePorts(3);
  const int grpc_port = freePort(), http_port = freePort(), admin_port = freePort();
  for (int port : {base, mbase, grpc_port, http_port, admin_port})
    ASSERT_GT(port, 0);
  const std::string node_file =
      writeIn(dir, "node.yaml",
              "model_repo: " + kModelRepo + "\nbase_port: " + std::to_string(base) +
                  "\nmetrics_base_port: " + std::to_string(mbase) +
                  "\nglobal:\n  models_include: [iris_mlp]\n"
                  "  endpoints: {host: 127.0.0.1}\n"
                  "  runtime: {executable_cache: false, profile: regulated, "
                  "numerics: f32}\n"
                  "workers: [{name: w0}, {name: w1}, {name: w2}]\n");
  const std::map<std::string, std::string> env = {
      {"REACTANT_GATEWAY_LISTEN_GRPC", "127.0.0.1:" + std::to_string(grpc_port)},
      {"REACTANT_GATEWAY_LISTEN_HTTP", "127.0.0.1:" + std::to_string(http_port)},
      {"REACTANT_GATEWAY_LISTEN_METRICS", "127.0.0.1:" + std::to_string(admin_port)},
      {"REACTANT_GATEWAY_HEALTH_INTERVAL_SECONDS", "0.2"},
      {"REACTANT_GATEWAY_FILE", writeIn(dir, "gateway.yml", "scheduling: {mode: round_robin}\n")},
  };
  const auto started = Clock::now();
  Process node({"node", node_file}, env, dir.str() + "/node.log");
  // Every worker ready, and known ready by the gateway.
  auto allReady = [&] {
    std::string m;
    if (httpStatus(admin_port, "/metrics", &m) != 200)
      return false;
    for (const char *w : {"w0", "w1", "w2"})
      if (m.find(std::string("gateway_worker_ready{worker=\"") + w + "\"} 1") == std::string::npos)
        return false;
    return true;
  };
  ASSERT_TRUE(waitFor(60, allReady)) << node.output();
  std::cout << "[ timing ] node with 3 workers ready after " << since(started) << " s\n";

  // 8 clients through the gateway until told to stop.
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(grpc_port),
                                     grpc::InsecureChannelCredentials());
  auto stub = inference::GRPCInferenceService::NewStub(channel);
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::map<grpc::StatusCode, int> outcomes;
  std::map<std::string, int> errors;
  int sent = 0;
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c)
    clients.emplace_back([&] {
      const inference::ModelInferRequest req = irisRequest();
      while (!stop) {
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        inference::ModelInferResponse resp;
        {
          std::lock_guard lock(mu);
          ++sent;
        }
        grpc::Status s = stub->ModelInfer(&ctx, req, &resp);
        std::lock_guard lock(mu);
        ++outcomes[s.error_code()];
        if (!s.ok())
          ++errors[s.error_message()];
      }
    });
  auto okCount = [&] {
    std::lock_guard lock(mu);
    return outcomes[grpc::StatusCode::OK];
  };
  ASSERT_TRUE(waitFor(30, [&] { return okCount() >= 100; }));

  const pid_t victim = workerPid(node.pid(), "w1");
  ASSERT_GT(victim, 0);
  const int ok_before_kill = okCount();
  const auto killed = Clock::now();
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  pid_t restarted = -1;
  ASSERT_TRUE(waitFor(30, [&] {
    restarted = workerPid(node.pid(), "w1");
    return restarted > 0 && restarted != victim;
  })) << node.output();
  const double respawn_s = since(killed);
  ASSERT_TRUE(waitFor(60, [&] { return httpStatus(mbase + 1, "/readyz") == 200; }))
      << node.output();
  const double ready_s = since(killed);
  // Traffic returns to the restarted worker (its counters start again from zero).
  ASSERT_TRUE(waitFor(30, [&] { return requestsServed(mbase + 1) > 0; })) << node.output();
  const double traffic_s = since(killed);
  const int ok_after = okCount();
  stop = true;
  for (auto &t : clients)
    t.join();

  std::cout << "[ timing ] w1 SIGKILLed: new process after " << respawn_s << " s, ready after "
            << ready_s << " s, serving again after " << traffic_s << " s; " << ok_before_kill
            << " OK before the kill, " << ok_after - ok_before_kill
            << " OK until traffic returned\n";
  int total = 0;
  for (const auto &[code, n] : outcomes) {
    total += n;
    std::cout << "[ outcome ] grpc code " << static_cast<int>(code) << ": " << n << "\n";
  }
  for (const auto &[message, n] : errors)
    std::cout << "[ error ] " << n << " x " << message << "\n";
  // Every request got an answer: success, or UNAVAILABLE for the few in flight on w1
  // when it died (at most one per client).
  EXPECT_EQ(total, sent);
  for (const auto &[code, n] : outcomes)
    EXPECT_TRUE(code == grpc::StatusCode::OK || code == grpc::StatusCode::UNAVAILABLE)
        << "code " << static_cast<int>(code) << " x " << n;
  EXPECT_LE(outcomes[grpc::StatusCode::UNAVAILABLE], 8);
  EXPECT_GT(ok_after, ok_before_kill);

  // The gateway's /metrics carries every worker's series with its name.
  std::string metrics;
  ASSERT_EQ(httpStatus(admin_port, "/metrics", &metrics), 200);
  for (const char *w : {"w0", "w1", "w2"})
    EXPECT_TRUE(hasSample(metrics, "worker_requests_total", std::string("worker=\"") + w + "\""))
        << w;

  // The load is over: the clients hang up (a connected client holds a gRPC server's
  // shutdown until it closes its connection, or the grace ends).
  stub.reset();
  channel.reset();
  const auto term = Clock::now();
  EXPECT_EQ(node.terminate(), 0);
  std::cout << "[ timing ] SIGTERM to exit: " << since(term) << " s\n";
  const std::string log = node.output();
  {
    std::istringstream lines(log);
    std::string line;
    while (std::getline(lines, line))
      if (line.starts_with("[supervisor]") &&
          line.find("Effective configuration") == std::string::npos)
        std::cout << line << "\n";
  }
  EXPECT_NE(log.find("[w0] "), std::string::npos);
  EXPECT_NE(log.find("[w1] "), std::string::npos);
  EXPECT_NE(log.find("[supervisor] "), std::string::npos);
  EXPECT_NE(log.find("worker 'w1' (pid " + std::to_string(victim) + ") exited with signal 9"),
            std::string::npos)
      << log;
  // Every worker resolved the same settings (seed/reproducibility.md, fleet): the
  // `Effective configuration` lines differ only in the worker's name and ports.
  std::map<std::string, std::string> effective;
  {
    std::istringstream lines(log);
    std::string line;
    while (std::getline(lines, line)) {
      const size_t at = line.find("Effective configuration worker=");
      if (at == std::string::npos || !line.starts_with("[w"))
        continue;
      std::istringstream words(line.substr(at + std::strlen("Effective configuration ")));
      std::string word, name, rest;
      while (words >> word) {
        if (word.starts_with("worker="))
          name = word.substr(7);
        else if (!word.starts_with("endpoints.port=") &&
                 !word.starts_with("endpoints.metrics_port="))
          rest += word + " ";
      }
      effective[name] = rest; // the restarted w1 replaces the first one
    }
  }
  ASSERT_EQ(effective.size(), 3u) << log;
  EXPECT_EQ(effective["w0"], effective["w1"]);
  EXPECT_EQ(effective["w0"], effective["w2"]);
  EXPECT_NE(effective["w0"].find("scheduler.coalescing=false"), std::string::npos)
      << effective["w0"];
  EXPECT_NE(log.find("gateway draining"), std::string::npos);
  // No worker process is left behind.
  EXPECT_EQ(workerPid(node.pid() > 0 ? node.pid() : 0, "w0"), -1);
}

TEST(NodeProcessTest, GatewayInFrontOfTwoHosts) {
  TempDir dir;
  const int a_grpc = freePort();
  const int a_metrics = freePort();
  const int b_grpc = freePort();
  const int b_metrics = freePort();
  const int g_grpc = freePort();
  const int g_admin = freePort();
  auto hostFile = [&](const std::string &name, int grpc, int metrics) {
    return writeIn(dir, name + ".yaml",
                   "model_repo: " + kModelRepo +
                       "\nglobal:\n  models_include: [iris_mlp]\n"
                       "  endpoints: {host: 127.0.0.1, port: " +
                       std::to_string(grpc) + ", metrics_port: " + std::to_string(metrics) +
                       ", http_port: 0}\n  runtime: {executable_cache: false}\n"
                       "workers: [{name: " +
                       name + "}]\n");
  };
  Process host_a({"serve", "--config", hostFile("hostA", a_grpc, a_metrics)}, {},
                 dir.str() + "/a.log");
  Process host_b({"serve", "--config", hostFile("hostB", b_grpc, b_metrics)}, {},
                 dir.str() + "/b.log");
  ASSERT_TRUE(waitFor(60,
                      [&] {
                        return httpStatus(a_metrics, "/readyz") == 200 &&
                               httpStatus(b_metrics, "/readyz") == 200;
                      }))
      << host_a.output() << host_b.output();
  // The gateway knows the workers only by address: one by IP, one by host name.
  const std::map<std::string, std::string> env = {
      {"REACTANT_GATEWAY_WORKERS",
       "127.0.0.1:" + std::to_string(a_grpc) + ",localhost:" + std::to_string(b_grpc)},
      {"REACTANT_GATEWAY_WORKER_NAMES", "hostA,hostB"},
      {"REACTANT_GATEWAY_WORKER_METRICS",
       "127.0.0.1:" + std::to_string(a_metrics) + ",127.0.0.1:" + std::to_string(b_metrics)},
      {"REACTANT_GATEWAY_LISTEN_GRPC", "127.0.0.1:" + std::to_string(g_grpc)},
      {"REACTANT_GATEWAY_LISTEN_HTTP", ""},
      {"REACTANT_GATEWAY_LISTEN_METRICS", "127.0.0.1:" + std::to_string(g_admin)},
      {"REACTANT_GATEWAY_STARTUP_WAIT_SECONDS", "30"},
      {"REACTANT_GATEWAY_HEALTH_INTERVAL_SECONDS", "0.2"},
  };
  Process gw({"gateway", "--log-format", "text"}, env, dir.str() + "/gateway.log");
  ASSERT_TRUE(waitFor(60, [&] {
    std::string m;
    return httpStatus(g_admin, "/metrics", &m) == 200 &&
           m.find("gateway_worker_ready{worker=\"hostA\"} 1") != std::string::npos &&
           m.find("gateway_worker_ready{worker=\"hostB\"} 1") != std::string::npos;
  })) << gw.output();

  auto stub = inference::GRPCInferenceService::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(g_grpc), grpc::InsecureChannelCredentials()));
  const double a0 = requestsServed(a_metrics), b0 = requestsServed(b_metrics);
  std::string first_bytes;
  for (int i = 0; i < 6; ++i) {
    grpc::ClientContext ctx;
    inference::ModelInferResponse resp;
    grpc::Status s = stub->ModelInfer(&ctx, irisRequest(), &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_EQ(resp.raw_output_contents_size(), 1);
    if (i == 0)
      first_bytes = resp.raw_output_contents(0);
    EXPECT_EQ(resp.raw_output_contents(0), first_bytes) << "request " << i;
  }
  EXPECT_EQ(requestsServed(a_metrics) - a0, 3);
  EXPECT_EQ(requestsServed(b_metrics) - b0, 3);
  std::string metrics;
  ASSERT_EQ(httpStatus(g_admin, "/metrics", &metrics), 200);
  EXPECT_TRUE(hasSample(metrics, "worker_requests_total", "worker=\"hostA\""));
  EXPECT_TRUE(hasSample(metrics, "worker_requests_total", "worker=\"hostB\""));
  stub.reset();
  EXPECT_EQ(gw.terminate(), 0);
  EXPECT_EQ(host_a.terminate(), 0);
  EXPECT_EQ(host_b.terminate(), 0);
}

} // namespace
} // namespace rs::node
