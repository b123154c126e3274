//===- client/load_generator.cc - Load of valid and malformed requests ----===//
//
// runLoad(): the options checked, the model's metadata read over gRPC or HTTP, the
// payloads and request kinds made, the client threads (load_client.cc) and the RSS
// sampler run, and their counts folded into the report; the report's text.
//
//===----------------------------------------------------------------------===//
#include "client/load_generator.h"

#include "client/load_generator_impl.h"
#include "protocol/status_mapping.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <thread>

namespace rs::client {
namespace {

using namespace loadgen;

Result<Model> modelFromGrpc(const HostPort &hp, const std::string &name) {
  auto stub = inference::GRPCInferenceService::NewStub(makeLoadChannel(hp));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  inference::ModelMetadataRequest req;
  req.set_name(name);
  inference::ModelMetadataResponse resp;
  grpc::Status s = stub->ModelMetadata(&ctx, req, &resp);
  if (!s.ok())
    return protocol::fromGrpcStatus(s).withPrefix("model metadata of '" + name + "'");
  Model m;
  m.name = name;
  auto add = [](const auto &t, std::vector<protocol::TensorSpec> &out) -> Status {
    std::optional<DType> dt = dtypeFromWireName(t.datatype());
    if (!dt)
      return invalidArgument() << "tensor '" << t.name() << "': unknown datatype '" << t.datatype()
                               << "'";
    out.push_back({t.name(), *dt, Shape(t.shape().begin(), t.shape().end())});
    return Status::ok();
  };
  for (const auto &t : resp.inputs())
    RS_RETURN_IF_ERROR(add(t, m.inputs));
  for (const auto &t : resp.outputs())
    RS_RETURN_IF_ERROR(add(t, m.outputs));
  return m;
}

Result<Model> modelFromHttp(const HostPort &hp, const std::string &name) {
  auto c = makeHttp(hp, 10000);
  auto r = c->Get("/v2/models/" + name);
  if (!r)
    return unavailable() << "model metadata of '" << name << "': " << httplib::to_string(r.error());
  if (r->status != 200)
    return protocol::fromHttpError(r->status, r->body)
        .withPrefix("model metadata of '" + name + "'");
  nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return invalidArgument() << "model metadata of '" << name << "' is not a JSON object";
  Model m;
  m.name = name;
  for (const char *key : {"inputs", "outputs"}) {
    auto &out = std::string(key) == "inputs" ? m.inputs : m.outputs;
    for (const auto &t : j.value(key, nlohmann::json::array())) {
      std::optional<DType> dt = dtypeFromWireName(t.value("datatype", ""));
      if (!dt)
        return invalidArgument() << "model metadata: bad datatype in " << t.dump();
      out.push_back({t.value("name", ""), *dt, t.value("shape", Shape{})});
    }
  }
  return m;
}

/// Narrows `model.outputs` to `names`, in that order (no change when `names` is empty).
/// InvalidArgument for a name the model has no output of, or one given twice.
Status keepRequestedOutputs(const std::vector<std::string> &names, Model &model) {
  if (names.empty())
    return Status::ok();
  std::vector<protocol::TensorSpec> kept;
  for (const std::string &name : names) {
    if (name.empty())
      return invalidArgument() << "loadgen: an output name is empty (give the names of "
                               << "outputs of model '" << model.name << "')";
    auto it = std::find_if(model.outputs.begin(), model.outputs.end(),
                           [&](const protocol::TensorSpec &o) { return o.name == name; });
    if (it == model.outputs.end()) {
      std::string known;
      for (const protocol::TensorSpec &o : model.outputs)
        known += (known.empty() ? "" : ", ") + o.name;
      return invalidArgument() << "loadgen: model '" << model.name << "' has no output '" << name
                               << "' (its outputs: " << known << ")";
    }
    for (const protocol::TensorSpec &k : kept)
      if (k.name == name)
        return invalidArgument() << "loadgen: output '" << name << "' requested twice";
    kept.push_back(*it);
  }
  model.outputs = std::move(kept);
  return Status::ok();
}

/// Samples the server's resident memory until `run.stop`.
void sampleRss(Run &run, const HostPort &hp, std::vector<std::pair<double, int64_t>> &out) {
  auto c = makeHttp(hp, 5000);
  auto sample = [&] {
    auto r = c->Get("/metrics");
    if (!r || r->status != 200)
      return;
    std::optional<double> v = scrapeValue(r->body, "process_resident_memory_bytes");
    if (v)
      out.emplace_back(std::chrono::duration<double>(Clock::now() - run.start).count(),
                       static_cast<int64_t>(*v));
  };
  sample();
  auto next = Clock::now();
  while (!run.stop.load()) {
    next += std::chrono::milliseconds(static_cast<int64_t>(run.options.rss_interval_s * 1000));
    while (!run.stop.load() && Clock::now() < next)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    sample();
  }
}

} // namespace

double quantileOf(const std::vector<double> &sorted, double q) {
  if (sorted.empty())
    return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

std::optional<double> scrapeValue(const std::string &exposition, const std::string &metric) {
  std::istringstream in(exposition);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(metric, 0) != 0 || line.size() <= metric.size())
      continue;
    const char next = line[metric.size()];
    if (next != ' ' && next != '{')
      continue;
    size_t value_at = next == '{' ? line.find("} ", metric.size()) : metric.size();
    if (value_at == std::string::npos)
      continue;
    value_at = line.find_first_not_of(" }", value_at);
    if (value_at == std::string::npos)
      continue;
    try {
      return std::stod(line.substr(value_at));
    } catch (...) {
      continue;
    }
  }
  return std::nullopt;
}

Result<LoadgenReport> runLoad(const LoadgenOptions &options) {
  if (options.model.empty())
    return invalidArgument() << "loadgen: --model is required";
  if (options.concurrency < 1)
    return invalidArgument() << "loadgen: concurrency must be at least 1";
  if (options.duration_s <= 0 && options.requests <= 0)
    return invalidArgument() << "loadgen: give a duration or a request count";
  if (options.malformed_fraction < 0 || options.malformed_fraction > 1)
    return invalidArgument() << "loadgen: the malformed share must be in [0, 1]";
  if (options.rows < 1 || options.payloads < 1)
    return invalidArgument() << "loadgen: rows and payloads must be at least 1";
  Run run(options);
  run.use_grpc = options.protocol == "grpc" || options.protocol == "both";
  run.use_http = options.protocol == "http" || options.protocol == "both";
  if (!run.use_grpc && !run.use_http)
    return invalidArgument() << "loadgen: protocol must be grpc, http or both, got '"
                             << options.protocol << "'";
  if (options.busy_poll && run.use_http)
    return invalidArgument() << "loadgen: busy polling is for gRPC only (protocol '"
                             << options.protocol << "')";
  if (const unsigned cores =
          options.cores > 0 ? options.cores : std::max(1u, std::thread::hardware_concurrency());
      options.busy_poll && static_cast<unsigned>(options.concurrency) >= cores)
    return invalidArgument() << "loadgen: busy polling spins a core per client; "
                             << options.concurrency << " clients on " << cores
                             << " cores leave none for the server (use fewer than " << cores
                             << " clients, or no --busy-poll)";
  if (run.use_grpc) {
    RS_ASSIGN_OR_RETURN(run.grpc_hp, parseServerUrl(options.grpc_url, WireProtocol::kGrpc));
  }
  if (run.use_http) {
    RS_ASSIGN_OR_RETURN(run.http_hp, parseServerUrl(options.http_url, WireProtocol::kHttp));
  }
  RS_ASSIGN_OR_RETURN(run.model, run.use_grpc ? modelFromGrpc(run.grpc_hp, options.model)
                                              : modelFromHttp(run.http_hp, options.model));
  if (run.model.inputs.empty() || run.model.outputs.empty())
    return invalidArgument() << "loadgen: model '" << options.model
                             << "' has no inputs or no outputs";
  RS_RETURN_IF_ERROR(keepRequestedOutputs(options.outputs, run.model));
  std::mt19937_64 rng(options.seed);
  for (int i = 0; i < options.payloads; ++i) {
    RS_ASSIGN_OR_RETURN(Payload p, makePayload(run.model, options.rows, rng));
    run.payloads.push_back(std::move(p));
  }
  run.refs.resize(run.payloads.size());
  for (KindSpec &k : allKinds(run.use_grpc, run.use_http, options.shared_memory))
    (k.malformed ? run.malformed : run.valid).push_back(std::move(k));

  std::vector<std::unique_ptr<ClientThread>> clients;
  for (int i = 0; i < options.concurrency; ++i) {
    clients.push_back(std::make_unique<ClientThread>(run, i));
    RS_RETURN_IF_ERROR(clients.back()->setup());
  }
  LoadgenReport report;
  run.start = Clock::now();
  std::thread sampler;
  if (!options.metrics_url.empty()) {
    RS_ASSIGN_OR_RETURN(HostPort metrics_hp,
                        parseServerUrl(options.metrics_url, WireProtocol::kHttp));
    sampler = std::thread([&run, metrics_hp, &report] { sampleRss(run, metrics_hp, report.rss); });
  }
  std::vector<std::thread> threads;
  for (auto &c : clients)
    threads.emplace_back([&c] { c->loop(); });
  for (std::thread &t : threads)
    t.join();
  report.seconds = std::chrono::duration<double>(Clock::now() - run.start).count();
  run.stop = true;
  if (sampler.joinable())
    sampler.join();
  clients.clear(); // unregisters and unlinks shared memory

  report.kinds = std::move(run.kinds);
  report.requested_outputs = options.outputs;
  report.busy_poll = options.busy_poll;
  for (const auto &[name, k] : report.kinds) {
    report.requests += k.sent;
    if (!k.malformed)
      report.valid += k.sent;
    report.unexpected += k.lost + k.wrong;
    for (const auto &[code, n] : k.codes)
      if (code != "OK")
        report.errors += n;
  }
  report.throughput =
      report.seconds > 0 ? static_cast<double>(report.requests) / report.seconds : 0;
  std::sort(run.latencies_ms.begin(), run.latencies_ms.end());
  report.valid_ok = run.latencies_ms.size();
  report.p50_ms = quantileOf(run.latencies_ms, 0.5);
  report.p90_ms = quantileOf(run.latencies_ms, 0.9);
  report.p99_ms = quantileOf(run.latencies_ms, 0.99);
  report.max_ms = run.latencies_ms.empty() ? 0 : run.latencies_ms.back();
  report.rss_trend = rssTrend(report.rss);
  return report;
}

std::string LoadgenReport::text() const {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  os << "requests " << requests << " in " << seconds << " s: " << throughput << " req/s\n";
  os.precision(3);
  // The percentiles are over the valid requests answered OK (the others have no latency).
  os << "valid " << valid << " ok " << valid_ok << " latency ms: p50 " << p50_ms << " p90 "
     << p90_ms << " p99 " << p99_ms << " max " << max_ms << "\n";
  os << "errors " << errors << " (answers other than OK, malformed included), unexpected "
     << unexpected << "\n";
  os << "client " << (busy_poll ? "busy-polling" : "blocking") << ", outputs ";
  for (size_t i = 0; i < requested_outputs.size(); ++i)
    os << (i ? "," : "") << requested_outputs[i];
  os << (requested_outputs.empty() ? "all" : "") << "\n";
  // Names up to 36 characters ("http binary_size_overflow (bad)") keep the columns aligned.
  char header[160];
  std::snprintf(header, sizeof header, "%-36s %9s %8s %8s %8s %8s %8s %8s  codes\n", "kind", "sent",
                "ok", "unavail", "shed", "wrong", "lost", "retried");
  os << header;
  for (const auto &[name, k] : kinds) {
    char line[200];
    std::snprintf(
        line, sizeof line, "%-36s %9llu %8llu %8llu %8llu %8llu %8llu %8llu  ",
        (name + (k.malformed ? " (bad)" : "")).c_str(), static_cast<unsigned long long>(k.sent),
        static_cast<unsigned long long>(k.ok), static_cast<unsigned long long>(k.unavailable),
        static_cast<unsigned long long>(k.shed), static_cast<unsigned long long>(k.wrong),
        static_cast<unsigned long long>(k.lost), static_cast<unsigned long long>(k.retried));
    os << line;
    bool first = true;
    for (const auto &[code, n] : k.codes) {
      os << (first ? "" : ",") << code << "=" << n;
      first = false;
    }
    os << "\n";
    if (!k.first_unexpected.empty())
      os << "    first unexpected: " << k.first_unexpected.substr(0, 300) << "\n";
  }
  if (!rss.empty()) {
    os << "server rss MiB:";
    for (const auto &[t, bytes] : rss) {
      os.precision(0);
      os << " " << t << "s=";
      os.precision(1);
      os << static_cast<double>(bytes) / (1 << 20);
    }
    os << "\n";
    os.precision(2);
    os << "server rss per " << rssTrendText(rss_trend) << "\n";
    if (rss_trend.growth) {
      os << "rss growth after the first minute: " << *rss_trend.growth * 100
         << "% (lowest sample of the last 60 s over minute 1's lowest)\n";
      os << "rss highest sample after the first minute: " << *rss_trend.peak_over_floor * 100
         << "% over minute 1's lowest\n";
    }
  }
  return os.str();
}

} // namespace rs::client
