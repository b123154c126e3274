//===- test/config/reference_node_file_test.cc - Reference node files load --===//
//
// Node files written for the reference implementation (the keys and values of its
// config/node.yaml and config/node.default.yaml) load unchanged: no unknown key, values in
// range, workers resolved with the reference's port rules. Only model_repo points at a
// folder that exists here (the reference's /var/lib/reactantserver/models does not).
//
//===----------------------------------------------------------------------===//
#include "config/node_config.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace rs::config {
namespace {

std::string repoDir() {
  auto dir = std::filesystem::temp_directory_path() / "rs_reference_node_repo";
  std::filesystem::create_directories(dir);
  return dir.string();
}

/// The reference's config/node.yaml: two workers on base_port 8080, metrics 9100.
std::string twoWorkerTemplate() {
  return "model_repo: " + repoDir() + R"(
base_port: 8080
metrics_base_port: 9100
global:
  cache_dir: /var/cache/reactantserver
  runtime:
    backend: cuda
    mem_fraction: 0.9
    preallocate: true
    allow_cpu_fallback: false
  scheduler:
    ema_halflife_seconds: 30.0
    max_queue_depth: 1024
  endpoints:
    host: 0.0.0.0
workers:
  - { name: worker0 }
  - { name: worker1 }
)";
}

TEST(ReferenceNodeFile, TemplateWithTwoWorkersLoads) {
  const std::string yaml = twoWorkerTemplate();
  auto node = parseNodeFile(yaml, "node.yaml", {});
  ASSERT_TRUE(node.isOk()) << node.status().toString();
  auto w1 = resolveWorker(*node, 1);
  ASSERT_TRUE(w1.isOk()) << w1.status().toString();
  EXPECT_EQ(w1->worker_name, "worker1");
  EXPECT_EQ(w1->endpoints.port, 8081);
  EXPECT_EQ(w1->endpoints.metrics_port, 9101);
  EXPECT_EQ(w1->runtime.backend, Backend::kCuda);
  EXPECT_FALSE(w1->runtime.allow_cpu_fallback);
  EXPECT_EQ(w1->cache_dir, "/var/cache/reactantserver");
}

TEST(ReferenceNodeFile, EndpointsPortVariableWithTwoWorkersLoads) {
  // The reference's single-worker container sets INFERENCE_SERVER_ENDPOINTS_PORT; with its
  // two-worker node file the variable is the one served worker's, not a collision.
  const std::string yaml = twoWorkerTemplate();
  auto node = parseNodeFile(yaml, "node.yaml",
                            {{"INFERENCE_SERVER_ENDPOINTS_PORT", "8001"},
                             {"INFERENCE_SERVER_ENDPOINTS_METRICS_PORT", "8002"}});
  ASSERT_TRUE(node.isOk()) << node.status().toString();
  auto w1 = resolveWorker(*node, 1);
  ASSERT_TRUE(w1.isOk()) << w1.status().toString();
  EXPECT_EQ(w1->endpoints.port, 8001);
  EXPECT_EQ(w1->endpoints.metrics_port, 8002);
  // The ports the file itself gives still must not collide.
  auto clash = parseNodeFile("model_repo: " + repoDir() + R"(
workers:
  - { name: worker0, port: 9000 }
  - { name: worker1, port: 9000 }
)",
                             "node.yaml", {{"INFERENCE_SERVER_ENDPOINTS_PORT", "8001"}});
  ASSERT_FALSE(clash.isOk());
  EXPECT_EQ(clash.status().message(), "node.yaml:4:7: worker 'worker1' port 9000 collides with "
                                      "worker 'worker0'");
}

TEST(ReferenceNodeFile, ZeroConfigDefaultLoads) {
  const std::string yaml = "model_repo: " + repoDir() + R"(
base_port: 8080
metrics_base_port: 9100
gpus: auto
global:
  cache_dir: /var/cache/reactantserver
  runtime:
    backend: cuda
    mem_fraction: 0.9
    preallocate: true
    allow_cpu_fallback: false
    weight_cache_fraction: 1.0
    weight_cache_wiggle_fraction: 0.1
  scheduler:
    ema_halflife_seconds: 30.0
    max_queue_depth: 1024
    compaction_interval: 0
  endpoints:
    host: 0.0.0.0
)";
  auto node = parseNodeFile(yaml, "node.default.yaml", {});
  ASSERT_TRUE(node.isOk()) << node.status().toString();
  EXPECT_EQ(node->gpus.kind, GpuSelection::Kind::kAuto);
  auto w0 = resolveWorker(*node, 0);
  ASSERT_TRUE(w0.isOk()) << w0.status().toString();
  EXPECT_EQ(w0->endpoints.port, 8080);
  EXPECT_EQ(w0->endpoints.metrics_port, 9100);
  EXPECT_DOUBLE_EQ(w0->runtime.weight_cache_wiggle_fraction, 0.1);
}

} // namespace
} // namespace rs::config
