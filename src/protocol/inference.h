//===- protocol/inference.h - Requests, responses and model metadata --------===//
//
// The protocol-neutral request path (DESIGN.md "Request path"): protocol/ decodes gRPC
// or HTTP bytes into an InferRequest (tensors already checked for byte length vs shape),
// calls InferenceService::infer() (protocol/service.h), and encodes the InferResponse or
// the Status. Shapes are row-major (wire order); the batch axis of a batched model is
// axis 0.
//
// Thread safety: plain values.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/bytes_tensor.h"
#include "support/cancellation.h"
#include "support/status.h"
#include "support/tensor.h"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rs::protocol {

/// The clock of request arrival times and deadlines.
using Clock = std::chrono::steady_clock;

/// A named tensor of a request or response: a numeric `tensor`, or for datatype BYTES the
/// elements in `bytes` (`tensor` then invalid). Copies share the data.
struct NamedTensor {
  std::string name;
  Tensor tensor;
  std::shared_ptr<const BytesTensor> bytes = nullptr;

  static NamedTensor ofBytes(std::string name, BytesTensor bytes);
  bool isBytes() const { return bytes != nullptr; }
  const Shape &shape() const { return bytes ? bytes->shape() : tensor.shape(); }
  /// The KServe V2 datatype: "BYTES", or the tensor's ("FP32").
  std::string_view datatype() const;
  /// Bytes on the wire: the tensor's bytes, or the serialized BYTES elements.
  uint64_t wireByteSize() const;
};

struct InferResponse;

struct InferRequest {
  std::string model_name;
  std::string model_version; // "" or protocol::kModelVersion (protocol/model_config.h)
  std::string id;            // echoed back in the response
  std::vector<NamedTensor> inputs;
  /// When non-empty, exactly these outputs in this order; unknown names are an error.
  std::vector<std::string> requested_outputs;
  std::optional<Clock::time_point> deadline;
  /// When the front-end received the request, before decoding it (the decode stage of
  /// worker_request_stage_seconds_total); unset: not measured.
  std::optional<Clock::time_point> received;
  /// Set by the front-end: makes the response what the client receives (shared-memory
  /// outputs written, the reply encoded and checked against the message size limit) and
  /// returns the error the client gets instead when that fails. A service calls it on a
  /// successful response before it counts the answer, so every answer
  /// is counted under the status the client sees; the front-end calls it when the service
  /// did not.
  std::function<Status(const InferResponse &)> deliver;
  /// Set by the front-end: raised when the client has gone (a cancelled gRPC call, an HTTP
  /// connection closed while the request waits). A service drops a queued request whose
  /// flag is raised and answers Cancelled; null: the request cannot be cancelled.
  CancellationPtr cancel;
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
  /// The batch axis (its dim is -1 in `shape`), unset for an unbatched model or when the
  /// service does not know it.
  std::optional<int> batch_axis = std::nullopt;
  /// Datatype BYTES (`dtype` is then kInvalid): a model.py hook's wire-facing tensor.
  bool bytes = false;

  /// The KServe V2 datatype: "BYTES", or the dtype's ("FP32").
  std::string_view datatype() const;
};

struct ModelMetadata {
  std::string name;
  std::vector<std::string> versions; // a loaded model: {kModelVersion} (protocol/model_config.h)
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

} // namespace rs::protocol
