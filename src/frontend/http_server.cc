//===- frontend/http_server.cc - KServe V2 HTTP/REST front-end ----------------===//
#include "frontend/http_server.h"

#include "frontend/peer.h"

#include "frontend/http_listener.h"
#include "frontend/http_server_impl.h"
#include "protocol/http_codec.h"
#include "protocol/status_mapping.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <charconv>
#include <future>

namespace rs::frontend {
namespace http_detail {

void replyJson(httplib::Response &res, int status, std::string body) {
  res.status = status;
  res.body = std::move(body);
  res.set_header("Content-Type", kJson);
}

void replyError(httplib::Response &res, const Status &status) {
  replyJson(res, protocol::toHttpStatus(status.code()), protocol::httpErrorBody(status.message()));
}

protocol::ModelRef modelRef(const httplib::Request &req) {
  protocol::ModelRef ref;
  ref.name = req.matches.size() > 1 ? req.matches[1].str() : "";
  ref.version = req.matches.size() > 2 ? req.matches[2].str() : "";
  return ref;
}

} // namespace http_detail

namespace {

using namespace http_detail;

/// How much of an oversized body is read and dropped so the client sees the 413 reply.
constexpr uint64_t kDrainBytes = 64u << 20;

/// The request's Content-Length, when present and a valid number.
std::optional<uint64_t> contentLength(const httplib::Request &req) {
  if (!req.has_header("Content-Length"))
    return std::nullopt;
  std::string v = req.get_header_value("Content-Length");
  uint64_t n = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), n);
  if (r.ec != std::errc() || r.ptr != v.data() + v.size())
    return std::nullopt;
  return n;
}

std::string tooLargeMessage(int64_t limit) {
  return "request body exceeds the limit of " + std::to_string(limit) + " bytes";
}

/// What the request error log and the metrics see for a body that was refused: too large
/// (the 413 reply; counted as RESOURCE_EXHAUSTED, the code gRPC gives an oversized message)
/// or unreadable (400).
Status bodyError(bool too_large, int64_t limit) {
  if (too_large)
    return Status(StatusCode::kResourceExhausted, tooLargeMessage(limit));
  return invalidArgument() << "cannot read request body";
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
  const nlohmann::json j = nlohmann::json::parse(body.begin(), body.begin() + json_bytes, nullptr,
                                                 /*allow_exceptions=*/false);
  if (j.is_object())
    if (auto it = j.find("id"); it != j.end() && it->is_string())
      return it->get<std::string>();
  return "";
}

} // namespace

void HttpServer::recordRoute(const std::string &pattern, const char *method) {
  route_methods_.emplace_back(std::regex(pattern), method);
}

void HttpServer::get(const std::string &pattern, RouteHandler handler) {
  recordRoute(pattern, "GET");
  listener_->server().Get(pattern, std::move(handler));
}

void HttpServer::post(const std::string &pattern, RouteHandler handler) {
  recordRoute(pattern, "POST");
  listener_->server().Post(pattern, std::move(handler));
}

std::string HttpServer::allowedMethods(const std::string &path) const {
  bool get = false, post = false;
  for (const auto &[re, method] : route_methods_)
    if (std::regex_match(path, re))
      (method == "GET" ? get : post) = true;
  return get && post ? "GET, POST" : get ? "GET" : post ? "POST" : "";
}

void HttpServer::report(const httplib::Request &req, const std::string &id, const Status &status,
                        bool in_service) const {
  if (options_.reporter)
    options_.reporter->requestFailed({"http", modelRef(req).name, id}, status, in_service);
}

void HttpServer::handleInfer(const httplib::Request &req, std::string body,
                             httplib::Response &res) {
  std::optional<std::string> header;
  if (req.has_header(protocol::kInferenceHeaderContentLength))
    header = req.get_header_value(protocol::kInferenceHeaderContentLength);
  protocol::DecodeOptions options;
  options.now = protocol::Clock::now();
  options.shared_memory = options_.shared_memory;
  options.max_shared_memory_input_bytes = options_.max_body_bytes;
  options.expected_datatype = protocol::expectedDatatypes(service_, modelRef(req).name);
  options.shared_memory_owner = localPeerIdentity(req.remote_addr).value_or("");
  Result<protocol::HttpInferRequest> decoded = protocol::decodeHttpInferRequest(
      modelRef(req), body, header ? std::optional<std::string_view>(*header) : std::nullopt,
      options);
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
  // The service completes on its own thread; this handler thread waits for it. The promise
  // is shared so the callback never touches a destroyed object.
  auto promise = std::make_shared<std::promise<Result<protocol::InferResponse>>>();
  std::future<Result<protocol::InferResponse>> future = promise->get_future();
  service_.infer(std::move(decoded->request), [promise](Result<protocol::InferResponse> r) {
    promise->set_value(std::move(r));
  });
  Result<protocol::InferResponse> result = future.get();
  if (result.isOk() && !delivered)
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
    : options_(std::move(options)), service_(service), control_(control) {
  HttpListenerOptions lo;
  lo.name = "http";
  lo.host = options_.host;
  lo.port = options_.port;
  lo.threads = options_.threads;
  lo.keep_alive_timeout_s = options_.keep_alive_timeout_s;
  lo.tls = options_.tls;
  listener_ = std::make_unique<HttpListener>(std::move(lo));
  addRoutes();
  addSharedMemoryRoutes();
}

HttpServer::~HttpServer() { shutdown(); }

Status HttpServer::start() { return listener_->start(); }
int HttpServer::port() const { return listener_->port(); }
void HttpServer::shutdown() { listener_->shutdown(); }

namespace {

/// A request body read piece by piece within a byte limit.
struct BodyRead {
  std::string body;       // empty when too large or unread
  bool too_large = false; // the body exceeds the limit
  bool read = true;       // the reader delivered the whole body (or drained the excess)
};

/// Reads the body of `req` within `limit` bytes. A body over the limit is never stored: up to
/// kDrainBytes more are read and discarded so that the client, still sending, gets the 413
/// reply instead of a reset connection. With a Content-Length over the limit httplib itself
/// skips the body and the reader reports failure; a chunked body arrives piece by piece.
BodyRead readBodyWithin(const httplib::Request &req, const httplib::ContentReader &reader,
                        int64_t limit) {
  BodyRead out;
  const std::optional<uint64_t> declared = contentLength(req);
  if (declared && *declared <= static_cast<uint64_t>(limit))
    out.body.reserve(std::min<uint64_t>(*declared, 16u << 20));
  out.too_large = declared && *declared > static_cast<uint64_t>(limit);
  uint64_t discarded = 0;
  out.read = reader([&](const char *data, size_t n) {
    if (!out.too_large && out.body.size() + n <= static_cast<uint64_t>(limit)) {
      out.body.append(data, n);
      return true;
    }
    out.too_large = true;
    std::string().swap(out.body);
    discarded += n;
    return discarded <= kDrainBytes;
  });
  return out;
}

/// A handler's exception as a 500 reply (httplib catches it and calls this).
void replyToException(httplib::Response &res, std::exception_ptr ep) {
  std::string what = "unknown exception";
  try {
    std::rethrow_exception(ep);
  } catch (const std::exception &e) {
    what = e.what();
  } catch (...) {
  }
  spdlog::error("http handler failed: {}", what);
  replyJson(res, 500, protocol::httpErrorBody("internal error: " + what));
}

} // namespace

void HttpServer::addRoutes() {
  listener_->server().set_payload_max_length(static_cast<size_t>(options_.max_body_bytes));
  addHealthAndServerRoutes();
  addRepositoryRoutes();
  addStatisticsRoutes(); // before kModelPath, which would take "stats" for a model name
  addModelRoutes();
  addInferRoute();
  installHttplibHooks();
}

void HttpServer::addHealthAndServerRoutes() {
  get("/v2/health/live", [this](const httplib::Request &, httplib::Response &res) {
    bool live = service_.serverLive();
    replyJson(res, live ? 200 : 400, live ? R"({"live":true})" : R"({"live":false})");
  });
  get("/v2/health/ready", [this](const httplib::Request &, httplib::Response &res) {
    bool ready = service_.serverReady();
    replyJson(res, ready ? 200 : 400, ready ? R"({"ready":true})" : R"({"ready":false})");
  });
  get(R"(/v2/?)", [this](const httplib::Request &, httplib::Response &res) {
    replyJson(res, 200, protocol::serverMetadataJson(service_.serverMetadata()));
  });
  if (options_.evidence) {
    get("/v2/evidence", [this](const httplib::Request &, httplib::Response &res) {
      replyJson(res, 200, options_.evidence());
    });
  }
}

void HttpServer::addModelRoutes() {
  get(kModelPath, [this](const httplib::Request &req, httplib::Response &res) {
    Result<protocol::ModelMetadata> md = service_.modelMetadata(modelRef(req).name);
    if (!md.isOk())
      return replyError(res, md.status());
    replyJson(res, 200, protocol::modelMetadataJson(*md));
  });
  get(std::string(kModelPath) + "/ready",
      [this](const httplib::Request &req, httplib::Response &res) {
        std::string name = modelRef(req).name;
        Result<protocol::ModelReadiness> r = service_.modelReady(name);
        if (!r.isOk())
          return replyError(res, r.status());
        nlohmann::json body = {{"name", name}, {"ready", r->ready}};
        if (!r->ready && !r->reason.empty())
          body["reason"] = r->reason;
        replyJson(res, r->ready ? 200 : 400,
                  body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      });
}

void HttpServer::addInferRoute() {
  const int64_t limit = options_.max_body_bytes;
  recordRoute(std::string(kModelPath) + "/infer", "POST");
  listener_->server().Post(
      std::string(kModelPath) + "/infer",
      [this, limit](const httplib::Request &req, httplib::Response &res,
                    const httplib::ContentReader &reader) {
        // A declared size past what readBodyWithin would drain is refused before reading.
        std::optional<uint64_t> declared = contentLength(req);
        if (declared && *declared > static_cast<uint64_t>(limit) + kDrainBytes) {
          res.set_header("Connection", "close");
          report(req, "", bodyError(true, limit), false);
          return replyJson(res, 413, protocol::httpErrorBody(tooLargeMessage(limit)));
        }
        BodyRead in = readBodyWithin(req, reader, limit);
        if (in.too_large || !in.read) {
          res.set_header("Connection", "close");
          report(req, "", bodyError(in.too_large, limit), false);
          return replyJson(res, in.too_large ? 413 : 400,
                           protocol::httpErrorBody(in.too_large ? tooLargeMessage(limit)
                                                                : "cannot read request body"));
        }
        handleInfer(req, std::move(in.body), res);
      });
}

void HttpServer::replyToHttplibError(const httplib::Request &req, httplib::Response &res) const {
  if (!res.body.empty())
    return;
  std::string message;
  const std::string allowed = res.status == 404 ? allowedMethods(req.path) : "";
  if (!allowed.empty()) {
    res.status = 405;
    res.set_header("Allow", allowed);
    message = "method " + req.method + " not allowed for " + req.path + "; allowed: " + allowed;
  } else if (res.status == 404) {
    message = "no route for " + req.method + " " + req.path;
  } else if (res.status == 413) {
    message = tooLargeMessage(options_.max_body_bytes);
  } else {
    message = "http error " + std::to_string(res.status);
  }
  res.body = protocol::httpErrorBody(message);
  res.set_header("Content-Type", kJson);
}

void HttpServer::installHttplibHooks() {
  httplib::Server &svr = listener_->server();
  const int64_t limit = options_.max_body_bytes;
  // A request with neither Content-Length nor Transfer-Encoding has an empty body (RFC 9112
  // section 6.3). cpp-httplib 0.11 instead reads a POST's body until the connection closes,
  // so such a request (curl -X POST without data) would wait for the 5 s read timeout and
  // get a bare 400. Giving it "Content-Length: 0" before routing makes httplib read
  // nothing. The request object is httplib's own non-const one, handed to this hook as const.
  svr.set_pre_routing_handler([](const httplib::Request &req, httplib::Response &) {
    if ((req.method == "POST" || req.method == "PUT" || req.method == "PATCH") &&
        !req.has_header("Content-Length") && !req.has_header("Transfer-Encoding"))
      const_cast<httplib::Request &>(req).headers.emplace("Content-Length", "0");
    return httplib::Server::HandlerResponse::Unhandled;
  });
  svr.set_expect_100_continue_handler([limit](const httplib::Request &req, httplib::Response &res) {
    std::optional<uint64_t> declared = contentLength(req);
    if (declared && *declared > static_cast<uint64_t>(limit)) {
      res.set_header("Connection", "close");
      replyJson(res, 413, protocol::httpErrorBody(tooLargeMessage(limit)));
      return 413;
    }
    return 100;
  });
  svr.set_post_routing_handler([this](const httplib::Request &, httplib::Response &res) {
    if (draining_)
      res.set_header("Connection", "close");
  });
  svr.set_error_handler([this](const httplib::Request &req, httplib::Response &res) {
    replyToHttplibError(req, res);
  });
  svr.set_exception_handler([](const httplib::Request &, httplib::Response &res,
                               std::exception_ptr ep) { replyToException(res, ep); });
}

} // namespace rs::frontend
