//===- frontend/http_server.cc - KServe V2 HTTP/REST front-end ----------------===//
#include "frontend/http_server.h"

#include "frontend/peer.h"

#include "frontend/http_cors.h"
#include "frontend/http_listener.h"
#include "frontend/http_router.h"
#include "frontend/http_server_impl.h"
#include "protocol/http_codec.h"
#include "protocol/http_raw_request.h"
#include "protocol/json_packed.h"
#include "protocol/model_config.h"
#include "protocol/status_mapping.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <charconv>
#include <future>
#include <optional>

namespace rs::frontend {
namespace http_detail {

void replyJson(HttpResponse &res, int status, std::string body) {
  res.status = status;
  res.body = std::move(body);
  res.set_header("Content-Type", kJson);
}

void replyError(HttpResponse &res, const Status &status) {
  replyJson(res, protocol::toHttpStatus(status.code()), protocol::httpErrorBody(status.message()));
}

protocol::ModelRef modelRef(const HttpRequest &req) {
  protocol::ModelRef ref;
  ref.name = req.matches.size() > 1 ? req.matches[1].str() : "";
  ref.version = req.matches.size() > 2 ? req.matches[2].str() : "";
  return ref;
}

} // namespace http_detail

namespace {

using namespace http_detail;

/// What the request error log and the metrics see for a body that was refused: too large
/// (the 413 reply; counted as RESOURCE_EXHAUSTED, the code gRPC gives an oversized message)
/// or unreadable (400).
Status bodyError(int http_status, const std::string &message) {
  if (http_status == 413)
    return Status(StatusCode::kResourceExhausted, message);
  return invalidArgument() << message;
}

/// The request's "id" for the error log when the request did not decode: read from the
/// body's JSON part (the first Inference-Header-Content-Length bytes, or all of it) if that
/// part parses and holds a string id; empty otherwise.
std::string idOfUndecodedRequest(std::string_view body, const std::optional<std::string> &header) {
  size_t json_bytes = body.size();
  if (header) {
    size_t n = 0;
    const char *end = header->data() + header->size();
    if (std::from_chars(header->data(), end, n).ptr == end && n <= body.size())
      json_bytes = n;
  }
  Result<nlohmann::json> parsed = protocol::parseInferJson(body.substr(0, json_bytes));
  if (!parsed.isOk())
    return "";
  const nlohmann::json &j = *parsed;
  if (j.is_object())
    if (auto it = j.find("id"); it != j.end() && it->is_string())
      return it->get<std::string>();
  return "";
}

} // namespace

void HttpServer::get(const std::string &pattern, RouteHandler handler) {
  router_->get(pattern, std::move(handler));
}

void HttpServer::post(const std::string &pattern, RouteHandler handler) {
  router_->post(pattern, std::move(handler));
}

void HttpServer::report(const HttpRequest &req, const std::string &id, const Status &status,
                        bool in_service) const {
  if (options_.reporter)
    options_.reporter->requestFailed({"http", modelRef(req).name, id}, status, in_service);
}

void HttpServer::handleInfer(const HttpRequest &req, std::string body, HttpResponse &res) {
  std::optional<std::string> header;
  if (req.has_header(protocol::kInferenceHeaderContentLength))
    header = req.get_header_value(protocol::kInferenceHeaderContentLength);
  protocol::DecodeOptions options;
  options.now = protocol::Clock::now();
  options.shared_memory = options_.shared_memory;
  options.max_shared_memory_input_bytes = options_.max_shared_memory_input_bytes;
  options.expected_datatype = protocol::expectedDatatypes(service_, modelRef(req).name);
  options.shared_memory_owner = localPeerIdentity(req.remote_addr).value_or("");
  const std::optional<std::string_view> header_view =
      header ? std::optional<std::string_view>(*header) : std::nullopt;
  Result<protocol::HttpInferRequest> decoded = [&]() -> Result<protocol::HttpInferRequest> {
    if (!protocol::isRawBinaryRequest(header_view))
      return protocol::decodeHttpInferRequest(modelRef(req), body, header_view, options);
    // No JSON header: the model's metadata says what the body is.
    RS_ASSIGN_OR_RETURN(protocol::ModelMetadata metadata,
                        service_.modelMetadata(modelRef(req).name));
    return protocol::decodeRawBinaryInferRequest(modelRef(req), metadata, body);
  }();
  if (!decoded.isOk()) {
    // An unknown model is 404 whatever the body holds (KServe: the path names the resource);
    // a body that decodes reaches the service, which says so itself.
    Status failed = decoded.status();
    if (Result<protocol::ModelReadiness> known = service_.modelReady(modelRef(req).name);
        !known.isOk() && known.status().code() == StatusCode::kNotFound)
      failed = known.status();
    report(req, idOfUndecodedRequest(body, header), failed, false);
    return replyError(res, failed);
  }
  std::string().swap(body); // the tensors hold copies; free the body before running
  decoded->request.received = options.now;
  protocol::OutputEncoding encoding = std::move(decoded->output_encoding);
  // Held until the reply is written: the regions stay usable even if unregistered meanwhile.
  std::vector<protocol::SharedMemoryOutput> shm = std::move(decoded->shared_memory_outputs);
  const std::string id = decoded->request.id;

  // The service writes the shared-memory outputs (deliver) before it counts the answer, so
  // a window that cannot take them counts as the error the client gets. This thread waits
  // for the answer, so the locals the delivery uses outlive it.
  bool delivered = false;
  const std::string prefix =
      "model '" + decoded->request.model_name + "'" + (id.empty() ? "" : ", request '" + id + "'");
  decoded->request.deliver = [&shm, &delivered, &prefix](const protocol::InferResponse &r) {
    delivered = true;
    Status s = protocol::writeSharedMemoryOutputs(shm, r);
    return s.isOk() ? s : s.withPrefix(prefix);
  };
  std::function<Status(const protocol::InferResponse &)> deliver = decoded->request.deliver;
  decoded->request.cancel = req.cancel;
  // The service completes on its own thread; this handler thread waits for it. The promise
  // is shared so the callback never touches a destroyed object.
  auto promise = std::make_shared<std::promise<Result<protocol::InferResponse>>>();
  std::future<Result<protocol::InferResponse>> future = promise->get_future();
  service_.infer(std::move(decoded->request), [promise](Result<protocol::InferResponse> r) {
    promise->set_value(std::move(r));
  });
  Result<protocol::InferResponse> result = future.get();
  if (result.isOk() && !delivered && !isCancelled(req.cancel))
    if (Status s = deliver(*result); !s.isOk())
      result = s;
  if (!result.isOk()) {
    report(req, id, result.status(), true);
    return replyError(res, result.status());
  }

  protocol::HttpBody out = protocol::encodeHttpInferResponse(*result, encoding, shm);
  res.status = 200;
  if (out.json_length) {
    res.set_header(protocol::kInferenceHeaderContentLength, std::to_string(*out.json_length));
    res.set_header("Content-Type", "application/octet-stream");
  } else {
    res.set_header("Content-Type", kJson);
  }
  res.body = std::move(out.body);
}

HttpServer::HttpServer(HttpServerOptions options, protocol::InferenceService &service,
                       protocol::ModelControl &control)
    : options_(std::move(options)), router_(std::make_unique<HttpRouter>()),
      cors_(std::make_unique<HttpCors>(options_.cors_allowed_origins)), service_(service),
      control_(control) {
  HttpListenerOptions lo;
  lo.name = "http";
  lo.host = options_.host;
  lo.port = options_.port;
  lo.threads = options_.threads;
  lo.keep_alive_timeout_s = options_.keep_alive_timeout_s;
  lo.request_head_timeout_s = options_.request_head_timeout_s;
  lo.limits.max_body_bytes = static_cast<uint64_t>(std::max<int64_t>(options_.max_body_bytes, 0));
  lo.tls = options_.tls;
  addRoutes();
  addSharedMemoryRoutes();
  router_->setFallback([this](const HttpRequest &req, HttpResponse &res) {
    replyToTransportError(req, res.status, "", res);
  });
  listener_ = std::make_unique<HttpListener>(
      std::move(lo), [this](HttpRequest &req, HttpResponse &res) { dispatch(req, res); },
      [this](const HttpRequest &req, int status, const std::string &message, HttpResponse &res) {
        replyToTransportError(req, status, message, res);
      });
}

HttpServer::~HttpServer() { shutdown(); }

Status HttpServer::start() { return listener_->start(); }
int HttpServer::port() const { return listener_->port(); }
void HttpServer::shutdown() { listener_->shutdown(); }

void HttpServer::addRoutes() {
  addHealthAndServerRoutes();
  addRepositoryRoutes();
  addStatisticsRoutes(); // before kModelPath, which would take "stats" for a model name
  addModelRoutes();
  addInferRoute();
}

void HttpServer::addHealthAndServerRoutes() {
  get("/v2/health/live", [this](const HttpRequest &, HttpResponse &res) {
    bool live = service_.serverLive();
    replyJson(res, live ? 200 : 400, live ? R"({"live":true})" : R"({"live":false})");
  });
  get("/v2/health/ready", [this](const HttpRequest &, HttpResponse &res) {
    bool ready = service_.serverReady();
    replyJson(res, ready ? 200 : 400, ready ? R"({"ready":true})" : R"({"ready":false})");
  });
  get(R"(/v2/?)", [this](const HttpRequest &, HttpResponse &res) {
    replyJson(res, 200, protocol::serverMetadataJson(service_.serverMetadata()));
  });
  if (options_.evidence) {
    get("/v2/evidence", [this](const HttpRequest &, HttpResponse &res) {
      replyJson(res, 200, options_.evidence());
    });
  }
}

void HttpServer::addModelRoutes() {
  get(kModelPath, [this](const HttpRequest &req, HttpResponse &res) {
    const protocol::ModelRef ref = modelRef(req);
    Result<protocol::ModelMetadata> md = service_.modelMetadata(ref.name);
    if (!md.isOk())
      return replyError(res, md.status());
    if (Status v = protocol::checkModelVersion(ref.name, ref.version); !v.isOk())
      return replyError(res, v);
    replyJson(res, 200, protocol::modelMetadataJson(*md));
  });
  // Triton's model configuration extension (protocol/model_config.h).
  get(std::string(kModelPath) + "/config", [this](const HttpRequest &req, HttpResponse &res) {
    const protocol::ModelRef ref = modelRef(req);
    Result<protocol::ModelConfiguration> config = service_.modelConfig(ref.name);
    if (!config.isOk())
      return replyError(res, config.status());
    if (Status v = protocol::checkModelVersion(ref.name, ref.version); !v.isOk())
      return replyError(res, v);
    replyJson(res, 200, protocol::modelConfigJson(*config));
  });
  get(std::string(kModelPath) + "/ready", [this](const HttpRequest &req, HttpResponse &res) {
    const protocol::ModelRef ref = modelRef(req);
    const std::string &name = ref.name;
    Result<protocol::ModelReadiness> r = service_.modelReady(name);
    if (!r.isOk())
      return replyError(res, r.status());
    if (Status v = protocol::checkModelVersion(name, ref.version); !v.isOk())
      return replyError(res, v);
    nlohmann::json body = {{"name", name}, {"ready", r->ready}};
    if (!r->ready && !r->reason.empty())
      body["reason"] = r->reason;
    replyJson(res, r->ready ? 200 : 400,
              body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  });
}

void HttpServer::addInferRoute() {
  post(std::string(kModelPath) + "/infer",
       [this](HttpRequest &req, HttpResponse &res) { handleInfer(req, std::move(req.body), res); });
}

void HttpServer::dispatch(HttpRequest &req, HttpResponse &res) const {
  std::string preflight_methods;
  if (cors_->isAllowedPreflight(req))
    preflight_methods = router_->allowedMethods(req.path);
  if (!preflight_methods.empty())
    cors_->answerPreflight(req, preflight_methods, res);
  else
    router_->dispatch(req, res);
  cors_->decorate(req, res);
  if (draining_)
    res.set_header("Connection", "close");
}

void HttpServer::replyToTransportError(const HttpRequest &req, int status,
                                       const std::string &message, HttpResponse &res) const {
  std::string text = message;
  if (status == 405) {
    text = "method " + req.method + " not allowed for " + req.path +
           "; allowed: " + res.get_header_value("Allow");
  } else if (status == 404 && text.empty()) {
    text = "no route for " + req.method + " " + req.path;
  } else if (text.empty()) {
    text = "http error " + std::to_string(status);
  }
  // A refused inference body reaches the request log and the metrics like any failure.
  static const std::regex infer_path(std::string(kModelPath) + "/infer");
  std::smatch m;
  if (options_.reporter && (status == 400 || status == 413 || status == 415) &&
      std::regex_match(req.path, m, infer_path))
    options_.reporter->requestFailed({"http", m[1].str(), ""}, bodyError(status, text), false);
  res.status = status;
  replyJson(res, status, protocol::httpErrorBody(text));
  cors_->decorate(req, res);
}

} // namespace rs::frontend
