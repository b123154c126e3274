//===- test/gateway/gateway_config_test.cc - gateway.yml and its environment ===//
#include "config/gateway_config.h"

#include <gtest/gtest.h>

#include <cmath>

namespace rs::gateway {
namespace {

constexpr const char *kEndpoints = "endpoints: [\"10.0.0.5:8080\", \"10.0.0.6:8080\"]\n";

TEST(GatewayConfigTest, DefaultsAreTheReferences) {
  Result<config::GatewayConfig> c = config::parseGatewayConfig(kEndpoints, "gateway.yml", {});
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c->listen_grpc.text(), "0.0.0.0:8001");
  EXPECT_EQ(c->listen_metrics.text(), "0.0.0.0:8002");
  EXPECT_EQ(c->listen_http.text(), "0.0.0.0:8000");
  EXPECT_EQ(c->endpoints, (std::vector<std::string>{"10.0.0.5:8080", "10.0.0.6:8080"}));
  EXPECT_EQ(c->worker_names, c->endpoints);
  EXPECT_EQ(c->max_recv_msg_bytes, 536870912);
  EXPECT_EQ(c->max_send_msg_bytes, 536870912);
  EXPECT_EQ(c->max_concurrent_requests_per_worker, 64);
  EXPECT_EQ(c->request_timeout_seconds, 60);
  EXPECT_EQ(c->max_concurrent_streams, 32);
  EXPECT_EQ(c->logging_level, "info");
  EXPECT_EQ(c->logging_format, "json");
  const config::SchedulingConfig &s = c->scheduling;
  EXPECT_EQ(s.mode, config::SchedulingMode::kRoundRobin);
  EXPECT_EQ(s.work_basis, config::WorkBasis::kCompute);
  EXPECT_EQ(s.rebalance_compute_seconds, 300);
  EXPECT_EQ(s.first_rebalance_compute_seconds, 60);
  EXPECT_EQ(s.ema_halflife_compute_seconds, 0);
  EXPECT_EQ(s.hysteresis, 0.0);
  EXPECT_EQ(s.max_worker_share, 0.8);
  EXPECT_EQ(s.default_replicas, 1);
  EXPECT_EQ(s.routing_fill_factor, 1.0);
  EXPECT_EQ(s.routing_policy, config::RoutingPolicy::kFillLeast);
  EXPECT_EQ(s.routing_fill_mode, config::FillMode::kRun);
  EXPECT_TRUE(s.forbid_memory_oversubscription);
  EXPECT_EQ(s.compaction_mode, config::CompactionMode::kEager);
  EXPECT_EQ(s.compaction_interval, 1);
  EXPECT_EQ(c->startup_wait_seconds, 0);
  EXPECT_EQ(c->health_interval_seconds, 10);
  EXPECT_EQ(c->wedge_exit_rounds, 3);
}

TEST(GatewayConfigTest, EveryKeyParses) {
  const std::string yaml = R"(listen: {grpc: "127.0.0.1:9001", metrics: "127.0.0.1:9002", http: ""}
endpoints: ["a:1", "b:2", "a:1"]
metrics_endpoints: ["a:11", "b:12", "a:11"]
worker_names: [gpu0, gpu1, gpu0]
grpc: {max_recv_msg_bytes: 1000, max_send_msg_bytes: 2000, max_concurrent_requests_per_worker: 0}
worker_client: {request_timeout_seconds: 2.5, max_concurrent_streams: 4}
logging: {level: debug, format: text}
scheduling:
  mode: lpt_packing
  work_basis: items
  rebalance_compute_seconds: 30
  first_rebalance_compute_seconds: 0
  ema_halflife_compute_seconds: 12
  hysteresis: 0.25
  max_worker_share: 1
  default_replicas: all
  routing_fill_factor: 0.5
  routing_policy: fill_rr
  routing_fill_mode: spread
  forbid_memory_oversubscription: false
  compaction_mode: scheduled
  compaction_interval: 0
  models:
    bert: {replicas: 2, fill_mode: inflight, fill_factor: 2}
    resnet: {replicas: all, fill_mode: inherit}
)";
  Result<config::GatewayConfig> c = config::parseGatewayConfig(yaml, "gateway.yml", {});
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c->listen_grpc.text(), "127.0.0.1:9001");
  EXPECT_FALSE(c->listen_http.enabled());
  // De-duplicated: the third entry repeats the first.
  EXPECT_EQ(c->endpoints, (std::vector<std::string>{"a:1", "b:2"}));
  EXPECT_EQ(c->metrics_endpoints, (std::vector<std::string>{"a:11", "b:12"}));
  EXPECT_EQ(c->worker_names, (std::vector<std::string>{"gpu0", "gpu1"}));
  EXPECT_EQ(c->max_recv_msg_bytes, 1000);
  EXPECT_EQ(c->max_concurrent_requests_per_worker, 0);
  EXPECT_EQ(c->request_timeout_seconds, 2.5);
  EXPECT_EQ(c->logging_format, "text");
  const config::SchedulingConfig &s = c->scheduling;
  EXPECT_EQ(s.mode, config::SchedulingMode::kLptPacking);
  EXPECT_EQ(s.work_basis, config::WorkBasis::kItems);
  EXPECT_EQ(s.default_replicas, config::kAllReplicas);
  EXPECT_EQ(s.routing_policy, config::RoutingPolicy::kFillRr);
  EXPECT_EQ(s.routing_fill_mode, config::FillMode::kSpread);
  EXPECT_FALSE(s.forbid_memory_oversubscription);
  EXPECT_EQ(s.compaction_mode, config::CompactionMode::kScheduled);
  ASSERT_EQ(s.models.size(), 2u);
  EXPECT_EQ(s.models.at("bert").replicas, 2);
  EXPECT_EQ(s.models.at("bert").fill_mode, config::FillMode::kInflight);
  EXPECT_EQ(s.models.at("bert").fill_factor, 2.0);
  EXPECT_EQ(s.models.at("resnet").replicas, config::kAllReplicas);
  EXPECT_FALSE(s.models.at("resnet").fill_mode.has_value());
}

TEST(GatewayConfigTest, ExampleFileLoads) {
  Result<config::GatewayConfig> c =
      config::loadGatewayConfig(std::string(RS_SOURCE_DIR) + "/examples/gateway.yml", {});
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c->endpoints,
            (std::vector<std::string>{"127.0.0.1:8080", "127.0.0.1:8081", "127.0.0.1:8082"}));
  EXPECT_EQ(c->worker_names, (std::vector<std::string>{"cpu0", "cpu1", "cpu2"}));
  EXPECT_EQ(c->scheduling.mode, config::SchedulingMode::kLptPacking);
  EXPECT_EQ(c->scheduling.default_replicas, config::kAllReplicas);
  EXPECT_EQ(c->scheduling.routing_fill_mode, config::FillMode::kSpread);
  EXPECT_EQ(c->scheduling.models.at("digits_cnn").replicas, 2);
  EXPECT_FALSE(c->scheduling.models.at("digits_cnn").fill_mode.has_value());
}

TEST(GatewayConfigTest, EnvironmentOverrides) {
  config::Environment env = {
      {"REACTANT_GATEWAY_WORKERS", "127.0.0.1:8080, 127.0.0.1:8081"},
      {"REACTANT_GATEWAY_WORKER_NAMES", "w0,w1"},
      {"REACTANT_GATEWAY_WORKER_METRICS", "127.0.0.1:9100,127.0.0.1:9101"},
      {"REACTANT_GATEWAY_LISTEN_GRPC", "127.0.0.1:7001"},
      {"REACTANT_GATEWAY_SCHEDULING_MODE", "least_outstanding"},
      {"REACTANT_GATEWAY_SCHEDULING_WORK_BASIS", "requests"},
      {"REACTANT_GATEWAY_SCHEDULING_ROUTING_FILL_MODE", "spread"},
      {"REACTANT_GATEWAY_GRPC_MAX_RECV_MSG_BYTES", "4096"},
      {"REACTANT_GATEWAY_STARTUP_WAIT_SECONDS", "inf"},
      {"REACTANT_GATEWAY_HEALTH_INTERVAL_SECONDS", "0.5"},
      {"REACTANT_GATEWAY_WEDGE_EXIT_ROUNDS", "0"},
      {"REACTANT_GATEWAY_FILE", "/nonexistent.yml"},
      {"UNRELATED", "x"},
  };
  Result<config::GatewayConfig> c = config::parseGatewayConfig(kEndpoints, "gateway.yml", env);
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c->endpoints, (std::vector<std::string>{"127.0.0.1:8080", "127.0.0.1:8081"}));
  EXPECT_EQ(c->worker_names, (std::vector<std::string>{"w0", "w1"}));
  EXPECT_EQ(c->metrics_endpoints, (std::vector<std::string>{"127.0.0.1:9100", "127.0.0.1:9101"}));
  EXPECT_EQ(c->listen_grpc.text(), "127.0.0.1:7001");
  EXPECT_EQ(c->scheduling.mode, config::SchedulingMode::kLeastOutstanding);
  EXPECT_EQ(c->scheduling.work_basis, config::WorkBasis::kRequests);
  EXPECT_EQ(c->scheduling.routing_fill_mode, config::FillMode::kSpread);
  EXPECT_EQ(c->max_recv_msg_bytes, 4096);
  EXPECT_TRUE(std::isinf(c->startup_wait_seconds));
  EXPECT_EQ(c->health_interval_seconds, 0.5);
  EXPECT_EQ(c->wedge_exit_rounds, 0);
  EXPECT_EQ(c->env_overrides.size(), 11u); // every REACTANT_GATEWAY_* but _FILE
  // No file at all: the environment alone.
  Result<config::GatewayConfig> bare = config::parseGatewayConfig("", "", env);
  ASSERT_TRUE(bare.isOk()) << bare.status().toString();
  EXPECT_EQ(bare->endpoints.size(), 2u);
}

TEST(GatewayConfigTest, CorsAllowedOriginsFromTheFileTheEnvironmentOrTheNode) {
  Result<config::GatewayConfig> c = config::parseGatewayConfig(kEndpoints, "gateway.yml", {});
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_TRUE(c->cors_allowed_origins.empty());
  const std::string file = std::string(kEndpoints) +
                           "http: {cors_allowed_origins: [\"https://app.example.com\", \"*\"]}\n";
  c = config::parseGatewayConfig(file, "gateway.yml", {});
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c->cors_allowed_origins, (std::vector<std::string>{"https://app.example.com", "*"}));
  const config::Environment env = {
      {"REACTANT_GATEWAY_HTTP_CORS_ALLOWED_ORIGINS", "http://localhost:3000,https://b.example"}};
  c = config::parseGatewayConfig(file, "gateway.yml", env);
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c->cors_allowed_origins,
            (std::vector<std::string>{"http://localhost:3000", "https://b.example"}));
  // Under a node: the workers' list, unless the file or the variable sets one.
  config::NodeGatewayValues node;
  node.endpoints = {"127.0.0.1:8001"};
  node.worker_names = {"w0"};
  node.max_recv_msg_bytes = node.max_send_msg_bytes = 1024;
  node.cors_allowed_origins = {"https://node.example"};
  c = config::parseGatewayConfig("", "", {}, &node);
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c->cors_allowed_origins, (std::vector<std::string>{"https://node.example"}));
  c = config::parseGatewayConfig(file, "gateway.yml", {}, &node);
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c->cors_allowed_origins, (std::vector<std::string>{"https://app.example.com", "*"}));
  c = config::parseGatewayConfig("", "", env, &node);
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c->cors_allowed_origins,
            (std::vector<std::string>{"http://localhost:3000", "https://b.example"}));
}

TEST(GatewayConfigTest, HealthCheckMetricsPortIsAccepted) {
  // The reference's container health check reads REACTANT_GATEWAY_METRICS_PORT; the gateway
  // validates it and keeps listening where listen.metrics says.
  Result<config::GatewayConfig> c = config::parseGatewayConfig(
      kEndpoints, "gateway.yml", {{"REACTANT_GATEWAY_METRICS_PORT", "8002"}});
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c->health_check_metrics_port, 8002);
  EXPECT_EQ(c->listen_metrics.text(), "0.0.0.0:8002");
  Result<config::GatewayConfig> bad = config::parseGatewayConfig(
      kEndpoints, "gateway.yml", {{"REACTANT_GATEWAY_METRICS_PORT", "0"}});
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().message(), "environment override REACTANT_GATEWAY_METRICS_PORT: 0 is out "
                                    "of range [1, 65535]");
}

TEST(GatewayConfigTest, ErrorsNameTheKeyAndValue) {
  struct Case {
    std::string yaml;
    config::Environment env;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"listen: {grpc: \"0.0.0.0:8001\"}\n",
       {},
       "gateway.yml: endpoints is required (a list of worker host:port, or "
       "REACTANT_GATEWAY_WORKERS)"},
      {std::string(kEndpoints) + "schedulng: {mode: round_robin}\n",
       {},
       "gateway.yml:2:1: unknown key 'schedulng'"},
      {std::string(kEndpoints) + "scheduling: {modes: round_robin}\n",
       {},
       "gateway.yml:2:14: unknown key 'scheduling.modes'"},
      {std::string(kEndpoints) + "scheduling: {models: {bert: {replica: 2}}}\n",
       {},
       "gateway.yml:2:30: unknown key 'scheduling.models.bert.replica'"},
      {std::string(kEndpoints) + "scheduling: {routing_policy: least_outstanding}\n",
       {},
       "gateway.yml:2:14: scheduling.routing_policy: 'least_outstanding' is a scheduling mode, not "
       "a "
       "routing policy: set scheduling.mode: least_outstanding instead"},
      {std::string(kEndpoints) + "scheduling: {mode: fastest}\n",
       {},
       "gateway.yml:2:14: scheduling.mode: 'fastest' is not one of round_robin, least_outstanding, "
       "lpt_packing"},
      {std::string(kEndpoints) + "scheduling: {hysteresis: 1}\n",
       {},
       "gateway.yml:2:14: scheduling.hysteresis: 1 is out of range [0, 1)"},
      {std::string(kEndpoints) + "scheduling: {default_replicas: 0}\n",
       {},
       "gateway.yml:2:14: scheduling.default_replicas: expected an integer >= 1 or 'all', got '0'"},
      {std::string(kEndpoints) + "scheduling: {models: {bert: {fill_mode: fast}}}\n",
       {},
       "gateway.yml:2:30: scheduling.models.bert.fill_mode: 'fast' is not one of run, spread, "
       "inflight, inherit"},
      {std::string(kEndpoints) + "worker_names: [a]\n",
       {},
       "gateway.yml:2:1: worker_names has 1 entries but endpoints has 2"},
      {"endpoints: [\"nohost\"]\n",
       {},
       "gateway.yml:1:1: endpoints: 'nohost' is not host:port with a port in [1, 65535]"},
      {std::string(kEndpoints) + "worker_names: [a, a]\n",
       {},
       "gateway.yml:2:1: duplicate worker name 'a'"},
      {std::string(kEndpoints) + "http: {cors_allowed_origins: [\"app.example.com\"]}\n",
       {},
       "gateway.yml:2:8: http.cors_allowed_origins: 'app.example.com' is not an origin "
       "(scheme://host[:port], e.g. https://app.example.com) or *"},
      {kEndpoints,
       {{"REACTANT_GATEWAY_HTTP_CORS_ALLOWED_ORIGINS", "https://a.example/"}},
       "environment override REACTANT_GATEWAY_HTTP_CORS_ALLOWED_ORIGINS: 'https://a.example/' is "
       "not an origin (scheme://host[:port], e.g. https://app.example.com) or *"},
      {kEndpoints,
       {{"REACTANT_GATEWAY_SCHEDULING_MODEE", "x"}},
       "environment: unknown variable REACTANT_GATEWAY_SCHEDULING_MODEE (not a configuration "
       "key)"},
      {kEndpoints,
       {{"REACTANT_GATEWAY_GRPC_MAX_RECV_MSG_BYTES", "lots"}},
       "environment override REACTANT_GATEWAY_GRPC_MAX_RECV_MSG_BYTES: expected an integer, got "
       "'lots' (range [1, 2147483647])"},
      {kEndpoints,
       {{"REACTANT_GATEWAY_STARTUP_WAIT_SECONDS", "soon"}},
       "environment override REACTANT_GATEWAY_STARTUP_WAIT_SECONDS: expected a number >= 0 or "
       "inf, got 'soon'"},
  };
  for (const Case &c : cases) {
    Result<config::GatewayConfig> r = config::parseGatewayConfig(c.yaml, "gateway.yml", c.env);
    ASSERT_FALSE(r.isOk()) << c.yaml;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(), c.message) << c.yaml;
  }
}

} // namespace
} // namespace rs::gateway
