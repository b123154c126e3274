//===- tools/validate_identity.cc - A deployment's identity for validate --===//
//
// Fetching the deployment evidence over gRPC or HTTP, comparing a recorded identity with
// the current one (a worker's document, or each worker's behind a gateway), the lines
// that name the changes and summarise an identity, and the JSON helpers they use.
//
//===----------------------------------------------------------------------===//
#include "tools/validate_command.h"

#include "client/grpc_channel.h"
#include "protocol/proto/reactant_evidence_v1.grpc.pb.h"
#include "protocol/status_mapping.h"
#include "support/net.h"
#include "tools/validate_impl.h"

#include <grpcpp/grpcpp.h>
#include <httplib.h>

#include <chrono>
#include <ctime>

namespace rs::tools {

using nlohmann::json;

namespace {

constexpr int64_t kNoTimeoutHttpSeconds = 24 * 3600;

} // namespace

namespace detail {

/// JSON text safe for any string (invalid UTF-8 replaced).
std::string dumpJson(const json &j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

Result<json> parseObject(std::string_view text, std::string_view what) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object())
    return invalidArgument() << what << ": expected a JSON object";
  return doc;
}

/// A string member of `j`, or "".
std::string str(const json &j, const char *key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string changeLine(const IdentityChange &c) {
  std::string line = "  [" + c.change.category + "] ";
  if (!c.worker.empty())
    line += "worker " + c.worker + ": ";
  return line + c.change.path + ": " + c.change.recorded + " -> " + c.change.current;
}

std::string identitySummary(const json &identity) {
  const json *doc = &identity;
  if (identity.contains("workers") && identity["workers"].is_array() &&
      !identity["workers"].empty() && identity["workers"][0].contains("evidence"))
    doc = &identity["workers"][0]["evidence"];
  const json build = doc->value("build", json::object());
  const json backend = doc->value("backend", json::object());
  const json config = doc->value("config", json::object());
  std::string text = "identity: reactant-server " + str(build, "version") + " commit " +
                     str(build, "commit") + ", " + str(backend, "platform") + " device '" +
                     str(backend, "device_kind") + "'";
  if (!str(backend, "compute_capability").empty())
    text += " (compute capability " + str(backend, "compute_capability") + ")";
  text += ", numerics " + str(config, "runtime.numerics") + ", profile " +
          str(config, "runtime.profile") + "\n";
  const json models = doc->value("models", json::object());
  for (const auto &[name, m] : models.items()) {
    if (str(m, "state") != "ready") {
      text += "  model " + name + ": " + str(m, "state") + "\n";
      continue;
    }
    text += "  model " + name + ": batch sizes " + dumpJson(m.value("batch_sizes", json())) +
            ", weights sha256 " + str(m, "weights_sha256").substr(0, 16) + "..., numerics " +
            str(m, "numerics") + "\n";
  }
  return text;
}

} // namespace detail

using namespace detail;

//===----------------------------------------------------------------------===//
// Public helpers
//===----------------------------------------------------------------------===//

Result<json> fetchEvidence(const client::KServeClientOptions &client) {
  RS_ASSIGN_OR_RETURN(HostPort hp, client::parseServerUrl(client.url, client.protocol));
  const std::string where = serverText(client);
  if (client.protocol == client::WireProtocol::kHttp) {
    httplib::Client cli(hp.host, hp.port);
    const time_t seconds = client.timeout_ms > 0
                               ? static_cast<time_t>((client.timeout_ms + 999) / 1000)
                               : static_cast<time_t>(kNoTimeoutHttpSeconds);
    cli.set_connection_timeout(seconds);
    cli.set_read_timeout(seconds);
    httplib::Result r = cli.Get("/v2/evidence");
    if (!r)
      return unavailable() << "cannot reach " << where << ": " << httplib::to_string(r.error());
    if (r->status != 200)
      return protocol::fromHttpError(r->status, r->body).withPrefix(where + " GET /v2/evidence");
    return parseObject(r->body, where + " GET /v2/evidence");
  }
  client::ChannelOptions channel;
  channel.max_message_bytes = client.max_message_bytes;
  auto stub =
      reactant_evidence::EvidenceService::NewStub(client::makeChannel(formatHostPort(hp), channel));
  grpc::ClientContext ctx;
  if (client.timeout_ms > 0)
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::milliseconds(client.timeout_ms));
  reactant_evidence::DeploymentEvidenceResponse resp;
  grpc::Status s = stub->DeploymentEvidence(&ctx, {}, &resp);
  if (!s.ok())
    return protocol::fromGrpcStatus(s).withPrefix(where + " DeploymentEvidence");
  return parseObject(resp.json(), where + " DeploymentEvidence");
}

std::vector<IdentityChange> compareIdentity(const json &recorded, const json &current) {
  // The recorded reference: a worker's document, or the first worker's behind a gateway.
  auto workersOf = [](const json &doc) {
    std::vector<std::pair<std::string, const json *>> out;
    auto it = doc.find("workers");
    if (it != doc.end() && it->is_array()) {
      for (const json &w : *it)
        out.emplace_back(str(w, "worker"), w.contains("evidence") ? &w["evidence"] : nullptr);
      return out;
    }
    out.emplace_back("", &doc);
    return out;
  };
  const auto recorded_workers = workersOf(recorded);
  const json empty = json::object();
  const json *reference =
      recorded_workers.empty() || !recorded_workers[0].second ? &empty : recorded_workers[0].second;
  std::vector<IdentityChange> out;
  for (const auto &[worker, doc] : workersOf(current)) {
    for (protocol::FactChange &c : protocol::diffEvidence(*reference, doc ? *doc : empty))
      out.push_back({worker, std::move(c)});
  }
  return out;
}

} // namespace rs::tools
