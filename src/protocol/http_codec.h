//===- protocol/http_codec.h - KServe V2 REST bodies <-> request types -------===//
//
// Pure conversions between KServe V2 HTTP/REST inference bodies and the request types
// (protocol/inference.h), with the binary tensor data extension (KServe V2 "Binary Tensor
// Data Extension", Triton docs/protocol/extension_binary_data.md).
//
// Request body: JSON
//   {"id": "...", "parameters": {"binary_data_output": true, "reactant_timeout_ns": N},
//    "inputs": [{"name", "shape", "datatype", "data": [...] | "parameters":
//                {"binary_data_size": N}}],
//    "outputs": [{"name", "parameters": {"binary_data": true}}]}
// When the header `Inference-Header-Content-Length: L` is present, the first L bytes of
// the body are the JSON and the rest holds, in input order, the raw bytes of every input
// that declares `binary_data_size` (little-endian, row-major, no padding, BOOL one byte;
// BYTES in its serialized form, protocol/bytes_tensor.h). BYTES `data` is JSON strings.
// (`Inference-Header-Content-Length: 0`, a raw binary request, is protocol/http_raw_request.h.)
//
// Validation, all before any allocation sized by the client: L is a decimal number no
// larger than the body; the JSON parses; every tensor's datatype and shape pass
// checkWireTensor(); each binary_data_size equals the shape's byte size; no tensor's bytes
// run past the body (the first that would is named) and the binary sizes sum to exactly
// the bytes after the JSON; `data` element counts,
// nesting and element types fit the shape and datatype (json_tensor.h). Errors are
// InvalidArgument (Unimplemented for classification, and for shared memory when no registry
// is given; FailedPrecondition for an unregistered region) and start with the model and
// request id, then name the tensor and the reason.
//
// Shared memory (protocol/shared_memory.h): an input whose `parameters` name a
// `shared_memory_region` (with `shared_memory_byte_size`, optional `shared_memory_offset`)
// has neither `data` nor `binary_data_size` and is read from the region; a requested output
// naming a region is written there after the inference, and its reply entry has the region
// parameters (`shared_memory_byte_size` = the output's bytes) and no data.
//
// Response body: {"model_name", "model_version", "id" (when set), "outputs": [{"name",
// "datatype", "shape", "data"}]}. An output goes binary (`parameters: {"binary_data_size":
// N}` and bytes after the JSON, with Inference-Header-Content-Length set) when the client
// asked for it (per-output `binary_data` overrides the request's `binary_data_output`), and
// also, whatever was asked, when it has no exact JSON form (FP16, BF16, a NaN or infinity,
// a BYTES element that is not UTF-8).
//
// Thread safety: pure functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/inference.h"
#include "protocol/shared_memory.h"
#include "support/status.h"

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rs::protocol {

/// The header giving the JSON length of a body with binary tensors after it.
inline constexpr const char *kInferenceHeaderContentLength = "Inference-Header-Content-Length";

/// How the client wants outputs returned.
struct OutputEncoding {
  /// Request parameter `binary_data_output`.
  bool binary_by_default = false;
  /// Per requested output, its `binary_data` parameter when given.
  std::vector<std::pair<std::string, bool>> per_output;

  /// The choice for output `name` (per-output setting, else the default).
  bool binaryFor(std::string_view name) const;
};

/// A decoded REST inference request.
struct HttpInferRequest {
  InferRequest request;
  OutputEncoding output_encoding;
  /// Outputs to write into shared memory after the inference.
  std::vector<SharedMemoryOutput> shared_memory_outputs;
};

/// A REST body: JSON, then binary tensors when `json_length` is set (its value goes in the
/// Inference-Header-Content-Length header).
struct HttpBody {
  std::string body;
  std::optional<size_t> json_length;
};

/// The model addressed by the URL (`/v2/models/{name}[/versions/{version}]/infer`).
struct ModelRef {
  std::string name;
  std::string version;
};

// ---- Server side ------------------------------------------------------------

/// Decodes and validates a REST inference request body (rules above). `header_length` is
/// the raw Inference-Header-Content-Length header value, if present; `now` anchors the
/// `reactant_timeout_ns` parameter.
Result<HttpInferRequest> decodeHttpInferRequest(const ModelRef &model, std::string_view body,
                                                std::optional<std::string_view> header_length,
                                                Clock::time_point now);
/// As above, with shared-memory tensors resolved through `options.shared_memory`.
Result<HttpInferRequest> decodeHttpInferRequest(const ModelRef &model, std::string_view body,
                                                std::optional<std::string_view> header_length,
                                                const DecodeOptions &options);

/// Encodes a response (rules above).
HttpBody encodeHttpInferResponse(const InferResponse &response, const OutputEncoding &encoding);
/// As above; the outputs in `shared_memory` (already written there) get the region
/// parameters instead of data.
HttpBody encodeHttpInferResponse(const InferResponse &response, const OutputEncoding &encoding,
                                 std::span<const SharedMemoryOutput> shared_memory);

/// `{"name","version","extensions":[...]}`.
std::string serverMetadataJson(const ServerMetadata &metadata);
/// `{"name","versions":[...],"platform","inputs":[{"name","datatype","shape"}],"outputs":[...]}`.
std::string modelMetadataJson(const ModelMetadata &metadata);

// ---- Client side ------------------------------------------------------------

/// Encodes a request: inputs as binary data when `binary_inputs` (or when a tensor has no
/// exact JSON form), else as flat JSON `data`; requested outputs with their `binary_data`
/// choice from `outputs`, whose default becomes `binary_data_output`.
HttpBody encodeHttpInferRequest(const InferRequest &request, bool binary_inputs,
                                const OutputEncoding &outputs);

/// Decodes a response body (JSON `data` or binary outputs), validated like requests.
Result<InferResponse> decodeHttpInferResponse(std::string_view body,
                                              std::optional<std::string_view> header_length);

} // namespace rs::protocol
