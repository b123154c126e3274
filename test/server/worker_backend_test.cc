// Worker bring-up of `runtime.backend: cuda` where no GPU backend can start (CI has no
// plugin): allow_cpu_fallback decides between the CPU backend and a failed start; and
// the models' weights are placed once and reused by every run (LoadedModel::run).
#include "config/node_config.h"
#include "server/worker.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace rs::server {
namespace {

const std::string kBundles = std::string(RS_SHARED_DIR) + "/fixtures/bundles";
constexpr const char *kMissingPlugin = "/nonexistent/jax_plugins/xla_cuda13/xla_cuda_plugin.so";

config::WorkerConfig cudaConfig(bool allow_cpu_fallback, const std::string &backend = "cuda") {
  const std::string yaml =
      "model_repo: \"" + kBundles +
      "\"\nbase_port: 18101\nglobal:\n"
      "  model_control_mode: static\n"
      "  models_include: [iris_mlp]\n"
      "  endpoints: {host: 127.0.0.1, http_port: 0}\n"
      "  runtime:\n"
      "    backend: " +
      backend + "\n    pjrt_plugin: \"" + kMissingPlugin +
      "\"\n    allow_cpu_fallback: " + (allow_cpu_fallback ? "true" : "false") +
      "\n    executable_cache: false\n";
  auto node = config::parseNodeFile(yaml, "<worker_backend_test>", {});
  EXPECT_TRUE(node.isOk()) << node.status().toString();
  auto cfg = config::resolveWorker(*node, 0);
  EXPECT_TRUE(cfg.isOk()) << cfg.status().toString();
  return *cfg;
}

TEST(WorkerBackendTest, FailedCudaInitFailsStartWithoutFallback) {
  for (const char *backend : {"cuda", "gpu"}) {
    Worker worker(WorkerOptions{.config = cudaConfig(false, backend), .ephemeral_ports = true});
    Status s = worker.start();
    ASSERT_FALSE(s.isOk()) << backend;
    EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.toString();
    EXPECT_NE(s.message().find(kMissingPlugin), std::string::npos) << s.toString();
    EXPECT_NE(s.message().find("allow_cpu_fallback: false"), std::string::npos) << s.toString();
  }
}

TEST(WorkerBackendTest, FailedCudaInitFallsBackToCpu) {
  Worker worker(WorkerOptions{.config = cudaConfig(true), .ephemeral_ports = true});
  ASSERT_TRUE(worker.start().isOk());
  EXPECT_EQ(worker.repository().backend().deviceInfo().platform, "cpu");
  EXPECT_NE(worker.evidenceJson().find("not applicable"), std::string::npos);
  worker.shutdown();
}

TEST(WorkerBackendTest, RunUsesTheWeightsPlacedAtLoad) {
  Worker worker(WorkerOptions{.config = cudaConfig(true), .ephemeral_ports = true});
  ASSERT_TRUE(worker.start().isOk());
  auto state = worker.repository().state("iris_mlp");
  ASSERT_TRUE(state && state->model) << (state ? state->status.toString() : "unknown model");
  const runtime::LoadedModel &m = *state->model;
  ASSERT_NE(m.resident_weights, nullptr);
  EXPECT_EQ(m.resident_weights->size(), m.weights.size());
  ASSERT_FALSE(m.batch_sizes.empty());
  const int64_t batch = m.batch_sizes.front();
  // iris_mlp: f32[N, 4] -> f32[N, 3].
  Tensor x = Tensor::zeros(DType::kF32, {batch, 4});
  float *xs = x.mutableDataAs<float>();
  for (int64_t i = 0; i < batch * 4; ++i)
    xs[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  auto resident = m.run(batch, {x});
  ASSERT_TRUE(resident.isOk()) << resident.status().toString();
  std::vector<Tensor> args{x};
  args.insert(args.end(), m.weights.begin(), m.weights.end());
  auto plain = m.programs.at({0, batch})->execute(args);
  ASSERT_TRUE(plain.isOk()) << plain.status().toString();
  ASSERT_EQ(resident->size(), plain->size());
  for (size_t i = 0; i < plain->size(); ++i) {
    ASSERT_EQ((*resident)[i].byteSize(), (*plain)[i].byteSize());
    EXPECT_EQ(std::memcmp((*resident)[i].data(), (*plain)[i].data(),
                          static_cast<size_t>((*plain)[i].byteSize())),
              0);
  }
  worker.shutdown();
}

} // namespace
} // namespace rs::server
