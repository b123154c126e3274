//===- frontend/http_server.h - KServe V2 HTTP/REST front-end -----------------===//
//
// Serves the KServe V2 REST API on the HTTP transport of frontend/http_listener.h (strict
// RFC 9112 parsing, an event loop, per-connection budgets), each path also under
// `/v2/models/{name}/versions/{version}/...` (the version must be "1", the one every model
// has; another is 404: protocol::checkModelVersion):
//
//   GET  /v2/health/live             200 {"live":true}
//   GET  /v2/health/ready            200 {"ready":true}, or 400 {"ready":false}
//   GET  /v2                         200 server metadata
//   GET  /v2/models/{m}              200 model metadata, 404 unknown model
//   GET  /v2/models/{m}/ready        200 {"name","ready":true}, 400 {"name","ready":false,
//                                    "reason"} when known but not ready, 404 unknown
//   GET  /v2/models/{m}/config       200 Triton's model configuration (protocol/model_config.h),
//                                    404 unknown model, 503 not loaded
//   POST /v2/models/{m}/infer        inference (protocol/http_codec.h), JSON or binary, or
//                                    with Inference-Header-Content-Length: 0 a raw binary
//                                    request (protocol/http_raw_request.h)
//   GET  /v2/evidence                200 the deployment-identity document (server/evidence.h),
//                                    when HttpServerOptions::evidence is set (else 404)
//   POST /v2/repository/index        200 [{"name","version":"1","state":"READY"|"UNAVAILABLE",
//                                    "reason"}]; body {"ready": true} lists ready models only
//   POST /v2/repository/models/{m}/load    200 empty once the model serves (explicit mode;
//   POST /v2/repository/models/{m}/unload  else 400 FAILED_PRECONDITION), 404 unknown
//   GET  /v2/models[/{m}]/stats      200 {"model_stats":[...]} (Triton statistics extension:
//                                    every loaded model without {m}), 404 unknown model
//
// With HttpServerOptions::shared_memory set, the system shared memory extension
// (protocol/shared_memory.h; else these routes are 404, or answer
// HttpServerOptions::shared_memory_refusal when that is set, and shared-memory tensors 501):
//   GET  /v2/systemsharedmemory[/region/{r}]/status   200 [{"name","key","offset",
//                                    "byte_size"}], 404 for an unknown region
//   POST /v2/systemsharedmemory/region/{r}/register   body {"key","offset","byte_size"};
//                                    200 empty, 400 bad key/size, 409 already registered,
//                                    429 when the region limit is reached
//   POST /v2/systemsharedmemory[/region/{r}]/unregister  200 empty (all regions without
//                                    /region/{r}; an unknown region is not an error)
// Every failed inference is told to HttpServerOptions::reporter (logged once, counted).
// With HttpServerOptions::cors_allowed_origins set, CORS preflights (OPTIONS) from those
// origins are answered and their replies carry the CORS headers (frontend/http_cors.h).
//
// Not-ready answers 400: the KServe V2 REST spec makes readiness a status code, 200 for
// true and 4xx for false, and Triton answers 400 (EVHTP_RES_BADREQ) for both server and
// model readiness; any 4xx also fails a Kubernetes probe. The metrics port's /readyz is
// the 200/503 probe (metrics_health_server.h).
//
// Errors are `{"error": "<message>"}` with the status of protocol/status_mapping.h;
// unknown routes are 404 and known paths under another method 405 (with Allow), with that
// body. One body limit, max_body_bytes, holds for every route: a Content-Length over it
// gets 413 before any of the body is read (and before `100 Continue`), a chunked or
// compressed body gets 413 as soon as its size, or its decoded size, passes it; the
// connection is then closed. Malformed requests get the transport's 400/408/415/431/501/
// 505 with the same JSON body.
//
// Source: KServe V2 REST protocol; Triton HTTP server behaviour (peer-servers.md 1.1-1.2).
// Thread safety: start() and shutdown() from one controlling thread; requests run on the
// listener's worker threads and call the InferenceService and ModelControl concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/request_log.h"
#include "frontend/tls.h"
#include "protocol/service.h"
#include "protocol/shared_memory.h"
#include "support/status.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace rs::frontend {

class HttpCors;
class HttpListener;
class HttpRouter;
struct HttpRequest;
struct HttpResponse;

struct HttpServerOptions {
  /// Address to bind: "0.0.0.0", "127.0.0.1" ...
  std::string host = "0.0.0.0";
  /// TCP port; 0 picks a free port, read back with HttpServer::port().
  int port = 8000;
  /// Largest request body of any route, in bytes, on the wire and once decoded
  /// (`endpoints.max_request_bytes`).
  int64_t max_body_bytes = int64_t{64} << 20;
  /// Largest input read from a shared memory region, in bytes (the gRPC message limit).
  int64_t max_shared_memory_input_bytes = int64_t{512} << 20;
  /// Handler threads: requests handled at once (an inference holds its thread until it is
  /// answered), started as requests need them. Connections that are still sending hold no
  /// thread.
  int threads = 128;
  /// How long an idle keep-alive connection is kept open, in seconds.
  int keep_alive_timeout_s = 5;
  /// A request's head must arrive within this long, in seconds; its body at a minimum rate
  /// (frontend/http_listener.h).
  int request_head_timeout_s = 10;
  /// HTTPS (frontend/tls.h; the `tls:` keys); off by default.
  TlsOptions tls;
  /// When set, GET /v2/evidence answers 200 with this JSON document (server/evidence.h).
  /// Called per request, from the listener's threads.
  std::function<std::string()> evidence;
  /// The system shared memory regions; nullptr: the extension is not offered.
  protocol::SharedMemoryRegistry *shared_memory = nullptr;
  /// Without `shared_memory`: when not OK, every system shared memory route answers this
  /// error (the gateway's, which says where regions are registered) instead of 404.
  Status shared_memory_refusal;
  /// Told about every failed inference request; may be null.
  RequestReporter *reporter = nullptr;
  /// Origins allowed to call across origins (frontend/http_cors.h,
  /// `endpoints.cors_allowed_origins`); empty: CORS off.
  std::vector<std::string> cors_allowed_origins;
};

class HttpServer {
public:
  /// `service` and `control` (protocol/service.h: health, metadata and inference; the
  /// repository and statistics routes) must outlive the server (or at least its shutdown()).
  HttpServer(HttpServerOptions options, protocol::InferenceService &service,
             protocol::ModelControl &control);
  ~HttpServer();
  HttpServer(const HttpServer &) = delete;
  HttpServer &operator=(const HttpServer &) = delete;

  /// Binds and starts serving. Unavailable if the address cannot be bound.
  Status start();
  /// The bound port after a successful start(), else 0.
  int port() const;
  /// Stops accepting connections and returns once in-flight requests are answered.
  void shutdown();
  /// Graceful shutdown has begun: every later reply carries `Connection: close`, so no
  /// client keeps reusing a connection that shutdown() will close.
  void beginDrain() { draining_ = true; }

private:
  /// Every route in match order.
  void addRoutes();
  /// GET /v2/health/live, /v2/health/ready, /v2 and (when set) /v2/evidence.
  void addHealthAndServerRoutes();
  /// GET /v2/models/{m} (metadata) and /v2/models/{m}/ready.
  void addModelRoutes();
  /// POST /v2/models/{m}/infer: handleInfer() on the body the transport read.
  void addInferRoute();
  /// Routes the request (a CORS preflight answered first), adds the CORS headers;
  /// Connection: close while draining.
  void dispatch(HttpRequest &req, HttpResponse &res) const;
  /// The JSON error body of a reply the router or the transport produced itself (no route,
  /// wrong method, malformed or too large); a refused inference body is reported.
  void replyToTransportError(const HttpRequest &req, int status, const std::string &message,
                             HttpResponse &res) const;
  /// With a registry: Triton's system shared-memory routes, and its CUDA ones answering that
  /// no CUDA region exists (http_server_control.cc). Without one, the system routes answer
  /// options_.shared_memory_refusal when it is set.
  void addSharedMemoryRoutes();
  /// POST /v2/repository/index and /v2/repository/models/{m}/load|unload.
  void addRepositoryRoutes();
  /// GET /v2/models/stats and /v2/models/{m}/stats (Triton statistics extension).
  void addStatisticsRoutes();
  /// Decodes, runs and encodes one inference; `body` is the whole request body.
  void handleInfer(const HttpRequest &req, std::string body, HttpResponse &res);
  /// Tells the reporter (if any) that a request for `model` failed.
  void report(const HttpRequest &req, const std::string &id, const Status &status,
              bool in_service) const;
  using RouteHandler = std::function<void(HttpRequest &, HttpResponse &)>;
  /// Registers a GET or POST route (frontend/http_router.h: the other method on the same
  /// path answers 405 with an Allow header).
  void get(const std::string &pattern, RouteHandler handler);
  void post(const std::string &pattern, RouteHandler handler);

  HttpServerOptions options_;
  std::unique_ptr<HttpRouter> router_;
  std::unique_ptr<HttpCors> cors_;
  protocol::InferenceService &service_;
  protocol::ModelControl &control_;
  std::unique_ptr<HttpListener> listener_;
  std::atomic<bool> draining_{false};
};

} // namespace rs::frontend
