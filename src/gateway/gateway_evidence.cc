//===- gateway/gateway_evidence.cc - The gateway's deployment evidence ----===//
//
// GET /v2/evidence and reactant_evidence.EvidenceService/DeploymentEvidence on the
// gateway: its own identity plus every worker's document, fetched from the workers over
// their gRPC EvidenceService at the time of the request (docs/validation.md "Gateway
// contract").
//
//===----------------------------------------------------------------------===//
#include "gateway/gateway_impl.h"
#include "protocol/evidence.h"
#include "protocol/status_mapping.h"

#include <nlohmann/json.hpp>

#include <future>

#include <unistd.h>

namespace rs::gateway {
namespace {

using nlohmann::json;

/// Per worker call: a worker that does not answer within it is reported with an error.
constexpr auto kEvidenceTimeout = std::chrono::seconds(10);

/// One gathering: a call per worker, the answers, and who gets the document.
struct Gathering {
  struct Call {
    std::shared_ptr<Connection> conn;
    std::unique_ptr<reactant_evidence::EvidenceService::Stub> stub;
    grpc::ClientContext ctx;
    reactant_evidence::DeploymentEvidenceRequest req;
    reactant_evidence::DeploymentEvidenceResponse resp;
  };
  json gateway;
  std::vector<json> workers; // one entry per worker, filled as the answers come
  std::vector<std::unique_ptr<Call>> calls;
  std::mutex mu;
  size_t pending = 0; // GUARDED_BY(mu)
  std::function<void(std::string)> done;

  void finish() {
    json doc = {{"format", protocol::kGatewayEvidenceFormat},
                {"gateway", std::move(gateway)},
                {"workers", std::move(workers)}};
    done(doc.dump(2, ' ', false, json::error_handler_t::replace));
  }
};

/// "host:port" with the bound port, "" when that front-end is off.
std::string addressText(const config::ListenAddress &a, int bound_port) {
  return a.enabled() ? a.host + ":" + std::to_string(bound_port) : "";
}

} // namespace

void Gateway::Impl::gatherEvidence(std::function<void(std::string)> done) {
  auto g = std::make_shared<Gathering>();
  g->done = std::move(done);
  json settings = json::object();
  for (const auto &[key, value] : config::effectiveGatewaySettings(config_))
    settings[key] = value;
  g->gateway = {{"build", protocol::buildEvidence(build_)},
                {"instance",
                 {{"hostname", protocol::evidenceHostName()},
                  {"pid", static_cast<int64_t>(::getpid())},
                  {"started_at", started_at_},
                  {"listen",
                   {{"grpc", addressText(config_.listen_grpc, grpc_port_)},
                    {"http", addressText(config_.listen_http, httpPort())},
                    {"metrics", addressText(config_.listen_metrics, metricsPort())}}},
                  {"config", std::move(settings)}}}};
  g->workers.resize(links_.size());
  g->pending = links_.size();
  if (links_.empty())
    return g->finish();
  for (size_t w = 0; w < links_.size(); ++w) {
    g->workers[w] = {{"worker", links_[w]->name()}, {"address", links_[w]->endpoint()}};
    auto call = std::make_unique<Gathering::Call>();
    call->conn = links_[w]->connection();
    call->stub = reactant_evidence::EvidenceService::NewStub(call->conn->channel);
    call->ctx.set_deadline(std::chrono::system_clock::now() + kEvidenceTimeout);
    g->calls.push_back(std::move(call));
  }
  for (size_t w = 0; w < links_.size(); ++w) {
    Gathering::Call &c = *g->calls[w];
    callStarted();
    c.stub->async()->DeploymentEvidence(&c.ctx, &c.req, &c.resp, [this, g, w](grpc::Status s) {
      json &entry = g->workers[w];
      const Gathering::Call &call = *g->calls[w];
      if (!s.ok()) {
        entry["error"] = "DeploymentEvidence: " + protocol::fromGrpcStatus(s).toString();
      } else {
        json doc = json::parse(call.resp.json(), nullptr, /*allow_exceptions=*/false);
        if (doc.is_object())
          entry["evidence"] = std::move(doc);
        else
          entry["error"] = "the worker's evidence is not a JSON object";
      }
      bool last;
      {
        std::lock_guard lock(g->mu);
        last = --g->pending == 0;
      }
      if (last)
        g->finish();
      callEnded();
    });
  }
}

std::string Gateway::Impl::evidenceJson() {
  auto promise = std::make_shared<std::promise<std::string>>();
  std::future<std::string> text = promise->get_future();
  gatherEvidence([promise](std::string doc) { promise->set_value(std::move(doc)); });
  return text.get();
}

grpc::ServerUnaryReactor *
EvidenceFrontend::DeploymentEvidence(grpc::CallbackServerContext *ctx,
                                     const reactant_evidence::DeploymentEvidenceRequest *,
                                     reactant_evidence::DeploymentEvidenceResponse *resp) {
  grpc::ServerUnaryReactor *reactor = ctx->DefaultReactor();
  gw_.gatherEvidence([reactor, resp](std::string doc) {
    resp->set_format(std::string(protocol::kGatewayEvidenceFormat));
    resp->set_json(std::move(doc));
    reactor->Finish(grpc::Status::OK);
  });
  return reactor;
}

} // namespace rs::gateway
