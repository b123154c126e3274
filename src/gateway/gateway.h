//===- gateway/gateway.h - KServe V2 reverse proxy over many workers --------===//
//
// `reactant-server gateway` (reference-system.md section 8; DESIGN.md "Processes and
// ports"): one endpoint in front of any number of workers on any hosts.
//
// Front-ends, on the listen addresses of gateway.yml:
// - gRPC (listen.grpc): inference.GRPCInferenceService and, on the same port,
//   reactant_control.GatewayControlService. ModelInfer is forwarded as the client sent it
//   (the protobuf message, never decoded into tensors) to the worker the router picks;
//   ModelStreamInfer forwards each request of the stream as such a ModelInfer and answers
//   them in order (gateway_stream.cc); ModelReady, ModelMetadata and ModelConfig are
//   forwarded to a worker that serves the model;
//   ServerLive, ServerReady (some worker ready), ServerMetadata (name
//   "ReactantServerGateway") and RepositoryIndex (the union of the workers' models, READY
//   when some ready worker serves it) are answered by the gateway. The repository
//   load/unload and shared-memory RPCs answer UNIMPLEMENTED. Also on this port,
//   reactant_evidence.EvidenceService/DeploymentEvidence: the gateway's identity and every
//   worker's own document, asked for when the RPC comes (gateway_evidence.cc; GET
//   /v2/evidence on the HTTP port serves the same document). grpc.health.v1.Health (service
//   "" SERVING while some worker is ready, a model while a ready worker serves it;
//   frontend/grpc_health.h, refreshed after every probe round) and server reflection, as on
//   a worker.
// - HTTP/REST (listen.http, ours): the KServe V2 REST API of frontend/http_server.h; an
//   inference body is decoded with the protocol codecs, forwarded as gRPC ModelInfer, and
//   the reply re-encoded (JSON or binary as the client asked); GET /v2/models/{m}/config is
//   forwarded as ModelConfig; CORS from http.cors_allowed_origins.
// - admin (listen.metrics): /healthz, /readyz (200 once some worker's last probe said
//   ready), /metrics (the gateway's series merged with every worker's /metrics, each
//   sample labelled with its `worker`; metrics_merge.h).
//
// Discovery and health: a prober asks every worker, every health interval (10 s, or
// REACTANT_GATEWAY_HEALTH_INTERVAL_SECONDS; every second at most while some worker is not
// ready, so a starting or restarting worker joins quickly), ServerReady,
// RepositoryIndex(ready=true),
// ModelControlStatus and the metadata of new models (5 s per call, 8 s per worker; a
// worker whose probe times out gets a new connection). Worker membership is fixed; model
// sets are rediscovered every round. A request for a model no ready worker serves waits
// for one refresh (at most one per second), then fails NOT_FOUND "model '<m>' is not
// served by any ready worker".
//
// Failover: the router's candidates are tried in order, moving on only when the request
// was never delivered: the worker could not be reached (UNAVAILABLE "failed to connect")
// or answered NOT_FOUND for the model. Any other error is returned as the worker gave it;
// a worker that fails a call with UNAVAILABLE is taken out of routing until a later probe
// says it is ready (so after SIGKILL only the calls in flight on it fail).
//
// Deadlines: the client's gRPC deadline (or the REST body's reactant_timeout_ns) is
// forwarded, capped at worker_client.request_timeout_seconds; a request whose budget is
// gone before it is sent gets DEADLINE_EXCEEDED from the gateway. Inbound cap:
// grpc.max_concurrent_requests_per_worker x workers calls in flight (0: none); beyond it
// RESOURCE_EXHAUSTED.
//
// Fatal conditions (reported once through on_fatal; the command exits 1): under
// lpt_packing, once every worker answered, a worker not running fifo or edf, one without
// ModelControlStatus, or differing model sets; REACTANT_GATEWAY_WEDGE_EXIT_ROUNDS
// consecutive rounds in which every probe timed out, after a first successful contact.
//
// Thread safety: start(), waitForWorkers() and shutdown() from one controlling thread;
// everything else may be called concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "config/gateway_config.h"
#include "gateway/router.h"
#include "support/build_info.h"
#include "support/status.h"

#include <functional>
#include <memory>
#include <string>

namespace rs::gateway {

struct GatewayOptions {
  config::GatewayConfig config;
  /// The build identity in the gateway's evidence document.
  ServerBuild build = thisBuild();
  /// Called at most once, from the prober thread, on a fatal condition (see above).
  std::function<void(const Status &)> on_fatal;
};

class Gateway {
public:
  explicit Gateway(GatewayOptions options);
  /// Calls shutdown().
  ~Gateway();
  Gateway(const Gateway &) = delete;
  Gateway &operator=(const Gateway &) = delete;

  /// Binds the front-ends and starts the prober (its first round runs at once).
  /// Unavailable when an address cannot be bound.
  Status start();
  /// Waits until some worker is ready (under lpt_packing: every worker answered), up to
  /// `seconds` (infinity: for ever; 0: one probe round). Unavailable on timeout, naming
  /// the workers that did not answer and why.
  Status waitForWorkers(double seconds);
  /// Stops accepting calls, lets in-flight calls finish (up to `grace`), then stops the
  /// prober and the admin port. Idempotent.
  void shutdown(std::chrono::milliseconds grace = std::chrono::seconds(10));

  /// Bound ports after start() (0 when off).
  int grpcPort() const;
  int httpPort() const;
  int metricsPort() const;

  /// Runs one probe round now and waits for it (tests, and the startup wait).
  void probeNow();
  Router &router();
  /// The merged exposition served on /metrics.
  std::string renderMetrics();

  class Impl;

private:
  std::unique_ptr<Impl> impl_;
};

} // namespace rs::gateway
