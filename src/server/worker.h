//===- server/worker.h - Bring-up and shutdown of one worker ----------------===//
//
// One worker (`reactant-server serve`, DESIGN.md "Processes and ports"): one device, every
// model of its repository, the KServe V2 front-ends on their ports. Bring-up order, as the
// reference implementation's (reference-system.md §3.1): `Effective configuration` →
// numerics gate → backend → scheduler and the metrics/health port (liveness answers while
// models compile) → load and compile bundles → `models ready` → gRPC and HTTP front-ends. Every
// front-end serves the deployment evidence (server/evidence.h) from the facts gathered on the way.
// A model that fails to load is reported and the others serve; a configuration the backend cannot
// honour (numerics tf32 on the CPU) fails start().
//
// Thread safety: start() and shutdown() from one thread; the servers run their own threads.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "config/worker_config.h"
#include "frontend/grpc_server.h"
#include "frontend/http_server.h"
#include "runtime/backend.h"
#include "runtime/model_repository.h"
#include "runtime/repository_watcher.h"
#include "server/worker_service.h"
#include "support/build_info.h"

#include <chrono>
#include <functional>
#include <memory>

namespace rs::frontend {
class MetricsHealthServer;
} // namespace rs::frontend

namespace rs::server {

struct WorkerFacts;
class MemoryTrimmer;

struct WorkerOptions {
  config::WorkerConfig config;
  /// The build identity the worker reports (Effective configuration, metrics, evidence) and
  /// keys its executable cache with.
  ServerBuild build = thisBuild();
  /// Tests only: bind every enabled front-end to a free port (read back with *Port()).
  bool ephemeral_ports = false;
  /// Tests only: called by start() on its thread once the metrics/health port serves and
  /// before the first model loads (metricsPort() is known then).
  std::function<void()> before_models_load = nullptr;
  /// Tests only: called on the dispatching thread before each batch of `model` runs (and
  /// each warmup), outside its measured compute time; a test blocks in it to hold the device.
  std::function<void(const std::string &model)> before_dispatch = nullptr;
};

class Worker {
public:
  explicit Worker(WorkerOptions options);
  ~Worker();
  Worker(const Worker &) = delete;
  Worker &operator=(const Worker &) = delete;

  /// Brings the worker up. Errors: InvalidArgument / FailedPrecondition for a setting the
  /// backend cannot honour; Unavailable when a port cannot be bound; NotFound for a missing
  /// model repository.
  Status start();
  /// Stops accepting requests, finishes in-flight ones, stops the dispatch loop. Idempotent.
  void shutdown();
  /// Graceful shutdown (SIGTERM): readiness turns false and new inference requests get
  /// UNAVAILABLE at once; admitted requests finish for up to `exit_timeout`, then anything
  /// still queued gets UNAVAILABLE and shutdown() runs. True when every admitted request
  /// finished within the timeout.
  bool drainAndShutdown(std::chrono::milliseconds exit_timeout);

  /// Tests only, before start(): the arena runtime.weight_cache_fraction applies to, in
  /// bytes, instead of the host's physical memory (a small one makes the cache evict).
  void setWeightArenaBytes(int64_t bytes) { weight_arena_bytes_ = bytes; }
  /// Tests only, after start(): one poll of every repository watcher (model_control_mode
  /// dynamic) on the calling thread, as their threads do every model_poll_seconds; the test
  /// sets model_poll_seconds long enough that those threads do not poll meanwhile.
  void pollRepositories();

  /// Bound ports after start() (0 when that front-end is off).
  int grpcPort() const;
  int httpPort() const;
  int metricsPort() const;
  WorkerService &service() { return *service_; }
  runtime::ModelRepository &repository() { return *repository_; }
  /// The deployment-identity document now (server/evidence.h), as GET /v2/evidence and
  /// the gRPC DeploymentEvidence RPC serve it; "{}" before start() gathered the facts.
  std::string evidenceJson() const;

private:
  /// model_control_mode dynamic: a RepositoryWatcher per model directory, polling every
  /// model_poll_seconds, its actions the service's loadModel / unloadModel / renameModel.
  void startWatchers();

  config::WorkerConfig config_;
  ServerBuild build_;
  bool ephemeral_ports_ = false;
  std::function<void()> before_models_load_;
  std::function<void(const std::string &)> before_dispatch_;
  std::string cache_key_; // runtime.executable_cache_key_file's bytes ("" = none)
  int64_t weight_arena_bytes_ = 0;
  std::shared_ptr<runtime::Backend> backend_;
  std::unique_ptr<runtime::ModelRepository> repository_;
  std::unique_ptr<WorkerFacts> facts_; // set in start(), before the front-ends serve
  std::unique_ptr<WorkerService> service_;
  std::unique_ptr<frontend::GrpcServer> grpc_;
  std::unique_ptr<frontend::HttpServer> http_;
  std::unique_ptr<frontend::MetricsHealthServer> metrics_;
  /// Returns the allocator's free memory to the system after large transient buffers.
  std::unique_ptr<MemoryTrimmer> trimmer_;
  /// model_control_mode dynamic: one watcher per model directory (stopped first).
  std::vector<std::unique_ptr<runtime::RepositoryWatcher>> watchers_;
};

} // namespace rs::server
