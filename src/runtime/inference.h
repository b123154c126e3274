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

/// A model's serving state for the control plane (reactant_control.ModelControlStatus,
/// reference-system.md section 5.3). Counters are cumulative since the service started.
struct ModelControlInfo {
  std::string name;
  bool resident = false;             // loaded and able to run
  int64_t weight_nbytes = 0;         // bytes of the model's weights
  double weight = 1.0;               // scheduler weight (scheduler.models.<name>.weight)
  int64_t queue_depth = 0;           // requests queued now
  double total_compute_seconds = 0;  // wall time spent executing the model's programs
  uint64_t requests_served = 0;      // requests answered after a dispatch
  uint64_t dispatch_count = 0;       // program executions
  int64_t max_batch_size = 0;        // rows one dispatch runs at most; 0 = unbatched/unknown
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
};

} // namespace rs::runtime
