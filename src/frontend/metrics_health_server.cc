//===- frontend/metrics_health_server.cc - Metrics and health port ------------===//
#include "frontend/metrics_health_server.h"

#include "frontend/http_listener.h"

namespace rs::frontend {
namespace {
constexpr const char *kText = "text/plain; charset=utf-8";
constexpr const char *kPrometheus = "text/plain; version=0.0.4; charset=utf-8";
} // namespace

MetricsHealthServer::MetricsHealthServer(MetricsHealthServerOptions options, ReadyFn ready,
                                         MetricsFn metrics) {
  HttpListenerOptions lo;
  lo.name = "metrics";
  lo.host = options.host;
  lo.port = options.port;
  lo.threads = options.threads;
  listener_ = std::make_unique<HttpListener>(std::move(lo));
  httplib::Server &svr = listener_->server();
  // Liveness under both names: orchestrators probe /healthz, KServe clients /v2/health/live.
  for (const char *live : {"/healthz", "/v2/health/live"})
    svr.Get(live,
            [](const httplib::Request &, httplib::Response &res) { res.set_content("ok", kText); });
  svr.Get("/readyz", [ready = std::move(ready)](const httplib::Request &, httplib::Response &res) {
    bool ok = ready && ready();
    res.status = ok ? 200 : 503;
    res.set_content(ok ? "ready" : "not ready", kText);
  });
  svr.Get("/metrics",
          [metrics = std::move(metrics)](const httplib::Request &, httplib::Response &res) {
            res.set_content(metrics ? metrics() : std::string(), kPrometheus);
          });
  svr.set_error_handler([](const httplib::Request &, httplib::Response &res) {
    if (res.body.empty())
      res.set_content(res.status == 404 ? "not found" : "error", kText);
  });
}

MetricsHealthServer::~MetricsHealthServer() { shutdown(); }

Status MetricsHealthServer::start() { return listener_->start(); }
int MetricsHealthServer::port() const { return listener_->port(); }
void MetricsHealthServer::shutdown() { listener_->shutdown(); }

} // namespace rs::frontend
