//===- gateway/worker_link.cc - The gateway's connection to one worker ------===//
#include "gateway/worker_link.h"

#include "client/grpc_channel.h"
#include "support/net.h"

#include <httplib.h>

#include <algorithm>
#include <climits>

namespace rs::gateway {
namespace {

/// host:port without a grpc:// scheme.
std::string target(const std::string &endpoint) {
  return endpoint.starts_with("grpc://") ? endpoint.substr(7) : endpoint;
}

} // namespace

WorkerLink::WorkerLink(std::string name, std::string endpoint, std::string metrics_endpoint,
                       int64_t max_message_bytes)
    : name_(std::move(name)), endpoint_(std::move(endpoint)),
      metrics_endpoint_(std::move(metrics_endpoint)), max_message_bytes_(max_message_bytes) {
  conn_ = connect();
}

std::shared_ptr<Connection> WorkerLink::connect() const {
  client::ChannelOptions options;
  options.max_message_bytes = max_message_bytes_;
  options.fast_reconnect = true; // a worker restarts under the gateway
  // A private channel per worker link, not shared with other links to the same address.
  options.private_subchannels = true;
  auto c = std::make_shared<Connection>();
  c->channel = client::makeChannel(target(endpoint_), options);
  c->inference = inference::GRPCInferenceService::NewStub(c->channel);
  c->control = reactant_control::ControlService::NewStub(c->channel);
  return c;
}

std::shared_ptr<Connection> WorkerLink::connection() const {
  std::lock_guard lock(mu_);
  return conn_;
}

void WorkerLink::reconnect() {
  std::shared_ptr<Connection> fresh = connect();
  std::lock_guard lock(mu_);
  conn_ = std::move(fresh);
}

ProbeResult WorkerLink::probe(const std::set<std::string> &have_metadata,
                              std::chrono::milliseconds timeout,
                              std::chrono::milliseconds watchdog) {
  ProbeResult out;
  std::shared_ptr<Connection> conn = connection();
  // A worker that was down (restarting) is tried at once, not after gRPC's reconnect backoff.
  if (conn->channel->GetState(false) == GRPC_CHANNEL_TRANSIENT_FAILURE)
    grpc::experimental::ChannelResetConnectionBackoff(conn->channel.get());
  const auto all_done_by = std::chrono::system_clock::now() + watchdog;
  auto deadline = [&] { return std::min(std::chrono::system_clock::now() + timeout, all_done_by); };
  auto failed = [&](const char *rpc, const grpc::Status &s) {
    if (s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED)
      out.timed_out = true;
    out.error = std::string(rpc) + ": " + s.error_message();
  };

  {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline());
    inference::ServerReadyResponse resp;
    grpc::Status s = conn->inference->ServerReady(&ctx, {}, &resp);
    if (!s.ok()) {
      failed("ServerReady", s);
      return out;
    }
    out.snapshot.answered = true;
    out.snapshot.ready = resp.ready();
  }
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline());
    inference::RepositoryIndexResponse resp; // every model, served or not
    grpc::Status s = conn->inference->RepositoryIndex(&ctx, {}, &resp);
    if (!s.ok()) {
      failed("RepositoryIndex", s);
      out.snapshot.ready = false; // cannot route without knowing the models
      return out;
    }
    for (const auto &m : resp.models())
      if (m.state() == "READY")
        out.snapshot.models[m.name()];
      else
        out.snapshot.unserved[m.name()] = {m.state(), m.reason()};
  }
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline());
    reactant_control::ModelControlStatusResponse resp;
    grpc::Status s = conn->control->ModelControlStatus(&ctx, {}, &resp);
    if (s.ok()) {
      out.snapshot.has_control = true;
      out.snapshot.discipline = resp.discipline();
      out.snapshot.weight_cache_max_bytes = resp.weight_cache_max_bytes();
      for (const auto &m : resp.models()) {
        auto it = out.snapshot.models.find(m.name());
        if (it == out.snapshot.models.end())
          continue; // not ready
        it->second.max_batch = m.max_batch_size();
        it->second.total_compute_seconds = m.total_compute_seconds();
        it->second.requests_served = m.requests_served();
        it->second.weight_bytes = m.weight_nbytes();
      }
    } else if (s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      out.timed_out = true;
    }
  }
  for (const auto &[model, info] : out.snapshot.models) {
    if (have_metadata.count(model))
      continue;
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline());
    inference::ModelMetadataRequest req;
    req.set_name(model);
    inference::ModelMetadataResponse resp;
    grpc::Status s = conn->inference->ModelMetadata(&ctx, req, &resp);
    if (s.ok())
      out.metadata[model] = std::move(resp);
    else if (s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED)
      out.timed_out = true;
  }
  return out;
}

Result<std::string> WorkerLink::scrapeMetrics(std::chrono::milliseconds timeout) const {
  if (metrics_endpoint_.empty())
    return unavailable() << "worker '" << name_ << "' has no metrics endpoint";
  std::string hostport = metrics_endpoint_;
  if (hostport.starts_with("http://"))
    hostport = hostport.substr(7);
  RS_ASSIGN_OR_RETURN(HostPort hp,
                      parseHostPort(hostport, "worker '" + name_ + "' metrics endpoint '" +
                                                  metrics_endpoint_ + "'"));
  httplib::Client cli(hp.host, hp.port);
  const time_t seconds = static_cast<time_t>(timeout.count() / 1000);
  const time_t micros = static_cast<time_t>((timeout.count() % 1000) * 1000);
  cli.set_connection_timeout(seconds, micros);
  cli.set_read_timeout(seconds, micros);
  httplib::Result r = cli.Get("/metrics");
  if (!r)
    return unavailable() << "worker '" << name_ << "' metrics " << metrics_endpoint_ << ": "
                         << httplib::to_string(r.error());
  if (r->status != 200)
    return unavailable() << "worker '" << name_ << "' metrics " << metrics_endpoint_
                         << ": http status " << r->status;
  return r->body;
}

} // namespace rs::gateway
