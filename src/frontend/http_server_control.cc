//===- frontend/http_server_control.cc - REST control routes --------------===//
//
// The HttpServer's routes beyond serving: system shared memory (and Triton's CUDA
// shared-memory routes, empty), the repository extension (index, load, unload) and Triton's
// statistics extension.
//
//===----------------------------------------------------------------------===//
#include "frontend/http_server.h"

#include "frontend/http_server_impl.h"
#include "frontend/peer.h"
#include "protocol/http_codec.h"
#include "protocol/model_config.h"
#include "protocol/shared_memory.h"
#include "protocol/status_mapping.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

namespace rs::frontend {

using namespace http_detail;

namespace {

/// The shared-memory owner of `req`'s peer, or the error for a peer that may not use it.
Result<std::string> sharedMemoryPeer(const HttpRequest &req) {
  std::optional<std::string> owner = localPeerIdentity(req.remote_addr);
  if (!owner)
    return Status(StatusCode::kPermissionDenied,
                  "system shared memory is accepted only from loopback peers, not from " +
                      req.remote_addr);
  return *owner;
}

} // namespace

void HttpServer::addSharedMemoryRoutes() {
  protocol::SharedMemoryRegistry *registry = options_.shared_memory;
  constexpr const char *kRegion = "/v2/systemsharedmemory/region/([^/]+)";
  if (!registry) {
    if (options_.shared_memory_refusal.isOk())
      return;
    auto refuse = [refusal = options_.shared_memory_refusal](
                      const HttpRequest &, HttpResponse &res) { replyError(res, refusal); };
    get("/v2/systemsharedmemory/status", refuse);
    get(std::string(kRegion) + "/status", refuse);
    post(std::string(kRegion) + "/register", refuse);
    post("/v2/systemsharedmemory/unregister", refuse);
    post(std::string(kRegion) + "/unregister", refuse);
    return;
  }
  auto status = [registry](const HttpRequest &req, HttpResponse &res) {
    Result<std::string> owner = sharedMemoryPeer(req);
    if (!owner.isOk())
      return replyError(res, owner.status());
    const std::string name = req.matches.size() > 1 ? req.matches[1].str() : "";
    Result<std::vector<protocol::SharedMemoryRegionInfo>> regions = registry->status(*owner, name);
    if (!regions.isOk())
      return replyError(res, regions.status());
    replyJson(res, 200, protocol::sharedMemoryStatusJson(*regions));
  };
  get("/v2/systemsharedmemory/status", status);
  get(std::string(kRegion) + "/status", status);
  post(std::string(kRegion) + "/register", [registry](const HttpRequest &req, HttpResponse &res) {
    Result<std::string> owner = sharedMemoryPeer(req);
    if (!owner.isOk())
      return replyError(res, owner.status());
    Result<protocol::SharedMemoryRegionInfo> info =
        protocol::parseSharedMemoryRegisterJson(req.matches[1].str(), req.body);
    if (!info.isOk())
      return replyError(res, info.status());
    std::string cause;
    if (Status s = registry->registerRegion(*owner, *info, &cause); !s.isOk()) {
      spdlog::warn("shared memory region refused name={} key={} peer={} cause={}", info->name,
                   info->key, *owner, cause.empty() ? s.message() : cause);
      return replyError(res, s);
    }
    spdlog::info("shared memory region registered name={} key={} offset={} byte_size={} "
                 "peer={}",
                 info->name, info->key, info->offset, info->byte_size, *owner);
    res.status = 200;
  });
  auto unregister = [registry](const HttpRequest &req, HttpResponse &res) {
    Result<std::string> owner = sharedMemoryPeer(req);
    if (!owner.isOk())
      return replyError(res, owner.status());
    registry->unregisterRegion(*owner, req.matches.size() > 1 ? req.matches[1].str() : "");
    res.status = 200;
  };
  post("/v2/systemsharedmemory/unregister", unregister);
  post(std::string(kRegion) + "/unregister", unregister);

  // Triton's CUDA shared-memory routes, which a client of system shared memory also calls
  // (perf_analyzer unregisters both kinds when it starts and ends). No CUDA region can be
  // registered here, so the status is empty (a named region is not found) and unregistering
  // has nothing to do, as on a Triton built without GPUs; registering is refused (400).
  constexpr const char *kCudaRegion = "/v2/cudasharedmemory/region/([^/]+)";
  get("/v2/cudasharedmemory/status",
      [](const HttpRequest &, HttpResponse &res) { replyJson(res, 200, "[]"); });
  get(std::string(kCudaRegion) + "/status", [](const HttpRequest &req, HttpResponse &res) {
    replyError(res, protocol::cudaSharedMemoryNotRegistered(req.matches[1].str()));
  });
  auto cuda_unregister = [](const HttpRequest &, HttpResponse &res) { res.status = 200; };
  post("/v2/cudasharedmemory/unregister", cuda_unregister);
  post(std::string(kCudaRegion) + "/unregister", cuda_unregister);
  post(std::string(kCudaRegion) + "/register", [](const HttpRequest &req, HttpResponse &res) {
    replyError(res, protocol::cudaSharedMemoryRefused(req.matches[1].str()));
  });
}

void HttpServer::addRepositoryRoutes() {
  // KServe repository extension (reference-system.md §5.1 over HTTP; Triton's JSON):
  // index -> [{"name","version","state","reason"}], {"ready": true} lists ready ones only.
  post("/v2/repository/index", [this](const HttpRequest &req, HttpResponse &res) {
    bool ready_only = false;
    if (!req.body.empty()) {
      const nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
      if (!body.is_object() || (body.contains("ready") && !body["ready"].is_boolean()))
        return replyError(res, invalidArgument() << "repository index: the body must be a JSON "
                                                    "object with an optional boolean 'ready'");
      ready_only = body.value("ready", false);
    }
    nlohmann::json out = nlohmann::json::array();
    for (const protocol::ModelIndexEntry &m : control_.listModels()) {
      if (ready_only && !m.ready)
        continue;
      nlohmann::json entry = {{"name", m.name},
                              {"version", protocol::kModelVersion},
                              {"state", m.ready ? "READY" : "UNAVAILABLE"}};
      if (!m.reason.empty())
        entry["reason"] = m.reason;
      out.push_back(std::move(entry));
    }
    replyJson(res, 200, out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  });
  constexpr const char *kRepoModel = "/v2/repository/models/([^/]+)";
  // load and unload: the service's action on the model named in the path; 200 or its error.
  // The body is Triton's optional {"parameters": {...}}; none of its parameters is read, but a
  // body of another shape is refused as Triton refuses it.
  auto modelAction = [this](Status (protocol::ModelControl::*action)(const std::string &),
                            const char *verb) {
    return [this, action, verb](const HttpRequest &req, HttpResponse &res) {
      if (!req.body.empty()) {
        const nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
        if (!body.is_object() || (body.contains("parameters") && !body["parameters"].is_object()))
          return replyError(res, invalidArgument()
                                     << "repository " << verb << " of model '"
                                     << req.matches[1].str()
                                     << "': the body must be a JSON object with an optional "
                                        "object 'parameters'");
      }
      Status s = (control_.*action)(req.matches[1].str());
      if (!s.isOk())
        return replyError(res, s);
      res.status = 200;
    };
  };
  post(std::string(kRepoModel) + "/load",
       modelAction(&protocol::ModelControl::repositoryLoad, "load"));
  post(std::string(kRepoModel) + "/unload",
       modelAction(&protocol::ModelControl::repositoryUnload, "unload"));
}

namespace {

nlohmann::json durationJson(const protocol::DurationStat &d) {
  return {{"count", d.count}, {"ns", d.ns}};
}

/// Triton's statistics extension JSON: {"model_stats": [...]}.
std::string statisticsJson(const std::vector<protocol::ModelStatistics> &stats) {
  nlohmann::json models = nlohmann::json::array();
  for (const protocol::ModelStatistics &m : stats) {
    nlohmann::json batches = nlohmann::json::array();
    for (const protocol::BatchStatistics &b : m.batch_stats)
      batches.push_back({{"batch_size", b.batch_size},
                         {"compute_input", durationJson(b.compute_input)},
                         {"compute_infer", durationJson(b.compute_infer)},
                         {"compute_output", durationJson(b.compute_output)}});
    models.push_back({{"name", m.name},
                      {"version", m.version},
                      {"last_inference", m.last_inference_ms},
                      {"inference_count", m.inference_count},
                      {"execution_count", m.execution_count},
                      {"inference_stats",
                       {{"success", durationJson(m.success)},
                        {"fail", durationJson(m.fail)},
                        {"queue", durationJson(m.queue)},
                        {"compute_input", durationJson(m.compute_input)},
                        {"compute_infer", durationJson(m.compute_infer)},
                        {"compute_output", durationJson(m.compute_output)},
                        {"cache_hit", durationJson({})},
                        {"cache_miss", durationJson({})}}},
                      {"batch_stats", std::move(batches)}});
  }
  return nlohmann::json{{"model_stats", std::move(models)}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace

void HttpServer::addStatisticsRoutes() {
  auto stats = [this](const HttpRequest &req, HttpResponse &res) {
    const std::string name = req.matches.size() > 1 ? req.matches[1].str() : "";
    Result<std::vector<protocol::ModelStatistics>> s = control_.modelStatistics(name);
    if (!s.isOk())
      return replyError(res, s.status());
    if (Status v = protocol::checkModelVersion(name, modelRef(req).version); !v.isOk())
      return replyError(res, v);
    replyJson(res, 200, statisticsJson(*s));
  };
  get("/v2/models/stats", stats);
  get(std::string(kModelPath) + "/stats", stats);
}

} // namespace rs::frontend
