//===- gateway/gateway.cc - KServe V2 reverse proxy over many workers -------===//
#include "gateway/gateway.h"

#include "frontend/grpc_health.h"
#include "frontend/grpc_reflection_v1.h"
#include "frontend/http_server.h"
#include "frontend/metrics_health_server.h"
#include "gateway/gateway_impl.h"
#include "gateway/metrics_merge.h"
#include "protocol/evidence.h"

#include <fmt/ranges.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <climits>
#include <future>
#include <sstream>

namespace rs::gateway {
namespace {

constexpr auto kScrapeTimeout = std::chrono::seconds(5);
/// How often the grpc.health.v1 statuses are set from the router (as a worker's).
constexpr auto kHealthRefresh = std::chrono::milliseconds(500);

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

} // namespace

// ---- Impl: lifecycle --------------------------------------------------------------

Gateway::Impl::Impl(GatewayOptions options)
    : config_(std::move(options.config)), build_(std::move(options.build)),
      on_fatal_(std::move(options.on_fatal)), router_(config_.scheduling, config_.worker_names),
      metrics_(config_.max_concurrent_requests_per_worker *
               static_cast<int64_t>(config_.endpoints.size())),
      inbound_cap_(config_.max_concurrent_requests_per_worker *
                   static_cast<int64_t>(config_.endpoints.size())) {
  for (size_t i = 0; i < config_.endpoints.size(); ++i)
    links_.push_back(std::make_unique<WorkerLink>(
        config_.worker_names[i], config_.endpoints[i], config_.metrics_endpoints[i],
        std::max(config_.max_recv_msg_bytes, config_.max_send_msg_bytes)));
  was_ready_.assign(links_.size(), false);
  answered_once_.assign(links_.size(), false);
  last_errors_.assign(links_.size(), "not probed yet");
}

Gateway::Impl::~Impl() { shutdown(std::chrono::seconds(10)); }

Status Gateway::Impl::start() {
  if (started_)
    return failedPrecondition() << "gateway already started";
  started_ = true;
  std::ostringstream settings;
  for (const auto &[key, value] : config::effectiveGatewaySettings(config_))
    settings << ' ' << key << '=' << value;
  spdlog::info("Effective configuration gateway{}", settings.str());
  if (!config_.env_overrides.empty()) {
    std::ostringstream env;
    for (const auto &[var, value] : config_.env_overrides)
      env << (env.tellp() > 0 ? " " : "") << var << '=' << value;
    spdlog::info("Configuration overridden by environment {}", env.str());
  }
  for (const std::string &w : config_.warnings)
    spdlog::warn("gateway: {}", w);
  if (config_.scheduling.routing_fill_mode == config::FillMode::kInflight)
    spdlog::warn("gateway: routing_fill_mode inflight can serve a model from one replica for "
                 "ever; prefer run, or spread");

  started_at_ = protocol::utcNow();
  grpc_frontend_ = std::make_unique<GrpcFrontend>(*this);
  control_frontend_ = std::make_unique<ControlFrontend>(*this);
  evidence_frontend_ = std::make_unique<EvidenceFrontend>(*this);
  rest_service_ = std::make_unique<RestService>(*this);
  // grpc.health.v1.Health (grpc++'s implementation, fed by GrpcHealthPublisher from the
  // router) and server reflection on the same port, as a worker serves them; both read
  // process-wide switches when the server is built.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  auto clampInt = [](int64_t v) { return static_cast<int>(std::clamp<int64_t>(v, 0, INT_MAX)); };
  grpc::ServerBuilder builder;
  frontend::addReflectionV1(builder); // grpc.reflection.v1 beside grpc++'s v1alpha
  builder.AddListeningPort(config_.listen_grpc.text(), grpc::InsecureServerCredentials(),
                           &grpc_port_);
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(clampInt(config_.max_recv_msg_bytes));
  builder.SetMaxSendMessageSize(clampInt(config_.max_send_msg_bytes));
  builder.RegisterService(grpc_frontend_.get());
  builder.RegisterService(control_frontend_.get());
  builder.RegisterService(evidence_frontend_.get());
  grpc_server_ = builder.BuildAndStart();
  if (!grpc_server_ || grpc_port_ == 0) {
    if (grpc_server_)
      grpc_server_->Shutdown();
    grpc_server_.reset();
    grpc_port_ = 0;
    return unavailable() << "gateway: cannot bind grpc " << config_.listen_grpc.text();
  }
  if (grpc::HealthCheckServiceInterface *health = grpc_server_->GetHealthCheckService())
    health_ = std::make_unique<frontend::GrpcHealthPublisher>(*health, *rest_service_,
                                                              *rest_service_, kHealthRefresh);
  if (config_.listen_http.enabled()) {
    frontend::HttpServerOptions o;
    o.host = config_.listen_http.host;
    o.port = config_.listen_http.port;
    o.max_body_bytes = std::min(o.max_body_bytes, config_.max_recv_msg_bytes);
    o.evidence = [this] { return evidenceJson(); };
    o.cors_allowed_origins = config_.cors_allowed_origins;
    o.shared_memory_refusal = restSharedMemoryRefusal();
    http_ = std::make_unique<frontend::HttpServer>(o, *rest_service_, *rest_service_);
    RS_RETURN_IF_ERROR(http_->start());
  }
  if (config_.listen_metrics.enabled()) {
    frontend::MetricsHealthServerOptions o;
    o.host = config_.listen_metrics.host;
    o.port = config_.listen_metrics.port;
    o.threads = 4;
    admin_ = std::make_unique<frontend::MetricsHealthServer>(
        o, [this] { return router_.anyReady(); }, [this] { return renderMetrics(); });
    RS_RETURN_IF_ERROR(admin_->start());
  }
  {
    std::lock_guard lock(probe_mu_);
    round_wanted_ = true;
  }
  prober_ = std::thread([this] { proberLoop(); });
  spdlog::info("gateway serving grpc={}:{} http={} metrics={} mode={} workers={}",
               config_.listen_grpc.host, grpc_port_, http_ ? http_->port() : 0,
               admin_ ? admin_->port() : 0, config::schedulingModeName(config_.scheduling.mode),
               fmt::format("[{}]", fmt::join(config_.worker_names, ", ")));
  return Status::ok();
}

Status Gateway::Impl::waitForWorkers(double seconds) {
  const auto begin = Clock::now();
  const bool lpt = config_.scheduling.mode == config::SchedulingMode::kLptPacking;
  while (true) {
    probeNow();
    {
      std::lock_guard lock(round_mu_);
      const bool all =
          std::all_of(answered_once_.begin(), answered_once_.end(), [](bool b) { return b; });
      if (lpt ? all && router_.anyReady() : router_.anyReady())
        return Status::ok();
      if (secondsSince(begin) >= seconds) {
        std::string why;
        for (size_t w = 0; w < links_.size(); ++w)
          if (!router_.workerReady(w))
            why += (why.empty() ? "" : "; ") + links_[w]->name() + " (" + links_[w]->endpoint() +
                   "): " + (last_errors_[w].empty() ? "not ready" : last_errors_[w]);
        return unavailable() << "gateway: no worker became ready within " << seconds
                             << " s: " << why;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

void Gateway::Impl::shutdown(std::chrono::milliseconds grace) {
  if (shut_down_ || !started_)
    return;
  shut_down_ = true;
  spdlog::info("gateway draining");
  // Stop taking calls; in-flight ones finish (their worker calls complete first). grpc++
  // turns every health status NOT_SERVING as the server shuts down, and keeps them so.
  if (grpc_server_) {
    grpc_server_->Shutdown(std::chrono::system_clock::now() + grace);
    grpc_server_->Wait();
    spdlog::info("gateway: grpc front-end drained");
  }
  if (http_)
    http_->shutdown();
  {
    std::lock_guard lock(probe_mu_);
    stopping_ = true;
  }
  probe_cv_.notify_all();
  if (prober_.joinable())
    prober_.join();
  std::vector<std::function<void()>> pending;
  {
    std::lock_guard lock(probe_mu_);
    pending.swap(after_round_);
  }
  for (auto &f : pending)
    f();
  health_.reset(); // after the prober, which refreshes it
  {
    std::unique_lock lock(calls_mu_);
    calls_cv_.wait_for(lock, grace, [this] { return calls_ == 0; });
  }
  if (admin_)
    admin_->shutdown();
  grpc_server_.reset();
  spdlog::info("gateway stopped");
}

int Gateway::Impl::httpPort() const { return http_ ? http_->port() : 0; }
int Gateway::Impl::metricsPort() const { return admin_ ? admin_->port() : 0; }

std::string Gateway::Impl::renderMetrics() {
  std::vector<std::future<Result<std::string>>> scrapes;
  for (const auto &link : links_)
    scrapes.push_back(std::async(std::launch::async, [&link] {
      return link->scrapeMetrics(
          std::chrono::duration_cast<std::chrono::milliseconds>(kScrapeTimeout));
    }));
  std::vector<std::pair<std::string, std::string>> texts;
  std::map<std::string, bool> up;
  for (size_t w = 0; w < links_.size(); ++w) {
    Result<std::string> text = scrapes[w].get();
    up[links_[w]->name()] = text.isOk();
    if (text.isOk())
      texts.emplace_back(links_[w]->name(), std::move(text).value());
  }
  const std::string own = metrics_.render(router_.metrics(), config_.scheduling.mode, up);
  return mergeExpositions(own, texts);
}

// ---- Gateway -------------------------------------------------------------------------

Gateway::Gateway(GatewayOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Gateway::~Gateway() { shutdown(); }
Status Gateway::start() { return impl_->start(); }
Status Gateway::waitForWorkers(double seconds) { return impl_->waitForWorkers(seconds); }
void Gateway::shutdown(std::chrono::milliseconds grace) { impl_->shutdown(grace); }
int Gateway::grpcPort() const { return impl_->grpc_port_; }
int Gateway::httpPort() const { return impl_->httpPort(); }
int Gateway::metricsPort() const { return impl_->metricsPort(); }
void Gateway::probeNow() { impl_->probeNow(); }
Router &Gateway::router() { return impl_->router(); }
std::string Gateway::renderMetrics() { return impl_->renderMetrics(); }

} // namespace rs::gateway
