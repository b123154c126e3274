//===- gateway/worker_link.h - The gateway's connection to one worker -------===//
//
// One worker as the gateway sees it: its name (the `worker` label), its gRPC endpoint
// (host:port, reached over cleartext HTTP/2) and optional metrics endpoint. Holds the
// channel and the stubs of inference.GRPCInferenceService and
// reactant_control.ControlService; reconnect() swaps in a fresh channel (a probe that
// hangs drops the connection, reference-system.md section 8.2), while calls already made
// keep the old one alive through their Connection reference.
//
// probe() asks the worker, each call bounded by `timeout` and all of them by
// `watchdog`: ServerReady, RepositoryIndex (every model: the READY ones are routed to, the
// others kept with their state and reason), ModelControlStatus (max batch, counters;
// UNIMPLEMENTED leaves has_control false), and ModelMetadata for the READY models not
// named in `have_metadata`.
//
// Thread safety: every method may be called concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "gateway/router.h"
#include "protocol/proto/grpc_service.grpc.pb.h"
#include "protocol/proto/reactant_control_v1.grpc.pb.h"
#include "support/status.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace rs::gateway {

/// A channel and its stubs; shared by the calls that use it.
struct Connection {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<inference::GRPCInferenceService::Stub> inference;
  std::unique_ptr<reactant_control::ControlService::Stub> control;
};

/// What one probe learned, beyond the router's snapshot.
struct ProbeResult {
  WorkerSnapshot snapshot;
  /// ModelMetadata answers for the models asked about.
  std::map<std::string, inference::ModelMetadataResponse> metadata;
  bool timed_out = false; // a call ran past its deadline (the connection is suspect)
  std::string error;      // why the worker did not answer ("" if it did)
};

class WorkerLink {
public:
  WorkerLink(std::string name, std::string endpoint, std::string metrics_endpoint,
             int64_t max_message_bytes);

  const std::string &name() const { return name_; }
  const std::string &endpoint() const { return endpoint_; }
  const std::string &metricsEndpoint() const { return metrics_endpoint_; }

  /// The current connection.
  std::shared_ptr<Connection> connection() const;
  /// Replaces the connection with a new channel.
  void reconnect();

  ProbeResult probe(const std::set<std::string> &have_metadata, std::chrono::milliseconds timeout,
                    std::chrono::milliseconds watchdog);

  /// GET /metrics on the metrics endpoint (Unavailable if there is none or it fails).
  Result<std::string> scrapeMetrics(std::chrono::milliseconds timeout) const;

private:
  std::shared_ptr<Connection> connect() const;

  const std::string name_, endpoint_, metrics_endpoint_;
  const int64_t max_message_bytes_;
  mutable std::mutex mu_;
  std::shared_ptr<Connection> conn_; // GUARDED_BY(mu_)
};

} // namespace rs::gateway
