//===- tools/validate_command.cc - `reactant-server validate record|check` -===//
#include "tools/validate_command.h"

#include "bundle/safetensors.h"
#include "client/grpc_channel.h"
#include "client/infer_io.h"
#include "protocol/proto/reactant_evidence_v1.grpc.pb.h"
#include "protocol/status_mapping.h"
#include "support/digest.h"
#include "support/net.h"
#include "tools/validate_impl.h"

#include <grpcpp/grpcpp.h>
#include <httplib.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>

namespace rs::tools {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int64_t kNoTimeoutHttpSeconds = 24 * 3600;

bool endsWith(const std::string &s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

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

std::string sha256OfTensor(const Tensor &t) {
  return sha256Hex(std::string_view(reinterpret_cast<const char *>(t.data()),
                                    static_cast<size_t>(t.byteSize())));
}

/// A string member of `j`, or "".
std::string str(const json &j, const char *key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

//===----------------------------------------------------------------------===//
// Request sets
//===----------------------------------------------------------------------===//

Result<std::vector<PlannedRequest>> planRequests(const std::vector<RequestSource> &sources) {
  std::vector<PlannedRequest> out;
  std::set<std::string> names;
  for (const RequestSource &src : sources) {
    std::error_code ec;
    std::vector<std::string> files;
    if (fs::is_directory(src.path, ec)) {
      for (const fs::directory_entry &e : fs::directory_iterator(src.path, ec)) {
        const std::string f = e.path().filename().string();
        if (!f.empty() && f[0] != '.' && e.is_regular_file(ec) &&
            (endsWith(f, ".safetensors") || (!src.golden && endsWith(f, ".json"))))
          files.push_back(e.path().string());
      }
      if (ec)
        return notFound() << src.path << ": cannot list the directory: " << ec.message();
      std::sort(files.begin(), files.end());
      if (files.empty())
        return notFound() << src.path << ": no request files (.safetensors"
                          << (src.golden ? "" : " or .json") << ") in the directory";
    } else if (fs::is_regular_file(src.path, ec)) {
      files.push_back(src.path);
    } else {
      return notFound() << src.path << ": no such request file or directory";
    }
    for (const std::string &f : files) {
      PlannedRequest r;
      r.model = src.model;
      r.file = fs::absolute(f).lexically_normal().string();
      r.name = src.model + "/" + fs::path(f).filename().string();
      if (src.golden) {
        if (!endsWith(f, ".safetensors"))
          return invalidArgument() << f << ": a golden file must be .safetensors";
        r.kind = "golden";
      } else if (endsWith(f, ".safetensors")) {
        r.kind = "safetensors";
      } else if (endsWith(f, ".json")) {
        r.kind = "json";
      } else {
        return invalidArgument() << f << ": expected a .safetensors or .json request file";
      }
      if (!names.insert(r.name).second)
        return invalidArgument() << "request set has two requests named '" << r.name
                                 << "'; give the files distinct names";
      out.push_back(std::move(r));
    }
  }
  if (out.empty())
    return invalidArgument() << "the request set is empty (give --requests or --golden)";
  return out;
}

/// The input names of `model` from a worker document (models.<model>.inputs).
Result<std::vector<std::string>> modelInputs(const json &identity, const std::string &model) {
  const json *doc = &identity;
  if (identity.contains("workers") && identity["workers"].is_array() &&
      !identity["workers"].empty())
    doc = &identity["workers"][0]["evidence"]; // behind a gateway: any worker's view
  auto models = doc->find("models");
  if (models == doc->end() || !models->contains(model))
    return notFound() << "model '" << model << "' is not in the deployment's evidence";
  const json &m = (*models)[model];
  if (str(m, "state") != "ready")
    return failedPrecondition() << "model '" << model << "' is not ready: " << str(m, "reason");
  std::vector<std::string> names;
  for (const json &spec : m.value("inputs", json::array()))
    names.push_back(str(spec, "name"));
  return names;
}

Result<protocol::InferRequest> loadRequest(const PlannedRequest &r, const json &identity) {
  if (r.kind != "golden")
    return client::loadInferRequest(r.file, r.model);
  RS_ASSIGN_OR_RETURN(std::vector<std::string> inputs, modelInputs(identity, r.model));
  RS_ASSIGN_OR_RETURN(bundle::SafetensorsFile file, bundle::SafetensorsFile::open(r.file));
  protocol::InferRequest request;
  request.model_name = r.model;
  for (const std::string &name : inputs) {
    if (!file.contains(name))
      return invalidArgument() << r.file << ": golden file has no tensor '" << name
                               << "' (an input of model '" << r.model << "')";
    RS_ASSIGN_OR_RETURN(Tensor t, file.tensor(name));
    request.inputs.push_back({name, std::move(t)});
  }
  return request;
}

json outputsJson(const protocol::InferResponse &response) {
  json out = json::array();
  for (const protocol::NamedTensor &o : response.outputs)
    out.push_back({{"name", o.name},
                   {"datatype", dtypeWireName(o.tensor.dtype())},
                   {"shape", o.tensor.shape()},
                   {"sha256", sha256OfTensor(o.tensor)}});
  return out;
}

Result<std::unique_ptr<client::KServeClient>> makeClient(client::KServeClientOptions options) {
  if (options.protocol == client::WireProtocol::kHttp)
    options.binary = true; // exact bytes both ways
  return client::KServeClient::create(options);
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

Result<RequestSource> parseRequestSource(const std::string &spec, const std::string &default_model,
                                         bool golden) {
  RequestSource src;
  src.golden = golden;
  src.path = spec;
  src.model = default_model;
  if (size_t eq = spec.find('=');
      eq != std::string::npos && eq > 0 && spec.substr(0, eq).find('/') == std::string::npos) {
    src.model = spec.substr(0, eq);
    src.path = spec.substr(eq + 1);
  }
  if (src.model.empty())
    return invalidArgument() << "request source '" << spec
                             << "' names no model: write MODEL=PATH or give --model";
  if (src.path.empty())
    return invalidArgument() << "request source '" << spec << "' has no path";
  return src;
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
