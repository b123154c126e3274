//===- test/gateway/fleet.cc - Workers in-process behind a gateway ----------===//
#include "fleet.h"

#include "common/test_worker.h"
#include "config/node_config.h"
#include "protocol/http_codec.h"

#include <grpcpp/grpcpp.h>
#include <httplib.h>

#include <cstring>
#include <sstream>

namespace rs::gateway::testing {

Result<std::unique_ptr<Fleet>> Fleet::start(int n, const std::vector<std::string> &models,
                                            const std::string &runtime_keys,
                                            const std::string &global_yaml,
                                            const std::string &model_repo) {
  std::string include;
  for (const std::string &m : models)
    include += (include.empty() ? "" : ", ") + m;
  std::string yaml = "model_repo: \"" + model_repo +
                     "\"\nbase_port: 19001\nmetrics_base_port: 19101\nglobal:\n"
                     "  models_include: [" +
                     include +
                     "]\n"
                     "  endpoints: {host: 127.0.0.1, http_port: 0}\n"
                     "  runtime: {executable_cache: false, cpu_threads: 1" +
                     (runtime_keys.empty() ? "" : ", " + runtime_keys) + "}\n" + global_yaml +
                     "workers:\n";
  for (int i = 0; i < n; ++i)
    yaml += "  - {name: w" + std::to_string(i) + "}\n";
  RS_ASSIGN_OR_RETURN(config::NodeConfig node, config::parseNodeFile(yaml, "<fleet>", {}));
  auto fleet = std::unique_ptr<Fleet>(new Fleet());
  for (int i = 0; i < n; ++i) {
    RS_ASSIGN_OR_RETURN(config::WorkerConfig cfg, config::resolveWorker(node, i));
    FleetWorker w;
    w.name = cfg.worker_name;
    RS_ASSIGN_OR_RETURN(w.worker, rs::testing::startWorker(cfg));
    w.gate = std::make_unique<Gate>(w.worker->service(), w.worker->service(), &fleet->arrivals_);
    frontend::GrpcServerOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.shutdown_grace = std::chrono::milliseconds(2000);
    server::Worker *worker = w.worker.get();
    o.evidence = [worker] { return worker->evidenceJson(); }; // the worker's own document
    w.shared_memory = std::make_unique<protocol::SharedMemoryRegistry>();
    o.shared_memory = w.shared_memory.get();
    w.front = std::make_unique<frontend::GrpcServer>(o, *w.gate, *w.gate);
    RS_RETURN_IF_ERROR(w.front->start());
    fleet->workers_.push_back(std::move(w));
  }
  return fleet;
}

Fleet::~Fleet() {
  for (FleetWorker &w : workers_) {
    w.gate->open();
    w.front->shutdown();
    w.worker->shutdown();
  }
}

std::string Fleet::gatewayYaml(const std::string &scheduling_yaml) const {
  std::string endpoints, metrics, names;
  for (const FleetWorker &w : workers_) {
    endpoints += "\"127.0.0.1:" + std::to_string(w.front->port()) + "\", ";
    metrics += "\"127.0.0.1:" + std::to_string(w.worker->metricsPort()) + "\", ";
    names += w.name + ", ";
  }
  auto trimmed = [](std::string s) { return s.substr(0, s.size() - 2); };
  return "listen: {grpc: \"127.0.0.1:0\", http: \"127.0.0.1:0\", metrics: \"127.0.0.1:0\"}\n"
         "endpoints: [" +
         trimmed(endpoints) + "]\nmetrics_endpoints: [" + trimmed(metrics) + "]\nworker_names: [" +
         trimmed(names) + "]\nscheduling:\n" + scheduling_yaml;
}

int64_t Fleet::served(size_t i, const std::string &model) const {
  const std::string text = httpGet(workers_[i].worker->metricsPort(), "/metrics");
  return static_cast<int64_t>(
      sampleValue(text, "worker_requests_total", {{"model", model}, {"status", "OK"}}));
}

std::vector<int64_t> Fleet::servedAll(const std::string &model) const {
  std::vector<int64_t> out;
  for (size_t i = 0; i < workers_.size(); ++i)
    out.push_back(served(i, model));
  return out;
}

Result<std::unique_ptr<TestGateway>> TestGateway::start(const std::string &yaml,
                                                        std::map<std::string, std::string> env) {
  env.emplace("REACTANT_GATEWAY_HEALTH_INTERVAL_SECONDS", "0.2");
  RS_ASSIGN_OR_RETURN(config::GatewayConfig cfg,
                      config::parseGatewayConfig(yaml, "<test gateway.yml>", env));
  auto t = std::unique_ptr<TestGateway>(new TestGateway());
  GatewayOptions o;
  o.config = std::move(cfg);
  t->gateway_ = std::make_unique<Gateway>(std::move(o));
  RS_RETURN_IF_ERROR(t->gateway_->start());
  // Every worker ready (the startup wait only needs one). The fleet's workers serve before
  // the gateway starts, so the probe round run here finds each of them ready; a second
  // round covers a connection the first one had to set up.
  const Router &router = t->gateway_->router();
  auto allReady = [&] {
    for (size_t w = 0; w < router.workerNames().size(); ++w)
      if (!router.workerReady(w))
        return false;
    return true;
  };
  t->gateway_->probeNow();
  if (!allReady())
    t->gateway_->probeNow();
  if (!allReady())
    return unavailable() << "test gateway: a worker is not ready after two probe rounds";
  t->channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(t->gateway_->grpcPort()),
                                    grpc::InsecureChannelCredentials());
  t->stub_ = inference::GRPCInferenceService::NewStub(t->channel_);
  t->control_ = reactant_control::GatewayControlService::NewStub(t->channel_);
  return t;
}

TestGateway::~TestGateway() {
  if (gateway_)
    gateway_->shutdown(std::chrono::seconds(5));
}

inference::ModelInferRequest makeRequest(const std::string &model, int64_t rows, float fill) {
  inference::ModelInferRequest req;
  req.set_model_name(model);
  auto *in = req.add_inputs();
  in->set_datatype("FP32");
  int64_t per_row = 4;
  in->add_shape(rows);
  if (model == "digits_cnn") {
    in->set_name("image");
    for (int64_t d : {8, 8, 1})
      in->add_shape(d);
    per_row = 64;
  } else {
    in->set_name("features");
    in->add_shape(4);
  }
  std::vector<float> values(static_cast<size_t>(rows * per_row));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = fill * static_cast<float>(1 + i % 7) / 7.0f;
  req.add_raw_input_contents(
      std::string(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(float)));
  return req;
}

Result<inference::ModelInferResponse> TestGateway::infer(const std::string &model, int64_t rows,
                                                         float fill) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  inference::ModelInferResponse resp;
  grpc::Status s = stub_->ModelInfer(&ctx, makeRequest(model, rows, fill), &resp);
  if (!s.ok())
    return Status(static_cast<StatusCode>(s.error_code()), s.error_message());
  return resp;
}

std::future<Result<inference::ModelInferResponse>>
TestGateway::inferAsync(const std::string &model, int64_t rows, float fill) {
  return std::async(std::launch::async,
                    [this, model, rows, fill] { return infer(model, rows, fill); });
}

std::string TestGateway::adminGet(const std::string &path, int *status) {
  return httpGet(gateway_->metricsPort(), path, status);
}

Result<protocol::InferResponse> inferReply(const httplib::Result &reply) {
  if (!reply)
    return unavailable() << "no HTTP reply: " << httplib::to_string(reply.error());
  if (reply->status != 200)
    return internalError() << "HTTP " << reply->status << ": " << reply->body;
  std::optional<std::string_view> length;
  const std::string header = reply->get_header_value(protocol::kInferenceHeaderContentLength);
  if (reply->has_header(protocol::kInferenceHeaderContentLength))
    length = header;
  return protocol::decodeHttpInferResponse(reply->body, length);
}

std::string httpGet(int port, const std::string &path, int *status) {
  httplib::Client cli("127.0.0.1", port);
  cli.set_read_timeout(30, 0);
  httplib::Result r = cli.Get(path);
  if (status)
    *status = r ? r->status : 0;
  return r ? r->body : "";
}

double sampleValue(const std::string &text, const std::string &name,
                   const std::map<std::string, std::string> &labels) {
  double sum = 0;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || !line.starts_with(name))
      continue;
    const char after = line.size() > name.size() ? line[name.size()] : '\0';
    if (after != '{' && after != ' ')
      continue;
    bool match = true;
    for (const auto &[k, v] : labels)
      match = match && line.find(k + "=\"" + v + "\"") != std::string::npos;
    if (!match)
      continue;
    sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

} // namespace rs::gateway::testing
