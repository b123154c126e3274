//===- test/node/node_plan_test.cc - GPUs, workers, ports and the gateway ---===//
#include "node/gpu_detect.h"
#include "node/node_plan.h"
#include "node/output_pump.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

namespace rs::node {
namespace {

using Env = config::Environment;
using Strings = std::vector<std::string>;

/// The CUDA profile's sources with `smi` devices from nvidia-smi and `dev` /dev/nvidia files.
GpuProbes fakeProbes(std::optional<int> smi, int dev) {
  GpuProbes p;
  p.vendor = pjrt::findVendorProfile("cuda");
  p.tool_count = [smi] { return smi; };
  p.device_file_count = [dev] { return dev; };
  return p;
}

TEST(GpuDetectTest, FirstSourceWins) {
  config::GpuSelection autoSel;
  config::GpuSelection count;
  count.kind = config::GpuSelection::Kind::kCount;
  count.count = 2;
  config::GpuSelection list;
  list.kind = config::GpuSelection::Kind::kList;
  list.devices = {"GPU-aaaa", "3"};
  const GpuProbes four = fakeProbes(4, 8);

  EXPECT_EQ(*detectGpus(autoSel, {{"REACTANT_GPUS", "3"}}, four), (Strings{"0", "1", "2"}));
  EXPECT_EQ(*detectGpus(count, {{"REACTANT_GPUS", "0"}}, four), Strings{});
  EXPECT_EQ(*detectGpus(autoSel, {{"REACTANT_GPUS", "2, GPU-x"}}, four), (Strings{"2", "GPU-x"}));
  EXPECT_EQ(*detectGpus(count, {{"CUDA_VISIBLE_DEVICES", "5"}}, four), (Strings{"0", "1"}));
  EXPECT_EQ(*detectGpus(list, {}, four), (Strings{"GPU-aaaa", "3"}));
  EXPECT_EQ(*detectGpus(autoSel, {{"CUDA_VISIBLE_DEVICES", "1,3"}}, four), (Strings{"1", "3"}));
  EXPECT_EQ(*detectGpus(autoSel, {{"CUDA_VISIBLE_DEVICES", ""}}, four), Strings{});
  EXPECT_EQ(*detectGpus(autoSel, {}, four), (Strings{"0", "1", "2", "3"}));
  EXPECT_EQ(*detectGpus(autoSel, {}, fakeProbes(std::nullopt, 2)), (Strings{"0", "1"}));
  EXPECT_EQ(*detectGpus(autoSel, {}, fakeProbes(std::nullopt, 0)), Strings{});

  Result<Strings> empty = detectGpus(autoSel, {{"REACTANT_GPUS", ""}}, four);
  EXPECT_EQ(empty.status().message(), "REACTANT_GPUS is set but empty: give a count (0 for a CPU "
                                      "node) or a comma list of ordinals or UUIDs");
  Result<Strings> twice = detectGpus(autoSel, {{"REACTANT_GPUS", "1,1"}}, four);
  EXPECT_EQ(twice.status().message(), "REACTANT_GPUS: device '1' is listed twice");
}

/// Where the in-memory node files claim to live: `model_repo: model_repo` is then the
/// examples' repository (it must exist; planning loads nothing).
const std::string kPath = std::string(RS_SOURCE_DIR) + "/examples/plan.yaml";

/// A node file in memory.
config::NodeConfig node(const std::string &yaml, const Env &env = {}) {
  Result<config::NodeConfig> n = config::parseNodeFile(yaml, kPath, env);
  EXPECT_TRUE(n.isOk()) << n.status().toString();
  return n.isOk() ? std::move(n).value() : config::NodeConfig{};
}

std::string envOf(const WorkerPlan &w, const std::string &key) {
  for (const auto &[k, v] : w.env)
    if (k == key)
      return v;
  return "<unset>";
}

constexpr const char *kCpu3 = R"(model_repo: model_repo
base_port: 8080
metrics_base_port: 9100
workers: [{name: a}, {name: b}, {name: c}]
)";

TEST(NodePlanTest, ThreeCpuWorkersBehindTheEmbeddedGateway) {
  PlanInputs in;
  in.cpus = {0, 1, 2, 3, 4};
  Result<NodePlan> plan = planNode(node(kCpu3), in);
  ASSERT_TRUE(plan.isOk()) << plan.status().toString();
  EXPECT_EQ(plan->role, config::Role::kAll);
  EXPECT_FALSE(plan->gpu_node);
  ASSERT_EQ(plan->workers.size(), 3u);
  // Shares of the 5 CPUs: 2, 2, 1, contiguous.
  EXPECT_EQ(plan->workers[0].cpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(plan->workers[1].cpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(plan->workers[2].cpus, (std::vector<int>{4}));
  const WorkerPlan &b = plan->workers[1];
  EXPECT_EQ(b.name, "b");
  EXPECT_EQ(b.grpc_endpoint, "127.0.0.1:8081");
  EXPECT_EQ(b.metrics_endpoint, "127.0.0.1:9101");
  EXPECT_EQ(b.env, (std::vector<std::pair<std::string, std::string>>{
                       {"CUDA_VISIBLE_DEVICES", ""},
                       {"INFERENCE_SERVER_ENDPOINTS_HTTP_PORT", "0"},
                       {"INFERENCE_SERVER_RUNTIME_CPU_THREADS", "2"},
                       {"REACTANT_WORKER_NAME", "b"},
                   }));
  ASSERT_TRUE(plan->gateway.has_value());
  EXPECT_EQ(plan->gateway->endpoints,
            (Strings{"127.0.0.1:8080", "127.0.0.1:8081", "127.0.0.1:8082"}));
  EXPECT_EQ(plan->gateway->metrics_endpoints,
            (Strings{"127.0.0.1:9100", "127.0.0.1:9101", "127.0.0.1:9102"}));
  EXPECT_EQ(plan->gateway->worker_names, (Strings{"a", "b", "c"}));
  EXPECT_EQ(plan->gateway->listen_grpc.text(), "0.0.0.0:8001");
  EXPECT_TRUE(plan->advisories.empty());

  // More workers than CPUs: one CPU each, in turn; REACTANT_WORKER_THREADS verbatim.
  in.cpus = {0, 1};
  in.env = {{"REACTANT_WORKER_THREADS", "4"}};
  plan = planNode(node(kCpu3), in);
  ASSERT_TRUE(plan.isOk());
  EXPECT_EQ(plan->workers[2].cpus, std::vector<int>{0});
  EXPECT_EQ(envOf(plan->workers[2], "INFERENCE_SERVER_RUNTIME_CPU_THREADS"), "4");
}

TEST(NodePlanTest, InheritedPortVariablesDoNotGiveWorkersOnePort) {
  // The reference's INFERENCE_SERVER_ENDPOINTS_PORT / _METRICS_PORT in the supervisor's
  // environment belong to one worker: every worker of a multi-worker node keeps its own.
  const Env env = {{"INFERENCE_SERVER_ENDPOINTS_PORT", "8001"},
                   {"INFERENCE_SERVER_ENDPOINTS_METRICS_PORT", "8002"}};
  PlanInputs in;
  in.cpus = {0, 1, 2};
  in.env = env;
  Result<NodePlan> plan = planNode(node(kCpu3, env), in);
  ASSERT_TRUE(plan.isOk()) << plan.status().toString();
  ASSERT_EQ(plan->workers.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const WorkerPlan &w = plan->workers[i];
    EXPECT_EQ(envOf(w, "INFERENCE_SERVER_ENDPOINTS_PORT"), std::to_string(8080 + i));
    EXPECT_EQ(envOf(w, "INFERENCE_SERVER_ENDPOINTS_METRICS_PORT"), std::to_string(9100 + i));
    EXPECT_EQ(w.grpc_endpoint, "127.0.0.1:" + std::to_string(8080 + i));
  }
  ASSERT_TRUE(plan->gateway.has_value());
  EXPECT_EQ(plan->gateway->endpoints,
            (Strings{"127.0.0.1:8080", "127.0.0.1:8081", "127.0.0.1:8082"}));
}

TEST(NodePlanTest, TheGatewayTakesTheWorkersCorsOrigins) {
  const std::string yaml =
      std::string(kCpu3) +
      "global:\n  endpoints: {cors_allowed_origins: [https://app.example.com]}\n";
  PlanInputs in;
  in.cpus = {0, 1, 2};
  Result<NodePlan> plan = planNode(node(yaml), in);
  ASSERT_TRUE(plan.isOk()) << plan.status().toString();
  ASSERT_TRUE(plan->gateway.has_value());
  EXPECT_EQ(plan->gateway->cors_allowed_origins, (Strings{"https://app.example.com"}));
  // The gateway's own variable wins.
  in.env = {{"REACTANT_GATEWAY_HTTP_CORS_ALLOWED_ORIGINS", "http://localhost:3000"}};
  plan = planNode(node(yaml), in);
  ASSERT_TRUE(plan.isOk()) << plan.status().toString();
  EXPECT_EQ(plan->gateway->cors_allowed_origins, (Strings{"http://localhost:3000"}));
}

TEST(NodePlanTest, SoleWorkerBindsThePublicPorts) {
  PlanInputs in;
  in.cpus = {0, 1};
  in.env = {{"REACTANT_GATEWAY_LISTEN_GRPC", "127.0.0.1:7001"},
            {"REACTANT_GATEWAY_LISTEN_HTTP", "127.0.0.1:7000"}};
  Result<NodePlan> plan = planNode(node("model_repo: model_repo\nbase_port: 8080\n"), in);
  ASSERT_TRUE(plan.isOk()) << plan.status().toString();
  EXPECT_FALSE(plan->gateway.has_value());
  ASSERT_EQ(plan->workers.size(), 1u);
  const WorkerPlan &w = plan->workers[0];
  EXPECT_EQ(w.name, "worker0");
  EXPECT_EQ(envOf(w, "INFERENCE_SERVER_ENDPOINTS_PORT"), "7001");
  EXPECT_EQ(envOf(w, "INFERENCE_SERVER_ENDPOINTS_HTTP_PORT"), "7000");
  EXPECT_EQ(envOf(w, "INFERENCE_SERVER_ENDPOINTS_METRICS_PORT"), "8002");
  EXPECT_EQ(w.grpc_endpoint, "127.0.0.1:7001");
  // REACTANT_CPU_WORKERS makes more synthesized workers, and then a gateway.
  in.env["REACTANT_CPU_WORKERS"] = "2";
  plan = planNode(node("model_repo: model_repo\nbase_port: 8080\n"), in);
  ASSERT_TRUE(plan.isOk()) << plan.status().toString();
  ASSERT_EQ(plan->workers.size(), 2u);
  EXPECT_EQ(plan->workers[1].name, "worker1");
  EXPECT_EQ(plan->workers[1].grpc_endpoint, "127.0.0.1:8081");
  ASSERT_TRUE(plan->gateway.has_value());
  EXPECT_EQ(plan->gateway->listen_grpc.text(), "127.0.0.1:7001");
}

TEST(NodePlanTest, GpuWorkersGetOneDeviceEach) {
  constexpr const char *yaml = "model_repo: model_repo\nbase_port: 8080\nglobal:\n"
                               "  runtime: {backend: cuda}\n";
  PlanInputs in;
  in.gpus = {"0", "1"};
  in.cpus = {0, 1, 2, 3};
  Result<NodePlan> plan = planNode(node(yaml), in);
  ASSERT_TRUE(plan.isOk()) << plan.status().toString();
  EXPECT_TRUE(plan->gpu_node);
  ASSERT_EQ(plan->workers.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const WorkerPlan &w = plan->workers[i];
    EXPECT_EQ(w.device, std::to_string(i));
    EXPECT_EQ(envOf(w, "CUDA_VISIBLE_DEVICES"), std::to_string(i));
    EXPECT_EQ(envOf(w, "INFERENCE_SERVER_RUNTIME_DEVICE_ORDINAL"), "0");
    EXPECT_TRUE(w.cpus.empty());
  }
  // Workers listed with gpu: take that device; one GPU stays unused (an advisory); a CPU
  // worker beside them takes none.
  in.gpus = {"GPU-a", "GPU-b", "GPU-c"};
  plan = planNode(node(std::string(yaml) + "workers:\n  - {name: g, gpu: 2}\n"
                                           "  - {name: h}\n"
                                           "  - {name: c, runtime: {backend: cpu}}\n"),
                  in);
  ASSERT_TRUE(plan.isOk()) << plan.status().toString();
  EXPECT_EQ(plan->workers[0].device, "GPU-c");
  EXPECT_EQ(plan->workers[1].device, "GPU-a");
  EXPECT_EQ(plan->workers[2].device, "");
  EXPECT_EQ(plan->workers[2].cpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(plan->advisories, Strings{"1 visible GPU(s) have no worker"});
  // Errors.
  in.gpus = {"0"};
  Result<NodePlan> beyond =
      planNode(node(std::string(yaml) + "workers: [{name: g, gpu: 3}]\n"), in);
  EXPECT_EQ(beyond.status().message(), kPath + ": worker 'g' needs GPU 3 but the node has 1 (0)");
  Result<NodePlan> shared =
      planNode(node(std::string(yaml) + "workers: [{name: g, gpu: 0}, {name: h}]\n"), in);
  EXPECT_EQ(shared.status().message(), kPath + ": worker 'h' and another worker both use GPU '0'");
}

TEST(NodePlanTest, Roles) {
  PlanInputs in;
  in.cpus = {0};
  in.role_flag = config::Role::kWorkers;
  Result<NodePlan> plan = planNode(node(kCpu3), in);
  ASSERT_TRUE(plan.isOk());
  EXPECT_EQ(plan->workers.size(), 3u);
  EXPECT_FALSE(plan->gateway.has_value());
  in.role_flag.reset();
  in.env = {{"REACTANT_ROLE", "gateway"}};
  plan = planNode(node(kCpu3), in);
  ASSERT_TRUE(plan.isOk());
  EXPECT_TRUE(plan->workers.empty());
  ASSERT_TRUE(plan->gateway.has_value());
  EXPECT_EQ(plan->gateway->endpoints.size(), 3u);
  in.env = {{"REACTANT_ROLE", "everything"}};
  EXPECT_EQ(planNode(node(kCpu3), in).status().message(),
            "REACTANT_ROLE: role 'everything' is not one of all, workers, gateway");
  // Worker ports on the gateway's public ports are an advisory.
  in.env = {};
  plan =
      planNode(node("model_repo: model_repo\nbase_port: 8000\nglobal: {endpoints: {http_port: 0}}\n"
                    "workers: [{name: a}, {name: b}, {name: c}]\n"),
               in);
  ASSERT_TRUE(plan.isOk());
  EXPECT_EQ(plan->advisories,
            (Strings{"worker 'a' port 8000 collides with the gateway's listen.http",
                     "worker 'b' port 8001 collides with the gateway's listen.grpc",
                     "worker 'c' port 8002 collides with the gateway's listen.metrics"}));
}

TEST(NodePlanTest, ExamplesLoad) {
  const std::string dir = std::string(RS_SOURCE_DIR) + "/examples/";
  Result<config::NodeConfig> n = config::loadNodeFile(dir + "node_cpu3.yaml", {});
  ASSERT_TRUE(n.isOk()) << n.status().toString();
  PlanInputs in;
  in.cpus = {0, 1, 2, 3, 4, 5};
  Result<NodePlan> plan = planNode(*n, in);
  ASSERT_TRUE(plan.isOk()) << plan.status().toString();
  ASSERT_EQ(plan->workers.size(), 3u);
  EXPECT_EQ(plan->workers[2].name, "cpu2");
  EXPECT_EQ(plan->workers[2].cpus, (std::vector<int>{4, 5}));
  ASSERT_TRUE(plan->gateway.has_value());
  EXPECT_EQ(plan->gateway->endpoints,
            (Strings{"127.0.0.1:8080", "127.0.0.1:8081", "127.0.0.1:8082"}));
  Result<config::GatewayConfig> g = config::loadGatewayConfig(dir + "gateway.yml", {});
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  EXPECT_EQ(g->scheduling.mode, config::SchedulingMode::kLptPacking);
  EXPECT_EQ(g->scheduling.routing_fill_mode, config::FillMode::kSpread);
  EXPECT_EQ(g->worker_names, (Strings{"cpu0", "cpu1", "cpu2"}));
  // The same gateway file given to the node keeps its endpoints.
  in.env = {{"REACTANT_GATEWAY_FILE", dir + "gateway.yml"}};
  plan = planNode(*n, in);
  ASSERT_TRUE(plan.isOk()) << plan.status().toString();
  EXPECT_EQ(plan->gateway->scheduling.mode, config::SchedulingMode::kLptPacking);
}

TEST(OutputPumpTest, PrefixesEveryLineAndKeepsPartialLines) {
  int child[2], out[2];
  ASSERT_EQ(pipe(child), 0);
  ASSERT_EQ(pipe(out), 0);
  {
    OutputPump pump;
    pump.add(child[0], "w1", out[1]);
    const std::string text = "first line\nsecond ";
    ASSERT_EQ(write(child[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
    const std::string more = "half\nlast without newline";
    ASSERT_EQ(write(child[1], more.data(), more.size()), static_cast<ssize_t>(more.size()));
    close(child[1]); // end of file: the partial line goes out
    pump.stop();     // drains what is left
  }
  close(out[1]);
  std::string got;
  char buf[256];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof(buf))) > 0)
    got.append(buf, static_cast<size_t>(n));
  close(out[0]);
  EXPECT_EQ(got, "[w1] first line\n[w1] second half\n[w1] last without newline\n");
}

} // namespace
} // namespace rs::node
