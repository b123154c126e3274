//===- frontend/metrics_health_server.cc - Metrics and health port ------------===//
#include "frontend/metrics_health_server.h"

#include "frontend/http_listener.h"
#include "frontend/http_router.h"

namespace rs::frontend {
namespace {
constexpr const char *kText = "text/plain; charset=utf-8";
constexpr const char *kPrometheus = "text/plain; version=0.0.4; charset=utf-8";
} // namespace

MetricsHealthServer::MetricsHealthServer(MetricsHealthServerOptions options, ReadyFn ready,
                                         MetricsFn metrics)
    : router_(std::make_unique<HttpRouter>()) {
  HttpListenerOptions lo;
  lo.name = "metrics";
  lo.host = options.host;
  lo.port = options.port;
  lo.threads = options.threads;
  lo.io_threads = 1;
  lo.limits.max_body_bytes = 64 << 10; // the routes take no body
  // Liveness under both names: orchestrators probe /healthz, KServe clients /v2/health/live.
  for (const char *live : {"/healthz", "/v2/health/live"})
    router_->get(live,
                 [](const HttpRequest &, HttpResponse &res) { res.set_content("ok", kText); });
  router_->get("/readyz", [ready = std::move(ready)](const HttpRequest &, HttpResponse &res) {
    bool ok = ready && ready();
    res.status = ok ? 200 : 503;
    res.set_content(ok ? "ready" : "not ready", kText);
  });
  router_->get("/metrics", [metrics = std::move(metrics)](const HttpRequest &, HttpResponse &res) {
    res.set_content(metrics ? metrics() : std::string(), kPrometheus);
  });
  router_->setFallback([](const HttpRequest &, HttpResponse &res) {
    res.set_content(res.status == 404 ? "not found" : "method not allowed", kText);
  });
  HttpRouter *router = router_.get();
  listener_ = std::make_unique<HttpListener>(
      std::move(lo), [router](HttpRequest &req, HttpResponse &res) { router->dispatch(req, res); },
      nullptr);
}

MetricsHealthServer::~MetricsHealthServer() { shutdown(); }

Status MetricsHealthServer::start() { return listener_->start(); }
int MetricsHealthServer::port() const { return listener_->port(); }
void MetricsHealthServer::shutdown() { listener_->shutdown(); }

} // namespace rs::frontend
