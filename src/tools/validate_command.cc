//===- tools/validate_command.cc - `reactant-server validate record|check` -===//
//
// `validate record`: the request set sent to a running server and written as a
// validation record with the deployment's identity and every output's hash; the client
// setup both subcommands share; and the CLI wiring of `validate record` and
// `validate check` (whose run is validate_check.cc).
//
//===----------------------------------------------------------------------===//
#include "tools/validate_command.h"

#include "client/infer_io.h"
#include "support/digest.h"
#include "tools/validate_impl.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

namespace rs::tools {

namespace fs = std::filesystem;
using nlohmann::json;

namespace detail {

std::string protocolName(client::WireProtocol p) {
  return p == client::WireProtocol::kGrpc ? "grpc" : "http";
}

Result<client::WireProtocol> parseProtocol(const std::string &name) {
  if (name == "grpc")
    return client::WireProtocol::kGrpc;
  if (name == "http")
    return client::WireProtocol::kHttp;
  return invalidArgument() << "protocol must be grpc or http, got '" << name << "'";
}

std::string serverText(const client::KServeClientOptions &c) {
  Result<HostPort> hp = client::parseServerUrl(c.url, c.protocol);
  if (!hp.isOk())
    return c.url;
  return protocolName(c.protocol) + "://" + hp->host + ":" + std::to_string(hp->port);
}

Result<std::unique_ptr<client::KServeClient>> makeClient(client::KServeClientOptions options) {
  if (options.protocol == client::WireProtocol::kHttp)
    options.binary = true; // exact bytes both ways
  return client::KServeClient::create(options);
}

} // namespace detail

using namespace detail;

//===----------------------------------------------------------------------===//
// validate record
//===----------------------------------------------------------------------===//

namespace {

Result<json> record(const ValidateRecordOptions &o, std::ostream &out) {
  RS_ASSIGN_OR_RETURN(std::vector<PlannedRequest> planned, planRequests(o.sources));
  RS_ASSIGN_OR_RETURN(std::unique_ptr<client::KServeClient> client, makeClient(o.client));
  RS_ASSIGN_OR_RETURN(json identity, fetchEvidence(o.client));
  const fs::path record_dir = fs::absolute(o.record_path).parent_path();
  if (!o.outputs_dir.empty()) {
    std::error_code ec;
    fs::create_directories(o.outputs_dir, ec);
    if (ec)
      return internalError() << o.outputs_dir << ": cannot create: " << ec.message();
  }
  json requests = json::array();
  size_t outputs = 0;
  for (size_t i = 0; i < planned.size(); ++i) {
    const PlannedRequest &p = planned[i];
    RS_ASSIGN_OR_RETURN(std::string file_sha, sha256OfFile(p.file));
    RS_ASSIGN_OR_RETURN(protocol::InferRequest request, loadRequest(p, identity));
    Result<protocol::InferResponse> response = client->infer(request);
    if (!response.isOk())
      return response.status().withPrefix("request " + p.name);
    json entry = {{"name", p.name}, {"model", p.model},        {"kind", p.kind},
                  {"file", p.file}, {"file_sha256", file_sha}, {"outputs", outputsJson(*response)}};
    outputs += response->outputs.size();
    if (!o.outputs_dir.empty()) {
      char stem[32];
      std::snprintf(stem, sizeof(stem), "%04zu.safetensors", i + 1);
      const fs::path path = fs::absolute(fs::path(o.outputs_dir) / stem).lexically_normal();
      RS_RETURN_IF_ERROR(client::saveInferOutputs(path.string(), *response));
      const fs::path rel = path.lexically_relative(record_dir);
      const bool inside = !rel.empty() && rel.begin()->string() != "..";
      entry["outputs_file"] = inside ? rel.string() : path.string();
    }
    requests.push_back(std::move(entry));
  }
  RS_ASSIGN_OR_RETURN(json after, fetchEvidence(o.client));
  std::vector<IdentityChange> moved = compareIdentity(identity, after);
  if (!moved.empty()) {
    std::string facts;
    for (const IdentityChange &c : moved)
      facts += "\n" + changeLine(c);
    return Status(StatusCode::kAborted, "the deployment changed while recording:" + facts);
  }
  json rec = {
      {"format", kRecordFormat},
      {"recorded_at", protocol::utcNow()},
      {"server", {{"protocol", protocolName(o.client.protocol)}, {"url", serverText(o.client)}}},
      {"identity", std::move(identity)},
      {"requests", std::move(requests)}};
  out << "recorded " << planned.size() << " requests (" << outputs << " output tensors) against "
      << serverText(o.client) << "\n"
      << identitySummary(rec["identity"]);
  return rec;
}

} // namespace

int runValidateRecord(const ValidateRecordOptions &options, std::ostream &out, std::ostream &err) {
  Result<json> rec = record(options, out);
  if (!rec.isOk()) {
    err << "validate record: " << rec.status().toString() << "\n";
    return kExitError;
  }
  if (Status s = writeFileAtomically(options.record_path, dumpJson(*rec, 2) + "\n"); !s.isOk()) {
    err << "validate record: " << s.toString() << "\n";
    return kExitError;
  }
  out << "wrote " << options.record_path << "\n";
  return kExitOk;
}

} // namespace rs::tools

namespace rs::tools {
namespace {

struct RecordArgs {
  ValidateRecordOptions options;
  std::string protocol = "grpc";
  std::string model;
  std::vector<std::string> requests;
  std::vector<std::string> golden;
};

int runRecordArgs(RecordArgs &a) {
  Result<client::WireProtocol> protocol = parseProtocol(a.protocol);
  if (!protocol.isOk()) {
    std::cerr << "validate record: " << protocol.status().message() << "\n";
    return kExitError;
  }
  a.options.client.protocol = *protocol;
  a.options.sources.clear();
  for (const auto &[specs, golden] : {std::pair(&a.requests, false), std::pair(&a.golden, true)}) {
    for (const std::string &spec : *specs) {
      Result<RequestSource> src = parseRequestSource(spec, a.model, golden);
      if (!src.isOk()) {
        std::cerr << "validate record: " << src.status().message() << "\n";
        return kExitError;
      }
      a.options.sources.push_back(*src);
    }
  }
  return runValidateRecord(a.options, std::cout, std::cerr);
}

} // namespace

void addValidateCommand(CLI::App &app) {
  CLI::App *validate = app.add_subcommand(
      "validate", "Record a deployment's outputs and identity, and check it against a record");
  validate->require_subcommand(1);

  auto rec = std::make_shared<RecordArgs>();
  CLI::App *r = validate->add_subcommand(
      "record", "Send a request set to a running server and write a validation record");
  r->add_option("-o,--out", rec->options.record_path, "Record file to write (JSON)")->required();
  r->add_option("--model", rec->model, "Model of --requests/--golden entries without MODEL=");
  r->add_option("--requests", rec->requests,
                "[MODEL=]PATH: a .safetensors or .json request file, or a directory of them");
  r->add_option("--golden", rec->golden,
                "[MODEL=]PATH: a fixture golden .safetensors file (its input tensors are sent), "
                "or a directory of them");
  r->add_option("--outputs-dir", rec->options.outputs_dir,
                "Also keep every request's outputs here (one .safetensors per request)");
  r->add_option("--protocol", rec->protocol, "grpc (default) or http")
      ->check(CLI::IsMember({"grpc", "http"}));
  r->add_option("--url", rec->options.client.url,
                "Server host:port (default 127.0.0.1:8001 for grpc, 127.0.0.1:8000 for http)");
  r->add_option("--timeout-ms", rec->options.client.timeout_ms, "Deadline per call in ms");
  r->callback([rec] { std::exit(runRecordArgs(*rec)); });

  auto chk = std::make_shared<ValidateCheckOptions>();
  CLI::App *c = validate->add_subcommand(
      "check", "Re-send a record's requests, compare outputs and identity, print a verdict");
  c->add_option("record", chk->record_path, "Validation record (JSON)")->required();
  c->add_option("--protocol", chk->protocol, "grpc or http (default: the record's)")
      ->check(CLI::IsMember({"grpc", "http"}));
  c->add_option("--url", chk->url, "Server host:port (default: the record's)");
  c->add_option("--report", chk->report_path, "Also write the result as JSON here");
  c->add_option("--timeout-ms", chk->timeout_ms, "Deadline per call in ms");
  c->callback([chk] { std::exit(runValidateCheck(*chk, std::cout, std::cerr)); });
}

} // namespace rs::tools
