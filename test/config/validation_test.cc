//===- test/config/validation_test.cc - ranges, unknown and removed keys ---===//
#include "config/node_config.h"

#include "config_test_util.h"

#include <gtest/gtest.h>

namespace rs::config {
namespace {

using testing::NodeDir;

struct Case {
  std::string global; // YAML flow map placed under `global:`
  std::string message;
};

void expectGlobalErrors(const std::vector<Case> &cases) {
  NodeDir dir;
  for (const Case &c : cases) {
    SCOPED_TRACE(c.global);
    EXPECT_EQ(dir.error("model_repo: repo\nglobal: " + c.global + "\n"), c.message);
  }
}

TEST(Validation, RangesOfEveryValue) {
  expectGlobalErrors({
      {"{model_poll_seconds: -1}", "node.yaml:2:10: global.model_poll_seconds: -1 must be >= 0"},
      {"{model_poll_seconds: 0}",
       "node.yaml:2:10: global.model_poll_seconds: must be > 0 with model_control_mode dynamic"},
      {"{model_control_mode: sometimes}",
       "node.yaml:2:10: global.model_control_mode: 'sometimes' is not one of static, dynamic, "
       "explicit"},
      {"{runtime: {backend: tpu}}",
       "node.yaml:2:20: global.runtime.backend: 'tpu' is not one of cpu, cuda, gpu"},
      {"{runtime: {device_ordinal: -1}}",
       "node.yaml:2:20: global.runtime.device_ordinal: -1 is out of range [0, 1048576]"},
      {"{runtime: {mem_fraction: 0}}",
       "node.yaml:2:20: global.runtime.mem_fraction: 0 is out of range (0, 1]"},
      {"{runtime: {mem_fraction: 1.5}}",
       "node.yaml:2:20: global.runtime.mem_fraction: 1.5 is out of range (0, 1]"},
      {"{runtime: {weight_cache_fraction: 1.1}}",
       "node.yaml:2:20: global.runtime.weight_cache_fraction: 1.1 is out of range [0, 1]"},
      {"{runtime: {weight_cache_wiggle_fraction: 1}}",
       "node.yaml:2:20: global.runtime.weight_cache_wiggle_fraction: 1 is out of range [0, 1)"},
      {"{runtime: {preallocate: maybe}}", "node.yaml:2:20: global.runtime.preallocate: expected a "
                                          "boolean (true or false), got 'maybe'"},
      {"{runtime: {autotune_cache: 2}}", "node.yaml:2:20: global.runtime.autotune_cache: expected "
                                         "a boolean (true or false), got '2'"},
      {"{runtime: {numerics: fp32}}",
       "node.yaml:2:20: global.runtime.numerics: 'fp32' is not one of f32, auto, tf32"},
      {"{runtime: {numerics: tf32}}",
       "node.yaml:2:20: global.runtime.numerics: tf32 needs runtime.backend cuda (the cpu backend "
       "computes f32 exactly)"},
      {"{runtime: {shared_host_weights_mode: '999'}}",
       "node.yaml:2:20: global.runtime.shared_host_weights_mode: '999' is not an octal permission "
       "string like \"660\" (at most 777)"},
      {"{runtime: {shared_host_weights_mode: '1777'}}",
       "node.yaml:2:20: global.runtime.shared_host_weights_mode: '1777' is not an octal permission "
       "string like \"660\" (at most 777)"},
      {"{runtime: {profile: strict}}",
       "node.yaml:2:20: global.runtime.profile: 'strict' is not one of none, regulated"},
      {"{runtime: {batch_sizes: smallest}}",
       "node.yaml:2:20: global.runtime.batch_sizes: 'smallest' is not one of all, largest"},
      {"{runtime: {xla_flags: [a]}}", "node.yaml:2:20: global.runtime.xla_flags: expected a map of "
                                      "XLA option name to value, got a "
                                      "list"},
      {"{runtime: {xla_flags: {--xla_a: 1}}}",
       "node.yaml:2:32: global.runtime.xla_flags.--xla_a: flag name '--xla_a' must be letters, "
       "digits and '_' (no leading --)"},
      {"{runtime: {xla_flags: {xla_a: {b: 1}}}}",
       "node.yaml:2:32: global.runtime.xla_flags.xla_a: expected a value (true, false, a number or "
       "text), got a map"},
      {"{runtime: {cpu_threads: -1}}",
       "node.yaml:2:20: global.runtime.cpu_threads: -1 is out of range [0, 4096]"},
      {"{runtime: {cpu_threads: 5000}}",
       "node.yaml:2:20: global.runtime.cpu_threads: 5000 is out of range [0, 4096]"},
      {"{grpc: {polling_threads: 0}}",
       "node.yaml:2:17: global.grpc.polling_threads: 0 is out of range [1, 256]"},
      {"{grpc: {busy_poll_us: 1000001}}",
       "node.yaml:2:17: global.grpc.busy_poll_us: 1000001 is out of range [0, 1000000]"},
      {"{runtime: {event_spin_us: -1}}",
       "node.yaml:2:20: global.runtime.event_spin_us: -1 is out of range [0, 1000000]"},
      {"{runtime: {event_spin_us: 1000001}}",
       "node.yaml:2:20: global.runtime.event_spin_us: 1000001 is out of range [0, 1000000]"},
      {"{runtime: {executable_cache: [1]}}",
       "node.yaml:2:20: global.runtime.executable_cache: expected a single value, got a list"},
      {"{scheduler: {discipline: lifo}}",
       "node.yaml:2:22: global.scheduler.discipline: 'lifo' is not one of fair, fifo, edf"},
      {"{scheduler: {ema_halflife_seconds: 0}}",
       "node.yaml:2:22: global.scheduler.ema_halflife_seconds: 0 must be > 0"},
      {"{scheduler: {recency_penalty_cap: 0}}",
       "node.yaml:2:22: global.scheduler.recency_penalty_cap: 0 is out of range (0, 1]"},
      {"{scheduler: {coalescing_discount: 1}}",
       "node.yaml:2:22: global.scheduler.coalescing_discount: 1 is out of range [0, 1)"},
      {"{scheduler: {cost_ema_alpha: 0}}",
       "node.yaml:2:22: global.scheduler.cost_ema_alpha: 0 is out of range (0, 1]"},
      {"{scheduler: {max_queue_depth: 0}}",
       "node.yaml:2:22: global.scheduler.max_queue_depth: 0 must be >= 1"},
      {"{scheduler: {max_queue_delay_microseconds: -1}}",
       "node.yaml:2:22: global.scheduler.max_queue_delay_microseconds: -1 is out of range [0, "
       "60000000]"},
      {"{scheduler: {max_queue_delay_microseconds: 60000001}}",
       "node.yaml:2:22: global.scheduler.max_queue_delay_microseconds: 60000001 is out of range "
       "[0, "
       "60000000]"},
      {"{scheduler: {max_batches_in_flight: 17}}",
       "node.yaml:2:22: global.scheduler.max_batches_in_flight: 17 is out of range [0, 16]"},
      {"{scheduler: {compaction_interval: -1}}",
       "node.yaml:2:22: global.scheduler.compaction_interval: -1 must be >= 0"},
      {"{scheduler: {dispatch_timeout_seconds: 0}}",
       "node.yaml:2:22: global.scheduler.dispatch_timeout_seconds: 0 must be > 0"},
      {"{scheduler: {coalescing: perhaps}}",
       "node.yaml:2:22: global.scheduler.coalescing: expected a boolean (true or false), got "
       "'perhaps'"},
      {"{scheduler: {models: {bert: {weight: 0}}}}",
       "node.yaml:2:38: global.scheduler.models.bert.weight: 0 must be > 0"},
      {"{scheduler: {models: {bert: {max_batch_size: 0}}}}",
       "node.yaml:2:38: global.scheduler.models.bert.max_batch_size: 0 must be >= 1"},
      {"{scheduler: {models: {bert: {residency: gpu}}}}",
       "node.yaml:2:38: global.scheduler.models.bert.residency: 'gpu' is not one of unpinned, "
       "system, "
       "pinned_system, device, pinned_device"},
      {"{scheduler: {models: {bert: 3}}}",
       "node.yaml:2:31: global.scheduler.models.bert: expected a map {weight, residency, "
       "max_batch_size}, got a scalar"},
      {"{endpoints: {port: 70000}}",
       "node.yaml:2:22: global.endpoints.port: 70000 is out of range [1, 65535]"},
      {"{endpoints: {port: 8080.5}}", "node.yaml:2:22: global.endpoints.port: expected an integer, "
                                      "got '8080.5' (range [1, 65535])"},
      {"{endpoints: {metrics_port: -1}}",
       "node.yaml:2:22: global.endpoints.metrics_port: -1 is out of range [0, 65535]"},
      {"{endpoints: {port: 9000, metrics_port: 9000}}",
       "node.yaml:2:34: global.endpoints.metrics_port: 9000 must differ from endpoints.port 9000"},
      {"{endpoints: {port: 9000, http_port: 9000}}",
       "node.yaml:2:34: global.endpoints.http_port: 9000 must differ from endpoints.port 9000 and "
       "endpoints.metrics_port 0 (0 disables HTTP)"},
      {"{endpoints: {port: 8000}}",
       "node.yaml:2:22: global.endpoints.port: endpoints.http_port 8000 must differ from "
       "endpoints.port 8000 and endpoints.metrics_port 0 (0 disables HTTP)"},
      {"{endpoints: {http_port: 65536}}",
       "node.yaml:2:22: global.endpoints.http_port: 65536 is out of range [0, 65535]"},
      {"{endpoints: {max_concurrent_requests: -1}}",
       "node.yaml:2:22: global.endpoints.max_concurrent_requests: -1 must be >= 0"},
      {"{endpoints: {max_request_bytes: 0}}",
       "node.yaml:2:22: global.endpoints.max_request_bytes: 0 is out of range [1, 2147483647]"},
      {"{grpc: {max_recv_msg_bytes: 0}}",
       "node.yaml:2:17: global.grpc.max_recv_msg_bytes: 0 is out of range [1, 2147483647]"},
      {"{grpc: {max_send_msg_bytes: 4294967296}}",
       "node.yaml:2:17: global.grpc.max_send_msg_bytes: 4294967296 is out of range [1, "
       "2147483647]"},
      {"{models_include: bert}",
       "node.yaml:2:10: global.models_include: expected a list of strings, got a scalar"},
      {"{runtime: 3}", "node.yaml:2:10: global.runtime: expected a map, got a scalar"},
      {"{hooks: {max_memory_mb: -1}}",
       "node.yaml:2:18: global.hooks.max_memory_mb: -1 is out of range [0, 16777216]"},
      {"{hooks: {python_path: [/opt/lib, lib]}}",
       "node.yaml:2:18: global.hooks.python_path: 'lib' is not an absolute path (expected a "
       "directory from /)"},
      {"{hooks: {allowed_packages: [numpy.linalg]}}",
       "node.yaml:2:18: global.hooks.allowed_packages: 'numpy.linalg' is not a top-level module "
       "name (expected a Python identifier such as numpy, without dots)"},
      {"[1]", "node.yaml:2:1: global: expected a map, got a list"},
  });
}

TEST(Validation, BoundaryValuesAreAccepted) {
  NodeDir dir;
  auto w = dir.worker(R"(model_repo: repo
global:
  model_control_mode: STATIC
  model_poll_seconds: 0
  runtime: {mem_fraction: 1, weight_cache_fraction: 0, weight_cache_wiggle_fraction: 0,
            cpu_threads: 4096, shared_host_weights_mode: "0660", backend: GPU, numerics: tf32,
            autotune_cache: yes, preallocate: off, pjrt_plugin: /opt/x.so, event_spin_us: 0}
  scheduler: {recency_penalty_cap: 1, coalescing_discount: 0, cost_ema_alpha: 1,
              models: {a: {pin_to_gpu: true}, b: {pin_to_gpu: true, residency: unpinned}, c: ~}}
  endpoints: {port: 65535, metrics_port: 1, http_port: 0, max_concurrent_requests: 0}
  grpc: {max_recv_msg_bytes: 2147483647, max_send_msg_bytes: 1, polling_threads: 256,
         busy_poll_us: 0}
  models_include: [a, b]
  hooks: {max_memory_mb: 0, python_path: [/opt/lib], allowed_packages: [numpy, _yaml2]}
)");
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  EXPECT_EQ(w->model_control_mode, ModelControlMode::kStatic);
  EXPECT_EQ(w->runtime.backend, Backend::kCuda);
  EXPECT_EQ(w->runtime.numerics, Numerics::kTf32);
  EXPECT_EQ(w->runtime.autotune_cache, true);
  EXPECT_FALSE(w->runtime.preallocate);
  EXPECT_EQ(w->runtime.event_spin_us, 0);
  EXPECT_EQ(w->grpc.polling_threads, 256);
  EXPECT_EQ(w->grpc.busy_poll_us, 0);
  EXPECT_EQ(w->runtime.shared_host_weights_mode, "0660");
  EXPECT_EQ(w->runtime.pjrt_plugin, "/opt/x.so");
  EXPECT_EQ(w->scheduler.models.at("a").residency, Residency::kPinnedDevice);
  EXPECT_EQ(w->scheduler.models.at("b").residency, Residency::kUnpinned);
  EXPECT_FALSE(w->scheduler.models.at("c").residency.has_value());
  EXPECT_EQ(w->scheduler.models.at("c").weight, 1.0);
  EXPECT_EQ(w->endpoints.port, 65535);
  EXPECT_EQ(w->grpc.max_recv_msg_bytes, 2147483647);
  EXPECT_EQ(w->models_include, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(w->hooks.max_memory_mb, 0);
  EXPECT_EQ(w->hooks.python_path, (std::vector<std::string>{"/opt/lib"}));
  EXPECT_EQ(w->hooks.allowed_packages, (std::vector<std::string>{"numpy", "_yaml2"}));
}

TEST(Validation, UnknownKeysAnywhereAreErrors) {
  NodeDir dir;
  EXPECT_EQ(dir.error("model_repo: repo\nmodelrepo: x\n"),
            "node.yaml:2:1: unknown key 'modelrepo'");
  EXPECT_EQ(dir.error("model_repo: repo\nglobal: {runtime: {numercs: f32}}\n"),
            "node.yaml:2:20: unknown key 'global.runtime.numercs'");
  EXPECT_EQ(dir.error("model_repo: repo\nglobal: {foo: 1}\n"),
            "node.yaml:2:10: unknown key 'global.foo'");
  EXPECT_EQ(dir.error("model_repo: repo\nglobal: {model_dirs: [a]}\n"),
            "node.yaml:2:10: unknown key 'global.model_dirs'");
  EXPECT_EQ(dir.error("model_repo: repo\nglobal: {endpoints: {grpc_port: 1}}\n"),
            "node.yaml:2:22: unknown key 'global.endpoints.grpc_port'");
  EXPECT_EQ(dir.error("model_repo: repo\nglobal: {scheduler: {models: {bert: {wieght: 2}}}}\n"),
            "node.yaml:2:38: unknown key 'global.scheduler.models.bert.wieght'");
  EXPECT_EQ(dir.error("model_repo: repo\nbase_port: 9000\n"
                      "workers: [{name: a}, {name: b, runtime: {numercs: f32}}]\n"),
            "node.yaml:3:42: unknown key 'workers[1].runtime.numercs'");
  EXPECT_EQ(dir.error("model_repo: repo\nbase_port: 9000\nworkers: [{name: a, gpus: 1}]\n"),
            "node.yaml:3:21: unknown key 'workers[0].gpus'");
  EXPECT_EQ(dir.error("model_repo: repo\nglobal: {runtime: {numerics: f32}, runtime: {}}\n"),
            "node.yaml:2:36: duplicate key 'global.runtime'");
}

TEST(Validation, RemovedKeysExplainTheReplacement) {
  NodeDir dir;
  EXPECT_EQ(
      dir.error("model_repo: repo\nglobal: {batch_policy: {max_batch_size: 8}}\n"),
      "node.yaml:2:10: global.batch_policy: 'batch_policy' was removed: cap coalescing per model "
      "with scheduler.models.<name>.max_batch_size (the batch axis comes from the manifest; "
      "allow_padding never had an effect)");
  EXPECT_EQ(
      dir.error("model_repo: repo\nglobal: {runtime: {residency_mode: externally_managed}}\n"),
      "node.yaml:2:20: global.runtime.residency_mode: 'runtime.residency_mode' was removed: use "
      "the top-level model_control_mode ('explicit' replaces 'externally_managed'; static "
      "and dynamic are self-managed)");
  EXPECT_EQ(
      dir.error("model_repo: repo\nbase_port: 9000\n"
                "workers: [{name: a, batch_policy: {allow_padding: true}}]\n"),
      "node.yaml:3:21: workers[0].batch_policy: 'batch_policy' was removed: cap coalescing per "
      "model with scheduler.models.<name>.max_batch_size (the batch axis comes from the "
      "manifest; allow_padding never had an effect)");
}

TEST(Validation, WorkerOverrideErrorsNameTheWorkerBlock) {
  NodeDir dir;
  EXPECT_EQ(dir.error("model_repo: repo\nbase_port: 9000\n"
                      "workers: [{name: a}, {name: b, runtime: {mem_fraction: 2}}]\n"),
            "node.yaml:3:42: workers[1].runtime.mem_fraction: 2 is out of range (0, 1]");
}

} // namespace
} // namespace rs::config
