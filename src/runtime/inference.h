//===- runtime/inference.h - Requests, responses and the InferenceService ---===//
//
// The protocol-neutral request path (DESIGN.md "Request path"): protocol/ decodes gRPC
// or HTTP bytes into an InferRequest (tensors already checked for byte length vs shape),
// calls InferenceService::infer(), and encodes the InferResponse or the Status. Shapes
// are row-major (wire order); the batch axis of a batched model is axis 0.
//
// Error codes (mapped once in protocol/): NotFound for an unknown model; InvalidArgument
// for a request that does not match the model's inputs (message names the tensor and
// the reason); ResourceExhausted for a full queue; DeadlineExceeded; Internal otherwise.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"
#include "support/tensor.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rs::runtime {

using Clock = std::chrono::steady_clock;

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

struct InferRequest {
  std::string model_name;
  std::string model_version; // accepted and ignored (bundles have no versions)
  std::string id;            // echoed back in the response
  std::vector<NamedTensor> inputs;
  /// When non-empty, exactly these outputs in this order; unknown names are an error.
  std::vector<std::string> requested_outputs;
  std::optional<Clock::time_point> deadline;
};

struct InferResponse {
  std::string model_name;
  std::string model_version;
  std::string id;
  std::vector<NamedTensor> outputs;
};

using InferCallback = std::function<void(Result<InferResponse>)>;

/// A wire-facing tensor description: row-major shape with -1 for the batch axis.
struct TensorSpec {
  std::string name;
  DType dtype = DType::kInvalid;
  Shape shape;
};

struct ModelMetadata {
  std::string name;
  std::vector<std::string> versions; // empty: bundles have no versions
  std::string platform;              // "cpu" or "cuda"
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
};

struct ServerMetadata {
  std::string name;    // "ReactantServer"
  std::string version; // project version
  std::vector<std::string> extensions;
};

/// Readiness of one model: `ready` false carries the reason (load error, still loading).
struct ModelReadiness {
  bool ready = false;
  std::string reason;
};

/// One entry of the repository index (KServe RepositoryIndex): a model the service knows.
struct ModelIndexEntry {
  std::string name;
  bool ready = false;
  std::string reason; // why it is not ready ("" when ready)
};

/// A model's weight residency floor (reference-system.md §3.3; the values are
/// reactant_control.Residency's). On the CPU backend (runtime/weight_cache.h): kPinnedDevice
/// keeps the weights touched in and mlocked for the model's lifetime; kPinnedSystem and
/// kUnpinned are managed by the weight cache, an evicted kUnpinned model's pages also
/// being marked cold (left to the page cache).
enum class Residency : uint8_t { kUnpinned = 1, kPinnedSystem = 2, kPinnedDevice = 3 };

/// "unpinned", "system" or "device" (the config spelling).
inline const char *residencyName(Residency r) {
  switch (r) {
  case Residency::kUnpinned: return "unpinned";
  case Residency::kPinnedSystem: return "system";
  case Residency::kPinnedDevice: return "device";
  }
  return "unknown";
}

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
  std::string version;            // "" (bundles have no versions)
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

/// What the protocol front-ends call. Implementations must be thread-safe: gRPC and HTTP
/// handler threads call concurrently.
class InferenceService {
public:
  virtual ~InferenceService() = default;
  virtual bool serverLive() const = 0;
  /// True when at least one model is known and every model that should load has loaded.
  virtual bool serverReady() const = 0;
  virtual ServerMetadata serverMetadata() const = 0;
  /// NotFound for an unknown model.
  virtual Result<ModelMetadata> modelMetadata(const std::string &model_name) const = 0;
  /// NotFound for an unknown model; a model whose load failed is known, not ready.
  virtual Result<ModelReadiness> modelReady(const std::string &model_name) const = 0;
  /// Validates and queues the request; `done` is called exactly once, possibly on
  /// another thread, possibly before infer() returns.
  virtual void infer(InferRequest request, InferCallback done) = 0;
  /// Every model the service knows, sorted by name (the default lists none).
  virtual std::vector<ModelIndexEntry> listModels() const { return {}; }
  /// The control plane's view of every model. The default: Unimplemented.
  virtual Result<ControlStatus> controlStatus() const {
    return unimplemented() << "ModelControlStatus is not implemented by this service";
  }
  /// KServe repository extension: loads (or reloads) model `name` from the repository.
  /// The default: Unimplemented.
  virtual Status repositoryLoad(const std::string &name) {
    return unimplemented() << "RepositoryModelLoad of '" << name
                           << "' is not implemented by this service";
  }
  /// KServe repository extension: unloads model `name`. The default: Unimplemented.
  virtual Status repositoryUnload(const std::string &name) {
    return unimplemented() << "RepositoryModelUnload of '" << name
                           << "' is not implemented by this service";
  }
  /// Triton ModelStatistics of model `name`, or of every loaded model when `name` is
  /// empty. NotFound for an unknown model. The default: Unimplemented.
  virtual Result<std::vector<ModelStatistics>> modelStatistics(const std::string &name) const {
    return unimplemented() << "ModelStatistics of '" << name
                           << "' is not implemented by this service";
  }
  /// reactant_control SetModelPolicy: the model's fair weight (> 0) when `weight` is set.
  /// NotFound for an unknown model, FailedPrecondition for a bad weight.
  virtual Status setModelPolicy(const std::string &name, std::optional<double> weight) {
    (void)weight;
    return unimplemented() << "SetModelPolicy of '" << name
                           << "' is not implemented by this service";
  }
  /// reactant_control SetModelResidency: sets the model's residency floor; returns the
  /// residency now in force. NotFound for an unknown model; FailedPrecondition on a
  /// self-managed worker (model_control_mode static or dynamic).
  virtual Result<Residency> setModelResidency(const std::string &name, Residency target) {
    (void)target;
    return unimplemented() << "SetModelResidency of '" << name
                           << "' is not implemented by this service";
  }
};

} // namespace rs::runtime
