//===- frontend/grpc_health.h - grpc.health.v1.Health from the service ---------===//
//
// The standard gRPC health service (grpc.health.v1.Health, Check and Watch; Kubernetes
// `grpc:` probes call it) is grpc++'s own implementation, enabled on the server
// (grpc::EnableDefaultHealthCheckService). It answers from the statuses set on it; this
// publisher keeps them equal to the service's readiness: service "" is SERVING while
// InferenceService::serverReady() is true, and each model ModelControl::listModels() names
// is SERVING while it is ready (NOT_SERVING when it failed to load, was unloaded or has left
// the index). A name never listed is unknown: Check answers NOT_FOUND, Watch SERVICE_UNKNOWN
// until it appears. refresh() publishes at once (the front-end calls it at start and the
// worker after each change it makes); a background thread also refreshes every
// `period`, so a change made elsewhere reaches Watch within that time. On the server's
// shutdown grpc++ turns every status NOT_SERVING and ends the watches.
//
// Thread safety: refresh() may be called from any thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/service.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace grpc {
class HealthCheckServiceInterface;
} // namespace grpc

namespace rs::frontend {

class GrpcHealthPublisher {
public:
  /// `health`, `service` and `control` must outlive the publisher. Publishes once, then
  /// every `period` on its own thread (none when `period` is zero).
  GrpcHealthPublisher(grpc::HealthCheckServiceInterface &health,
                      const protocol::InferenceService &service,
                      const protocol::ModelControl &control, std::chrono::milliseconds period);
  /// Stops the thread.
  ~GrpcHealthPublisher();
  GrpcHealthPublisher(const GrpcHealthPublisher &) = delete;
  GrpcHealthPublisher &operator=(const GrpcHealthPublisher &) = delete;

  /// Sets every status from the service now.
  void refresh();

private:
  grpc::HealthCheckServiceInterface &health_;
  const protocol::InferenceService &service_;
  const protocol::ModelControl &control_;
  std::mutex refresh_mu_; // serializes refresh()
  /// GUARDED_BY(refresh_mu_): every name published ("" the server) and its last status; a
  /// status is set again only when it changes, since each set sends a Watch message.
  std::map<std::string, bool> published_;
  std::mutex stop_mu_; // with stop_cv_
  std::condition_variable stop_cv_;
  bool stop_ = false; // GUARDED_BY(stop_mu_)
  std::thread thread_;
};

} // namespace rs::frontend
