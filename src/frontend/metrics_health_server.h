//===- frontend/metrics_health_server.h - Metrics and health port -------------===//
//
// The small HTTP server on the metrics port (reference-system.md section 6):
//
//   GET /healthz   200 "ok" (text/plain): the process answers; never waits on models
//   GET /v2/health/live   the same (KServe V2's liveness path); the worker starts this
//                  port before it loads any model, so liveness holds while models compile
//   GET /readyz    200 "ready", or 503 "not ready": the `ready` predicate, which is the
//                  same as gRPC ServerReady
//   GET /metrics   200 Prometheus text exposition 0.0.4 from the `metrics` callback
//   anything else  404 "not found"; another method on these paths 405 "method not allowed"
//   (with Allow); malformed requests the transport's 400/408/413/431/505 (plain text)
//
// It has its own worker threads, so a slow inference on the data ports never delays a
// probe. The callbacks run on those threads and must be thread-safe.
// Thread safety: start() and shutdown() from one controlling thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <functional>
#include <memory>
#include <string>

namespace rs::frontend {

class HttpListener;
class HttpRouter;

struct MetricsHealthServerOptions {
  /// Address to bind: "0.0.0.0", "127.0.0.1" ...
  std::string host = "0.0.0.0";
  /// TCP port; 0 picks a free port, read back with MetricsHealthServer::port().
  int port = 8002;
  /// Worker threads.
  int threads = 2;
};

class MetricsHealthServer {
public:
  /// Readiness predicate (ServerReady's).
  using ReadyFn = std::function<bool()>;
  /// Returns the whole Prometheus text exposition.
  using MetricsFn = std::function<std::string()>;

  MetricsHealthServer(MetricsHealthServerOptions options, ReadyFn ready, MetricsFn metrics);
  ~MetricsHealthServer();
  MetricsHealthServer(const MetricsHealthServer &) = delete;
  MetricsHealthServer &operator=(const MetricsHealthServer &) = delete;

  /// Binds and starts serving. Unavailable if the address cannot be bound.
  Status start();
  /// The bound port after a successful start(), else 0.
  int port() const;
  /// Stops accepting connections and returns once in-flight requests are answered.
  void shutdown();

private:
  std::unique_ptr<HttpRouter> router_;
  std::unique_ptr<HttpListener> listener_;
};

} // namespace rs::frontend
