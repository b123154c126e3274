//===- protocol/service.h - The contracts the front-ends call ---------------===//
//
// Two interfaces, both implemented by the worker (server/worker_service.h) and, for what a
// reverse proxy offers, by the gateway's REST front-end:
//
//   InferenceService  the serving interface: liveness, readiness, metadata, Triton's model
//                     configuration, inference (KServe V2 health, metadata and infer).
//   ModelControl      the control plane: the repository index, load and unload (KServe
//                     repository extension), Triton's statistics, the reactant_control
//                     status, policy and residency. A service offers what it overrides;
//                     every other call answers Unimplemented, as a gRPC service does for
//                     an RPC it does not implement.
//
// Error codes (mapped once, protocol/status_mapping.h): NotFound for an unknown model;
// InvalidArgument for a request that does not match the model's inputs (the message names
// the tensor and the reason); ResourceExhausted for a full queue; DeadlineExceeded;
// FailedPrecondition for a control call the service's mode refuses; Internal otherwise.
//
// Thread safety: implementations must be thread-safe; gRPC and HTTP handler threads call
// concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/inference.h"
#include "protocol/model_config.h"
#include "support/status.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rs::protocol {

//===----------------------------------------------------------------------===//
// Serving
//===----------------------------------------------------------------------===//

class InferenceService {
public:
  virtual ~InferenceService() = default;
  virtual bool serverLive() const = 0;
  /// Whether the server takes inference requests (each service documents its policy).
  virtual bool serverReady() const = 0;
  virtual ServerMetadata serverMetadata() const = 0;
  /// NotFound for an unknown model.
  virtual Result<ModelMetadata> modelMetadata(const std::string &model_name) const = 0;
  /// NotFound for an unknown model; a model whose load failed is known, not ready.
  virtual Result<ModelReadiness> modelReady(const std::string &model_name) const = 0;
  /// Triton's model configuration (protocol/model_config.h). NotFound for an unknown
  /// model, Unavailable for one that is not loaded. Not offered (the default): Unimplemented.
  virtual Result<ModelConfiguration> modelConfig(const std::string &model_name) const;
  /// Validates and queues the request; `done` is called exactly once, possibly on
  /// another thread, possibly before infer() returns.
  virtual void infer(InferRequest request, InferCallback done) = 0;
};

/// The datatype (wire name) `service`'s metadata gives input `input` of model `model`, ""
/// when the model or input is unknown: DecodeOptions::expected_datatype of a request for
/// `model`. `service` must outlive the function.
std::function<std::string(const std::string &input)>
expectedDatatypes(const InferenceService &service, std::string model);

//===----------------------------------------------------------------------===//
// Model control: what it reports
//===----------------------------------------------------------------------===//

/// One entry of the repository index (KServe RepositoryIndex): a model the service knows.
struct ModelIndexEntry {
  std::string name;
  bool ready = false;
  std::string reason; // why it is not ready ("" when ready)
};

/// A model's weight residency floor as the control plane names it (reference-system.md
/// §3.3; the values are reactant_control.Residency's).
enum class Residency : uint8_t { kUnpinned = 1, kPinnedSystem = 2, kPinnedDevice = 3 };

/// A count and a cumulative duration (Triton's StatisticDuration).
struct DurationStat {
  uint64_t count = 0;
  uint64_t ns = 0;
  void add(double seconds) {
    ++count;
    ns += static_cast<uint64_t>(seconds > 0 ? seconds * 1e9 : 0);
  }
};

/// Per compiled batch size: executions and their phase durations (InferBatchStatistics).
struct BatchStatistics {
  uint64_t batch_size = 0;
  DurationStat compute_input, compute_infer, compute_output;
};

/// Triton's ModelStatistics for one model, cumulative since it was loaded (a reload keeps
/// them; a rename moves them). Request phases: success / fail (arrival to answer), queue
/// (submit to dispatch), compute_input (weights made resident, rows gathered), compute_infer
/// (the program), compute_output (rows sliced out); every request of a dispatch gets the
/// dispatch's compute durations, as Triton counts them.
struct ModelStatistics {
  std::string name;
  std::string version;            // kModelVersion (protocol/model_config.h)
  uint64_t last_inference_ms = 0; // ms since the Unix epoch of the last answer; 0 = none
  uint64_t inference_count = 0;   // rows answered successfully
  uint64_t execution_count = 0;   // successful dispatches
  DurationStat success, fail, queue, compute_input, compute_infer, compute_output;
  std::vector<BatchStatistics> batch_stats; // ascending batch size
};

/// A model's serving state for the control plane (reactant_control.ModelControlStatus,
/// reference-system.md section 5.3). Counters are cumulative since the service started.
struct ModelControlInfo {
  std::string name;
  Residency residency = Residency::kUnpinned; // the model's residency floor
  bool resident = false;            // weights resident now (always, without a cache budget)
  bool host_resident = false;       // weights in host memory (the mapping: while loaded)
  int64_t weight_nbytes = 0;        // bytes of the model's weights
  double weight = 1.0;              // scheduler weight (scheduler.models.<name>.weight)
  int64_t queue_depth = 0;          // requests queued now
  double total_compute_seconds = 0; // wall time spent executing the model's programs
  uint64_t requests_served = 0;     // requests answered after a dispatch
  uint64_t dispatch_count = 0;      // program executions
  int64_t max_batch_size = 0;       // rows one dispatch runs at most; 0 = unbatched/unknown
};

/// The worker-level part of ModelControlStatus.
struct ControlStatus {
  std::string residency_mode = "self_managed"; // or "externally_managed"
  std::string discipline = "fifo";             // scheduler.discipline
  uint64_t weight_cache_max_bytes = 0;         // 0 = no on-demand budget
  std::vector<ModelControlInfo> models;        // sorted by name
};

//===----------------------------------------------------------------------===//
// Model control
//===----------------------------------------------------------------------===//

class ModelControl {
public:
  virtual ~ModelControl() = default;
  /// Every model the service knows, sorted by name. Not offered: none.
  virtual std::vector<ModelIndexEntry> listModels() const;
  /// KServe repository extension: loads (or reloads) model `name` from the repository.
  virtual Status repositoryLoad(const std::string &name);
  /// KServe repository extension: unloads model `name`.
  virtual Status repositoryUnload(const std::string &name);
  /// Triton ModelStatistics of model `name`, or of every loaded model when `name` is
  /// empty. NotFound for an unknown model.
  virtual Result<std::vector<ModelStatistics>> modelStatistics(const std::string &name) const;
  /// The control plane's view of every model.
  virtual Result<ControlStatus> controlStatus() const;
  /// reactant_control SetModelPolicy: the model's fair weight (> 0) when `weight` is set.
  /// NotFound for an unknown model, FailedPrecondition for a bad weight.
  virtual Status setModelPolicy(const std::string &name, std::optional<double> weight);
  /// reactant_control SetModelResidency: sets the model's residency floor; returns the
  /// residency in force afterwards. NotFound for an unknown model; FailedPrecondition on a
  /// self-managed worker (model_control_mode static or dynamic).
  virtual Result<Residency> setModelResidency(const std::string &name, Residency target);
};

/// A ModelControl that offers nothing: every call answers as above for a call not offered.
/// For a front-end whose service has no control plane.
ModelControl &noModelControl();

} // namespace rs::protocol
