//===- test/config/node_config_test.cc - node file, defaults, merge --------===//
#include "config/node_config.h"

#include "config_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace rs::config {
namespace {

using testing::NodeDir;

TEST(NodeConfig, DefaultsMatchTheReference) {
  NodeDir dir;
  auto w = dir.worker("model_repo: repo\n");
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  EXPECT_EQ(w->worker_name, "worker0");
  EXPECT_EQ(w->worker_index, 0);
  EXPECT_EQ(w->node_file, dir.nodeFile());
  EXPECT_EQ(w->model_dirs, (std::vector<std::string>{dir.repo()}));
  EXPECT_EQ(w->cache_dir, "");
  EXPECT_EQ(w->model_control_mode, ModelControlMode::kDynamic);
  EXPECT_EQ(w->model_poll_seconds, 15.0);
  EXPECT_TRUE(w->models_include.empty());

  const RuntimeConfig &r = w->runtime;
  EXPECT_EQ(r.backend, Backend::kCpu);
  EXPECT_EQ(r.device_ordinal, 0);
  EXPECT_EQ(r.mem_fraction, 0.9);
  EXPECT_TRUE(r.preallocate);
  EXPECT_EQ(r.event_spin_us, 20000);
  EXPECT_TRUE(r.allow_cpu_fallback);
  EXPECT_EQ(r.weight_cache_fraction, 1.0);
  EXPECT_EQ(r.weight_cache_wiggle_fraction, 0.1);
  EXPECT_TRUE(r.autotune);
  EXPECT_FALSE(r.autotune_cache.has_value());
  EXPECT_EQ(r.autotune_cache_dir, "");
  EXPECT_EQ(r.numerics, Numerics::kAuto);
  EXPECT_FALSE(r.shared_host_weights);
  EXPECT_EQ(r.shared_host_weights_mode, "666");
  EXPECT_EQ(r.profile, Profile::kNone);
  EXPECT_EQ(r.batch_sizes, BatchSizes::kAll);
  EXPECT_TRUE(r.xla_flags.empty());
  EXPECT_TRUE(r.executable_cache);
  EXPECT_EQ(r.pjrt_plugin, "");
  EXPECT_EQ(r.cpu_threads, 0);

  const SchedulerConfig &s = w->scheduler;
  EXPECT_EQ(s.discipline, Discipline::kFair);
  EXPECT_EQ(s.ema_halflife_seconds, 30.0);
  EXPECT_EQ(s.recency_penalty_cap, 0.25);
  EXPECT_EQ(s.coalescing_discount, 0.1);
  EXPECT_EQ(s.cost_ema_alpha, 0.2);
  EXPECT_EQ(s.max_queue_depth, 1024);
  EXPECT_EQ(s.max_queue_delay_microseconds, 0);
  EXPECT_EQ(s.compaction_interval, 0);
  EXPECT_EQ(s.dispatch_timeout_seconds, 30.0);
  EXPECT_TRUE(s.coalescing);
  EXPECT_TRUE(s.models.empty());

  EXPECT_EQ(w->endpoints.host, "127.0.0.1");
  EXPECT_EQ(w->endpoints.port, 8080);
  EXPECT_EQ(w->endpoints.metrics_port, 0);
  EXPECT_EQ(w->endpoints.max_concurrent_requests, 64);
  EXPECT_EQ(w->endpoints.max_request_bytes, 64 << 20);
  EXPECT_EQ(w->endpoints.http_port, 8000);
  EXPECT_EQ(w->grpc.max_recv_msg_bytes, 536870912);
  EXPECT_EQ(w->grpc.max_send_msg_bytes, 536870912);
  EXPECT_EQ(w->grpc.polling_threads, 4);
  EXPECT_EQ(w->grpc.busy_poll_us, 0); // runtime.backend cpu

  EXPECT_TRUE(w->env_overrides.empty());
  EXPECT_TRUE(w->env_keys.empty());
  EXPECT_TRUE(w->profile_keys.empty());
}

TEST(NodeConfig, ExampleNodeFileLoads) {
  const std::string path = std::string(RS_SOURCE_DIR) + "/examples/node.yaml";
  auto node = loadNodeFile(path, {});
  ASSERT_TRUE(node.isOk()) << node.status().toString();
  EXPECT_EQ(node->model_repo, std::string(RS_SOURCE_DIR) + "/examples/model_repo");
  EXPECT_EQ(node->base_port, 8001);
  EXPECT_EQ(node->metrics_base_port, 8002);
  EXPECT_EQ(listedWorkerCount(*node), 0u);
  auto w = resolveWorker(*node, 0);
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  EXPECT_EQ(w->endpoints.host, "0.0.0.0");
  EXPECT_EQ(w->endpoints.port, 8001);
  EXPECT_EQ(w->endpoints.metrics_port, 8002);
  EXPECT_EQ(w->endpoints.http_port, 8000);
  EXPECT_EQ(w->runtime.backend, Backend::kCpu);
}

TEST(NodeConfig, MissingFileIsNotFound) {
  auto node = loadNodeFile("/nonexistent/node.yaml", {});
  ASSERT_FALSE(node.isOk());
  EXPECT_EQ(node.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(node.status().message(),
            "/nonexistent/node.yaml: cannot open: No such file or directory");
}

TEST(NodeConfig, LoadsFromDiskAndResolvesRelativeRepo) {
  NodeDir dir;
  std::filesystem::create_directories(dir.path() + "/sub/models");
  {
    std::ofstream out(dir.path() + "/sub/node.yaml");
    out << "model_repo: ./models/../models\n";
  }
  auto node = loadNodeFile(dir.path() + "/sub/node.yaml", {});
  ASSERT_TRUE(node.isOk()) << node.status().toString();
  EXPECT_EQ(node->model_repo, dir.path() + "/sub/models");
  auto absolute = dir.parse("model_repo: " + dir.repo() + "\n");
  ASSERT_TRUE(absolute.isOk()) << absolute.status().toString();
  EXPECT_EQ(absolute->model_repo, dir.repo());
}

constexpr const char *kTwoWorkers = R"(model_repo: repo
base_port: 9001
metrics_base_port: 9101
shared_host_weights: true
gpus: [0, GPU-abc]
role: workers
global:
  model_control_mode: static
  runtime: {numerics: f32, mem_fraction: 0.5, backend: cuda}
  scheduler:
    discipline: fifo
    models:
      bert: {weight: 2.5}
      resnet.v2: {residency: system}
  endpoints: {host: 0.0.0.0}
gateway: {anything: goes}
workers:
  - {name: gpu0, gpu: 0, host: 10.0.0.5}
  - name: gpu1
    gpu: 1
    port: 9500
    runtime: {numerics: auto, shared_host_weights: false}
    scheduler: {models: {bert: {max_batch_size: 4}}}
models:
  bert: [gpu1]
  resnet.v2: [gpu0, gpu1]
)";

TEST(NodeConfig, WorkersDeepMergeOverGlobal) {
  NodeDir dir;
  auto node = dir.parse(kTwoWorkers);
  ASSERT_TRUE(node.isOk()) << node.status().toString();
  EXPECT_EQ(listedWorkerCount(*node), 2u);
  EXPECT_EQ(node->role, Role::kWorkers);
  EXPECT_EQ(node->gpus.kind, GpuSelection::Kind::kList);
  EXPECT_EQ(node->gpus.devices, (std::vector<std::string>{"0", "GPU-abc"}));

  auto w0 = resolveWorker(*node, 0);
  ASSERT_TRUE(w0.isOk()) << w0.status().toString();
  EXPECT_EQ(w0->worker_name, "gpu0");
  EXPECT_EQ(w0->node_host, "10.0.0.5");
  EXPECT_EQ(w0->gpu, 0);
  EXPECT_EQ(w0->runtime.device_ordinal, 0);
  EXPECT_EQ(w0->runtime.numerics, Numerics::kF32);
  EXPECT_EQ(w0->runtime.mem_fraction, 0.5);
  EXPECT_TRUE(w0->runtime.shared_host_weights); // node-level flag
  EXPECT_EQ(w0->model_control_mode, ModelControlMode::kStatic);
  EXPECT_EQ(w0->endpoints.port, 9001);
  EXPECT_EQ(w0->endpoints.metrics_port, 9101);
  EXPECT_EQ(w0->endpoints.host, "0.0.0.0");
  EXPECT_EQ(w0->scheduler.discipline, Discipline::kFifo);
  ASSERT_EQ(w0->scheduler.models.size(), 2u);
  EXPECT_EQ(w0->scheduler.models.at("bert").weight, 2.5);
  EXPECT_FALSE(w0->scheduler.models.at("bert").residency.has_value());
  EXPECT_FALSE(w0->scheduler.models.at("bert").max_batch_size.has_value());
  // An explicit residency wins over the models map.
  EXPECT_EQ(w0->scheduler.models.at("resnet.v2").residency, Residency::kPinnedSystem);

  auto w1 = resolveWorker(*node, 1);
  ASSERT_TRUE(w1.isOk()) << w1.status().toString();
  EXPECT_EQ(w1->worker_name, "gpu1");
  EXPECT_EQ(w1->node_host, "");
  EXPECT_EQ(w1->runtime.device_ordinal, 1);
  EXPECT_EQ(w1->runtime.numerics, Numerics::kAuto); // override
  EXPECT_EQ(w1->runtime.mem_fraction, 0.5);         // merged from global
  EXPECT_EQ(w1->runtime.backend, Backend::kCuda);
  EXPECT_FALSE(w1->runtime.shared_host_weights); // the worker's own setting wins
  EXPECT_EQ(w1->endpoints.port, 9500);           // worker port beats base_port + 1
  EXPECT_EQ(w1->endpoints.metrics_port, 9102);
  const ModelSchedulerConfig &bert = w1->scheduler.models.at("bert");
  EXPECT_EQ(bert.weight, 2.5);
  EXPECT_EQ(bert.max_batch_size, 4);
  EXPECT_EQ(bert.residency, Residency::kPinnedDevice); // from models: {bert: [gpu1]}
}

TEST(NodeConfig, FindWorkerAndSynthesizedNames) {
  NodeDir dir;
  auto node = dir.parse(kTwoWorkers);
  ASSERT_TRUE(node.isOk());
  EXPECT_EQ(*findWorker(*node, "gpu1"), 1);
  auto missing = findWorker(*node, "gpu7");
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "worker 'gpu7' is not defined (have: gpu0, gpu1)");
  auto out_of_range = resolveWorker(*node, 2);
  ASSERT_FALSE(out_of_range.isOk());
  EXPECT_EQ(out_of_range.status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(out_of_range.status().message(),
            dir.nodeFile() + ": worker index 2 is out of range: the node file lists 2 workers");

  auto bare = dir.parse("model_repo: repo\nbase_port: 7000\nglobal: {endpoints: {http_port: 0}}\n");
  ASSERT_TRUE(bare.isOk()) << bare.status().toString();
  EXPECT_EQ(*findWorker(*bare, "worker3"), 3);
  EXPECT_FALSE(findWorker(*bare, "worker03").isOk());
  EXPECT_FALSE(findWorker(*bare, "gpu0").isOk());
  auto w3 = resolveWorker(*bare, 3);
  ASSERT_TRUE(w3.isOk()) << w3.status().toString();
  EXPECT_EQ(w3->worker_name, "worker3");
  EXPECT_EQ(w3->endpoints.port, 7003);
  EXPECT_EQ(w3->endpoints.http_port, 0);
  EXPECT_EQ(bare->gpus.kind, GpuSelection::Kind::kAuto);
  EXPECT_FALSE(bare->role.has_value());
}

TEST(NodeConfig, GpusForms) {
  NodeDir dir;
  auto count = dir.parse("model_repo: repo\ngpus: 4\n");
  ASSERT_TRUE(count.isOk());
  EXPECT_EQ(count->gpus.kind, GpuSelection::Kind::kCount);
  EXPECT_EQ(count->gpus.count, 4);
  auto automatic = dir.parse("model_repo: repo\ngpus: AUTO\n");
  ASSERT_TRUE(automatic.isOk());
  EXPECT_EQ(automatic->gpus.kind, GpuSelection::Kind::kAuto);
  EXPECT_EQ(dir.error("model_repo: repo\ngpus: -1\n"),
            "node.yaml:2:1: gpus: count -1 must be >= 0");
  EXPECT_EQ(dir.error("model_repo: repo\ngpus: []\n"),
            "node.yaml:2:1: gpus: the device list must not be empty");
}

TEST(NodeConfig, StructuralErrors) {
  NodeDir dir;
  EXPECT_EQ(dir.error("base_port: 1\n"), "node.yaml:1:1: missing required key 'model_repo'");
  EXPECT_EQ(dir.error("model_repo: ''\n"), "node.yaml:1:1: model_repo: must not be empty");
  EXPECT_EQ(dir.error("- a\n"), "node.yaml:1:1: expected a map at the top level, got a list");
  EXPECT_EQ(dir.error("model_repo: repo\nglobal: {runtime: [1\n")
                .rfind("node.yaml:3:1: invalid yaml: ", 0),
            0u);
  EXPECT_EQ(dir.error("model_repo: repo\nworkers: []\n"),
            "node.yaml:2:1: workers: must list at least one worker");
  EXPECT_EQ(dir.error("model_repo: repo\nworkers: [{gpu: 0}]\n"),
            "node.yaml:2:11: workers[0]: missing required key 'name'");
  EXPECT_EQ(dir.error("model_repo: repo\nbase_port: 9000\nworkers: [{name: a}, {name: a}]\n"),
            "node.yaml:3:23: workers[1].name: duplicate worker name 'a'");
  EXPECT_EQ(dir.error("model_repo: repo\nbase_port: 9000\nworkers: [{name: a, gpu: x}]\n"),
            "node.yaml:3:21: workers[0].gpu: expected an integer, got 'x'");
  EXPECT_EQ(dir.error("model_repo: repo\nbase_port: 9000\nworkers: [{name: a, port: 0}]\n"),
            "node.yaml:3:21: workers[0].port: 0 is out of range [1, 65535]");
  EXPECT_EQ(dir.error("model_repo: repo\nbase_port: 9000\n"
                      "workers: [{name: a}, {name: b, port: 9000}]\n"),
            "node.yaml:3:23: worker 'b' port 9000 collides with worker 'a'");
  EXPECT_EQ(dir.error("model_repo: repo\nbase_port: 9000\nmetrics_base_port: 9001\n"
                      "workers: [{name: a}, {name: b}]\nglobal: {endpoints: {http_port: 0}}\n"),
            "node.yaml:4:23: worker 'b' port 9001 collides with worker 'a' (metrics)");
  EXPECT_EQ(dir.error("model_repo: repo\nbase_port: 9000\nworkers: [{name: a}]\n"
                      "models: {bert: [a, b]}\n"),
            "node.yaml:4:20: models.bert[1]: worker 'b' is not defined (have: a)");
  EXPECT_EQ(dir.error("model_repo: repo\nbase_port: 9000\nworkers: [{name: a}]\n"
                      "models: {bert: []}\n"),
            "node.yaml:4:10: models.bert: assigns the model to no workers");
  EXPECT_EQ(dir.error("model_repo: repo\nrole: boss\n"),
            "node.yaml:2:1: role: 'boss' is not one of all, workers, gateway");
  EXPECT_EQ(
      dir.error("model_repo: repo\nshared_host_weights: sometimes\n"),
      "node.yaml:2:1: shared_host_weights: expected a boolean (true or false), got 'sometimes'");
  EXPECT_EQ(dir.error("model_repo: missing_repo\n"),
            "node.yaml:1:1: model_repo: model_dirs 'missing_repo' is not a directory");
  EXPECT_EQ(dir.error("model_repo: repo\nbase_port: 65535\nworkers: [{name: a}, {name: b}]\n"),
            "node.yaml:2:1: base_port: endpoints.port 65536 is out of range [1, 65535]");
}

TEST(NodeConfig, CorsAllowedOriginsAreOriginsOrStar) {
  NodeDir dir;
  auto off = dir.worker("model_repo: repo\n");
  ASSERT_TRUE(off.isOk()) << off.status().toString();
  EXPECT_TRUE(off->endpoints.cors_allowed_origins.empty());
  auto on =
      dir.worker("model_repo: repo\nglobal:\n  endpoints:\n"
                 "    cors_allowed_origins: [https://app.example.com, 'http://[::1]:3000', '*']\n");
  ASSERT_TRUE(on.isOk()) << on.status().toString();
  EXPECT_EQ(on->endpoints.cors_allowed_origins,
            (std::vector<std::string>{"https://app.example.com", "http://[::1]:3000", "*"}));
  // The variable separates origins with ',' (they hold ':').
  auto env = dir.worker("model_repo: repo\n", {{"INFERENCE_SERVER_ENDPOINTS_CORS_ALLOWED_ORIGINS",
                                                "https://a.example:8443,http://localhost:3000"}});
  ASSERT_TRUE(env.isOk()) << env.status().toString();
  EXPECT_EQ(env->endpoints.cors_allowed_origins,
            (std::vector<std::string>{"https://a.example:8443", "http://localhost:3000"}));
  for (const char *bad : {"app.example.com", "https://app.example.com/", "https://", "://x",
                          "https://a.example, https://b.example"}) {
    auto w = dir.worker("model_repo: repo\nglobal:\n  endpoints:\n    cors_allowed_origins: ['" +
                        std::string(bad) + "']\n");
    ASSERT_FALSE(w.isOk()) << bad;
    EXPECT_NE(w.status().message().find("endpoints.cors_allowed_origins: '" + std::string(bad) +
                                        "' is not an origin (scheme://host[:port], e.g. "
                                        "https://app.example.com) or *"),
              std::string::npos)
        << w.status().message();
  }
}

TEST(NodeConfig, BusyPollDefaultsByBackend) {
  NodeDir dir;
  auto gpu = dir.worker("model_repo: repo\nglobal:\n  runtime: {backend: cuda}\n");
  ASSERT_TRUE(gpu.isOk()) << gpu.status().toString();
  EXPECT_EQ(gpu->grpc.busy_poll_us, 20000);
  auto set = dir.worker(
      "model_repo: repo\nglobal:\n  runtime: {backend: cuda}\n  grpc: {busy_poll_us: 0}\n");
  ASSERT_TRUE(set.isOk()) << set.status().toString();
  EXPECT_EQ(set->grpc.busy_poll_us, 0);
  auto cpu = dir.worker("model_repo: repo\nglobal:\n  grpc: {busy_poll_us: 500}\n");
  ASSERT_TRUE(cpu.isOk()) << cpu.status().toString();
  EXPECT_EQ(cpu->grpc.busy_poll_us, 500);
}

TEST(NodeConfig, EffectiveSettingsListEveryKeySorted) {
  NodeDir dir;
  auto w = dir.worker(
      "model_repo: repo\nglobal:\n  runtime: {xla_flags: {xla_gpu_autotune_level: 1, "
      "xla_dump_hlo_as_text: true}, autotune_cache: false}\n  scheduler: {models: {bert: {weight: "
      "0.5, max_batch_size: 8}}}\n");
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  auto settings = effectiveSettings(*w);
  std::vector<std::string> keys;
  for (const auto &[k, v] : settings)
    keys.push_back(k);
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  const std::vector<std::string> expected_keys = {
      "cache_dir",
      "endpoints.cors_allowed_origins",
      "endpoints.host",
      "endpoints.http_port",
      "endpoints.max_concurrent_requests",
      "endpoints.max_request_bytes",
      "endpoints.metrics_port",
      "endpoints.port",
      "endpoints.shared_memory",
      "endpoints.shared_memory_allowed_uids",
      "endpoints.shared_memory_prefix",
      "grpc.busy_poll_us",
      "grpc.max_recv_msg_bytes",
      "grpc.max_send_msg_bytes",
      "grpc.polling_threads",
      "hooks.allowed_packages",
      "hooks.max_memory_mb",
      "hooks.meta_concurrency",
      "hooks.processes_per_model",
      "hooks.python",
      "hooks.python_path",
      "hooks.timeout_ms",
      "model_control_mode",
      "model_dirs",
      "model_poll_seconds",
      "models_include",
      "runtime.allow_cpu_fallback",
      "runtime.autotune",
      "runtime.autotune_cache",
      "runtime.autotune_cache_dir",
      "runtime.backend",
      "runtime.batch_sizes",
      "runtime.completion_polling",
      "runtime.cpu_threads",
      "runtime.device_ordinal",
      "runtime.event_spin_us",
      "runtime.executable_cache",
      "runtime.executable_cache_key_file",
      "runtime.mem_fraction",
      "runtime.numerics",
      "runtime.pjrt_plugin",
      "runtime.preallocate",
      "runtime.profile",
      "runtime.shared_host_weights",
      "runtime.shared_host_weights_mode",
      "runtime.weight_cache_fraction",
      "runtime.weight_cache_wiggle_fraction",
      "runtime.xla_flags",
      "scheduler.coalescing",
      "scheduler.coalescing_discount",
      "scheduler.compaction_interval",
      "scheduler.cost_ema_alpha",
      "scheduler.discipline",
      "scheduler.dispatch_timeout_seconds",
      "scheduler.ema_halflife_seconds",
      "scheduler.max_batches_in_flight",
      "scheduler.max_queue_delay_microseconds",
      "scheduler.max_queue_depth",
      "scheduler.models.bert.max_batch_size",
      "scheduler.models.bert.residency",
      "scheduler.models.bert.weight",
      "scheduler.recency_penalty_cap",
      "tls.cert_file",
      "tls.client_ca_file",
      "tls.key_file",
  };
  EXPECT_EQ(keys, expected_keys);
  std::map<std::string, std::string> m(settings.begin(), settings.end());
  EXPECT_EQ(m["runtime.xla_flags"], "{xla_dump_hlo_as_text: true, xla_gpu_autotune_level: 1}");
  EXPECT_EQ(m["runtime.autotune_cache"], "false");
  EXPECT_EQ(m["runtime.mem_fraction"], "0.9");
  EXPECT_EQ(m["grpc.busy_poll_us"], "0");
  EXPECT_EQ(m["scheduler.ema_halflife_seconds"], "30");
  EXPECT_EQ(m["scheduler.models.bert.weight"], "0.5");
  EXPECT_EQ(m["scheduler.models.bert.residency"], "unset");
  EXPECT_EQ(m["scheduler.models.bert.max_batch_size"], "8");
  EXPECT_EQ(m["model_dirs"], "[" + dir.repo() + "]");
  EXPECT_EQ(m["models_include"], "[]");
  EXPECT_EQ(m["runtime.numerics"], "auto");
  EXPECT_EQ(m["endpoints.port"], "8080");
  EXPECT_EQ(m["runtime.profile"], "none");
}

} // namespace
} // namespace rs::config
