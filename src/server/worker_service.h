//===- server/worker_service.h - One worker: models + scheduler -------------===//
//
// The InferenceService and ModelControl (protocol/service.h) that the gRPC and HTTP
// front-ends call (DESIGN.md "Request path"): looks the model up in the ModelRepository,
// validates the request against its manifest (server/request_validation.h), queues it on the
// Scheduler (one dispatch loop for the worker's device), and turns the outputs into an
// InferResponse with the requested outputs in order.
//
// Meta models (docs/hooks.md "Meta models"): a model named in the meta.calls of a loaded
// meta model is internal to it: left out of the repository index, the control status and
// the statistics of every model, and refused (NotFound) to a client's inference,
// metadata, configuration, readiness and statistics requests by its name; the meta's
// calls reach it as committed requests (scheduler/scheduler.h). A meta model serves only
// once every model of its meta.calls is loaded and none is itself a meta (else its load
// fails naming the callee) and, under runtime.profile regulated, its run gave the same
// bytes twice on a fixed input (hooks/hook_warmup.h). At most hooks.meta_concurrency runs
// of one meta model go at once (server/meta_gate.h).
//
// Errors: NotFound (unknown model, or internal to a meta model), Unavailable (the model failed to
// load; the message carries the load error; or the worker is draining for shutdown),
// InvalidArgument (request does not match the model; message starts with the model and request id),
// ResourceExhausted (endpoints.max_concurrent_requests in flight: server/admission.h),
// plus the scheduler's codes.
//
// It also owns what both front-ends share: the system shared memory regions
// (protocol/shared_memory.h), the request error log (frontend/request_log.h; it is the
// front-ends' RequestReporter) and the metrics (server/worker_metrics.h).
// Thread safety: every method is safe to call concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/request_log.h"
#include "hooks/hook_pool.h"
#include "protocol/service.h"
#include "protocol/shared_memory.h"
#include "runtime/model_repository.h"
#include "runtime/weight_cache.h"
#include "scheduler/scheduler.h"
#include "server/admission.h"
#include "server/meta_gate.h"
#include "server/model_statistics.h"
#include "server/worker_metrics.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace rs::server {

/// Serving settings besides the scheduler's.
struct ServingOptions {
  /// endpoints.max_concurrent_requests: requests in flight at once; 0 = uncapped.
  int64_t max_concurrent_requests = 0;
  /// The worker_info labels.
  WorkerInfo info;
  /// Rate limit of the request error log.
  frontend::RequestLogOptions log;
  /// The model repositories (`model_dirs`): RepositoryModelLoad finds a bundle by name in
  /// the first of them that has a directory of that name.
  std::vector<std::string> model_dirs;
  /// `models_include`: names outside a non-empty list cannot be loaded by request.
  std::vector<std::string> models_include;
  /// `model_control_mode`: the KServe repository extension's load and unload only work
  /// under explicit (reference-system.md §7; Triton refuses them while polling).
  std::string control_mode = "static";
  /// The weight cache's pool (runtime/weight_cache.h): weightPoolBytes() of the backend's
  /// arena; 0 = no on-demand cache (every model resident, never evicted).
  int64_t weight_pool_bytes = 0;
  /// `scheduler.models.<m>.residency` where set. Unset: kPinnedSystem with a cache (the
  /// reference's default), else kUnpinned (without a cache every model is resident anyway;
  /// only an explicit kPinnedDevice mlocks).
  std::map<std::string, runtime::Residency> residency;
  /// endpoints.shared_memory system: the front-ends offer the system shared-memory
  /// extension (and ServerMetadata lists it), with these key and owner rules.
  bool system_shared_memory = false;
  protocol::SharedMemoryRegistryOptions shared_memory;
  /// runtime.device_ordinal: the GPU of the model configuration's instance group.
  int64_t device_ordinal = 0;
  /// hooks.meta_concurrency: runs of one meta model at once (server/meta_gate.h).
  int64_t meta_concurrency = 2;
  /// runtime.profile regulated: a meta model's run must give the same bytes twice on a
  /// fixed input before the meta serves (hooks/hook_warmup.h).
  bool meta_warmup = false;
};

class WorkerService final : public protocol::InferenceService,
                            public protocol::ModelControl,
                            public frontend::RequestReporter {
public:
  /// `repository` must outlive the service. The scheduler starts immediately.
  /// `worker_name` is the constant `worker` label of the metrics.
  WorkerService(runtime::ModelRepository &repository, scheduler::SchedulerOptions options,
                std::string worker_name = "worker0", ServingOptions serving = {});
  ~WorkerService() override;

  /// Registers every loaded model of the repository with the scheduler (call after loading),
  /// then admits each loaded meta model (the file comment): one whose callees do not fit,
  /// or whose regulated warm-up fails, is recorded as failed (`model load failed`).
  void registerLoadedModels();

  // Live repository (model_control_mode dynamic and explicit; docs/model_repository.md).
  // The three calls are serialized with each other; inference of every model goes on.

  /// Loads model `name` from bundle `dir` (`dir`'s basename must be `name`), or reloads it:
  /// the new version is compiled while the old one serves, then replaces it atomically
  /// (a request runs wholly on the version it was dispatched to). If the new version
  /// fails to load, a loaded old version keeps serving, the index shows it READY with the
  /// failure as its reason, and the error is returned; a model that was not loaded is
  /// recorded as failed (its state and the index report why).
  Status loadModel(const std::string &name, const std::string &dir);
  /// Unloads `name`: new requests for it get NotFound at once, requests already admitted
  /// (queued or running) finish, then it leaves the scheduler; the repository keeps it as
  /// unloaded (index UNAVAILABLE, ModelReady false). Unloading an unloaded model is OK.
  /// Errors: NotFound for an unknown model.
  Status unloadModel(const std::string &name);
  /// Renames loaded model `from` to `to` (its bundle now in `dir`) without reading or
  /// compiling anything: executables, weights, queue, scheduling state and counters move
  /// to the new name. Logs `model renamed`. Errors: NotFound if `from` is not loaded,
  /// AlreadyExists if `to` is known.
  Status renameModel(const std::string &from, const std::string &to, const std::string &dir);
  /// Stops the dispatch loop; queued requests fail with Unavailable.
  void shutdown();
  /// The Prometheus text exposition of the worker's metrics.
  std::string renderMetrics();

  /// Graceful shutdown, step 1: readiness turns false and new requests get Unavailable;
  /// admitted requests go on. Idempotent.
  void beginDrain();
  /// Step 2: waits until no admitted request is in flight (true) or `deadline` (false).
  bool waitIdle(std::chrono::steady_clock::time_point deadline);
  bool draining() const { return admission_.draining(); }

  /// The regions of the system shared memory extension (both front-ends use them).
  protocol::SharedMemoryRegistry &sharedMemory() { return shared_memory_; }
  /// The concurrency cap (tests hold slots to fill it).
  Admission &admission() { return admission_; }
  /// Logs the failure once (rate-limited) and counts it when the service did not.
  void requestFailed(const frontend::FailedRequest &request, const Status &status,
                     bool in_service) override;

  bool serverLive() const override { return true; }
  /// Readiness (docs/operations.md "Readiness"): the startup loads are done
  /// (markStartupDone()), at least one model is loaded, and the worker is not draining. A
  /// model that failed to load (or was unloaded) does not make the worker not ready: that
  /// model answers UNAVAILABLE with its reason while the others serve.
  bool serverReady() const override;
  /// The startup loads are finished (the worker calls it before `models ready`).
  void markStartupDone() { startup_done_.store(true); }
  protocol::ServerMetadata serverMetadata() const override;
  Result<protocol::ModelMetadata> modelMetadata(const std::string &model_name) const override;
  Result<protocol::ModelReadiness> modelReady(const std::string &model_name) const override;
  /// Triton's model configuration of a loaded model (server/model_metadata.h): NotFound
  /// for an unknown model, Unavailable for one that is not loaded.
  Result<protocol::ModelConfiguration> modelConfig(const std::string &model_name) const override;
  /// Also refuses a `model_version` other than "" and protocol::kModelVersion, and a model
  /// internal to a meta model (NotFound: "model 'm' is internal to meta model 'meta' and is
  /// not served directly").
  void infer(protocol::InferRequest request, protocol::InferCallback done) override;
  /// Every model of the repository but those internal to a meta model, unloaded ones
  /// included (RepositoryIndex): ready when loaded, with the last failed reload's reason if
  /// any; else the load error or "unloaded".
  std::vector<protocol::ModelIndexEntry> listModels() const override;
  /// ModelControlStatus: the discipline, and per loaded model (not internal to a meta) its
  /// weight bytes (a meta model's: the sum of its callees'), max batch
  /// (largest compiled size, capped by scheduler.models.<m>.max_batch_size), queue depth
  /// and the scheduler's serving counters.
  Result<protocol::ControlStatus> controlStatus() const override;
  /// Triton ModelStatistics (server/model_statistics.h) of `name`, or of every loaded
  /// model but those internal to a meta (sorted by name) when `name` is empty. NotFound for
  /// a model that is not loaded or is internal to a meta. A meta model's statistics count
  /// its requests, and each successful one as one execution of one inference at batch size
  /// 0 whose compute time is the sum of its calls' times and whose queue time is its wait
  /// for a run slot; each call also counts in its callee's own statistics.
  Result<std::vector<protocol::ModelStatistics>>
  modelStatistics(const std::string &name) const override;
  /// SetModelPolicy: the fair weight (scheduler.models.<m>.weight) when set. NotFound for
  /// a model that is not loaded; FailedPrecondition for a weight that is not finite and > 0.
  Status setModelPolicy(const std::string &name, std::optional<double> weight) override;
  /// SetModelResidency (reference-system.md §5.3): FailedPrecondition on a self-managed
  /// worker (model_control_mode static or dynamic); NotFound for a model that is not
  /// loaded or is internal to a meta model; else the weight cache's floor for it changes
  /// (runtime/weight_cache.h), and for a meta model its callees' (applyGroupResidency).
  Result<protocol::Residency> setModelResidency(const std::string &name,
                                                protocol::Residency target) override;
  /// The weight cache (tests read its counters).
  const runtime::WeightCache &weightCache() const { return weight_cache_; }
  /// The scheduler's state of `model` (tests read its queue); nullopt for a model it does
  /// not serve.
  std::optional<scheduler::ModelSchedStats> schedulerStats(const std::string &model) const {
    return scheduler_.stats(model);
  }

  /// KServe RepositoryModelLoad: loadModel() of the bundle `name` found in model_dirs.
  /// Errors: FailedPrecondition unless model_control_mode is explicit; NotFound when no
  /// repository holds a directory `name` (or models_include excludes it); the load's error.
  Status repositoryLoad(const std::string &name) override;
  /// KServe RepositoryModelUnload: unloadModel(). FailedPrecondition unless explicit, and for
  /// a model internal to a loaded meta model (unload the meta first).
  Status repositoryUnload(const std::string &name) override;

private:
  /// Per-model admission gate: requests admitted and not yet answered, and whether the
  /// model is being unloaded (new requests then get NotFound).
  struct Gate {
    int64_t inflight = 0;
    bool closing = false;
  };
  /// `name`'s configured residency floor, or the default.
  runtime::Residency residencyOf(const std::string &name) const;
  /// Admits one request of `name` (false while it is being unloaded); the returned gate
  /// is released with leave().
  std::shared_ptr<Gate> enter(const std::string &name);
  void leave(const std::shared_ptr<Gate> &gate);

  /// Who sends a request: a client, or a meta model's run (a committed request that may
  /// reach a model internal to a meta).
  enum class Sender : uint8_t { kClient, kMetaCall };
  /// infer() for `sender`.
  void route(protocol::InferRequest request, protocol::InferCallback done, Sender sender);
  /// Queues a validated request on the scheduler: committed for a meta call.
  void schedule(Sender sender, const std::string &model, std::vector<Tensor> inputs,
                std::optional<protocol::Clock::time_point> deadline, scheduler::DoneFn done,
                CancellationPtr cancel);

  /// The request path of a model with model.py hooks (server/hooked_infer.cc); `done`
  /// counts the answer. `prefix` starts every error (requestPrefix).
  void inferWithHooks(std::shared_ptr<const runtime::LoadedModel> model,
                      std::shared_ptr<const hooks::HookPool> pool, protocol::InferRequest request,
                      std::string prefix, protocol::InferCallback done, Sender sender);

  /// The request path of a meta model (server/meta_infer.cc), and one of its calls of
  /// `callee` (run on a hook pool thread, which it blocks until the call is answered).
  void inferMeta(std::shared_ptr<const runtime::LoadedModel> model,
                 std::shared_ptr<const hooks::HookPool> pool, protocol::InferRequest request,
                 std::string prefix, protocol::InferCallback done);
  Result<std::vector<protocol::NamedTensor>>
  metaCall(const runtime::LoadedModel &meta, const std::string &callee,
           std::vector<protocol::NamedTensor> inputs,
           std::optional<protocol::Clock::time_point> deadline);
  /// Whether loaded meta model `meta` may serve (server/meta_infer.cc): every model of its
  /// meta.calls loaded and not a meta (FailedPrecondition naming the meta and the callee),
  /// and under meta_warmup its run's warm-up (hooks/hook_warmup.h). Its callees must be
  /// registered with the scheduler.
  Status checkMeta(const runtime::LoadedModel &meta);
  /// Recomputes which models are internal to a meta model from the repository's loaded
  /// meta models (after every load, unload and rename).
  void refreshInternal();
  /// Sets the residency of every model a loaded meta model calls to the strongest of its own
  /// configured floor and its metas' residencies (the group placement of reference §10).
  void applyGroupResidency();
  /// The meta model `name` is internal to, if any.
  std::optional<std::string> internalTo(const std::string &name) const;
  /// OK, or NotFound for a client's request of `name` when it is internal to a meta model.
  Status servedDirectly(const std::string &name) const;
  /// The MetaGate of meta model `name`, made on first use and kept as long as the service
  /// (a rename or reload of the meta keeps its runs' slots valid).
  MetaGate *metaGate(const std::string &name);

  /// The `model` label of `name`: itself for a known model, "" otherwise.
  std::string metricsModel(const std::string &name) const;

  runtime::ModelRepository &repository_;
  scheduler::Discipline discipline_; // for ModelControlStatus
  Admission admission_;
  frontend::RequestErrorLog request_log_;
  protocol::SharedMemoryRegistry shared_memory_;
  WorkerMetrics metrics_;
  std::vector<std::string> model_dirs_;
  std::vector<std::string> models_include_;
  bool explicit_control_ = false;
  bool system_shared_memory_ = false;
  int64_t max_queue_delay_us_ = 0; // scheduler.max_queue_delay_microseconds
  int64_t device_ordinal_ = 0;
  int64_t meta_concurrency_ = 2;
  bool meta_warmup_ = false;
  std::atomic<bool> startup_done_{false};
  std::mutex control_mu_; // serializes loadModel / unloadModel / renameModel
  std::mutex gate_mu_;
  std::condition_variable gate_cv_;
  std::map<std::string, std::shared_ptr<Gate>> gates_; // GUARDED_BY(gate_mu_)
  mutable std::mutex meta_mu_;
  std::map<std::string, std::string> internal_;                 // GUARDED_BY(meta_mu_)
  std::map<std::string, std::unique_ptr<MetaGate>> meta_gates_; // GUARDED_BY(meta_mu_)
  std::map<std::string, runtime::Residency> residency_config_;
  runtime::Residency default_residency_;
  ModelStatisticsTable statistics_;
  runtime::WeightCache weight_cache_;
  scheduler::Scheduler scheduler_;
};

} // namespace rs::server
