//===- test/server/metrics_health_server_test.cc - Metrics and health port --===//
#include "frontend/metrics_health_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <future>
#include <mutex>

namespace rs::server {
namespace {

TEST(MetricsHealthServer, ProbesAndMetrics) {
  std::atomic<bool> ready{false};
  std::atomic<int> scrapes{0};
  frontend::MetricsHealthServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  frontend::MetricsHealthServer server(
      options, [&] { return ready.load(); },
      [&] {
        ++scrapes;
        return std::string("# TYPE worker_models_loaded gauge\nworker_models_loaded 2\n");
      });
  ASSERT_TRUE(server.start().isOk());
  httplib::Client c("127.0.0.1", server.port());

  auto r = c.Get("/healthz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "ok");

  r = c.Get("/readyz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->body, "not ready");
  ready = true;
  r = c.Get("/readyz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "ready");

  r = c.Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(r->body, "# TYPE worker_models_loaded gauge\nworker_models_loaded 2\n");
  EXPECT_EQ(scrapes.load(), 1);

  // Liveness under KServe's name too (the port answers it before any model loads).
  r = c.Get("/v2/health/live");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "ok");
  r = c.Get("/v2/health/ready");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(r->body, "not found");

  server.shutdown();
  EXPECT_FALSE(c.Get("/healthz"));
}

TEST(MetricsHealthServer, HealthzNeverWaitsOnReadiness) {
  // A readiness predicate that blocks (a model loading under a lock) must not hold /healthz.
  std::mutex mu;
  std::unique_lock hold(mu);
  frontend::MetricsHealthServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.threads = 2;
  frontend::MetricsHealthServer server(
      options,
      [&] {
        std::lock_guard l(mu);
        return true;
      },
      [] { return std::string(); });
  ASSERT_TRUE(server.start().isOk());
  auto blocked = std::async(std::launch::async, [&] {
    httplib::Client c("127.0.0.1", server.port());
    auto r = c.Get("/readyz");
    return r ? r->status : -1;
  });
  httplib::Client c("127.0.0.1", server.port());
  auto r = c.Get("/healthz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  hold.unlock();
  EXPECT_EQ(blocked.get(), 200);
}

} // namespace
} // namespace rs::server
