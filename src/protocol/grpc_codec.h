//===- protocol/grpc_codec.h - KServe V2 gRPC messages <-> request types ----===//
//
// Pure conversions between the `inference.GRPCInferenceService` messages
// (protocol/proto/grpc_service.proto) and the protocol-neutral request types
// (protocol/inference.h). Server side: decode ModelInferRequest, encode ModelInferResponse
// and metadata. Client side (the `infer` tool, gateway, tests): the reverse.
//
// Tensor data (KServe V2 gRPC "Tensor Data"): either every input is in
// `raw_input_contents` (one entry per input, same order; little-endian, row-major, no
// padding; BOOL one byte 0/1), or each input carries typed `contents` in the field of its
// datatype: BOOL bool_contents, INT8/INT16/INT32 int_contents, INT64 int64_contents,
// UINT8/UINT16/UINT32 uint_contents, UINT64 uint64_contents, FP32 fp32_contents, FP64
// fp64_contents, BYTES bytes_contents (one entry per element). FP16/BF16 travel raw only.
// A BYTES tensor's raw contents are its serialized form (protocol/bytes_tensor.h: each
// element a 4-byte little-endian length, then its bytes). Outputs are always encoded raw,
// in `raw_output_contents`.
//
// Shared memory (protocol/shared_memory.h): an input whose parameters name a
// `shared_memory_region` is read from that region and takes no raw or typed contents; the
// raw_input_contents entries then belong, in order, to the other inputs. A requested
// output naming a region is written there after the inference, and its reply entry
// carries the region parameters and an empty raw_output_contents entry (so the entries
// stay aligned with the outputs).
//
// Validation happens before any allocation sized by the client (wire_tensor.h), and every
// error is InvalidArgument (Unimplemented for classification, and for shared memory when
// no registry is given; FailedPrecondition for an unregistered region), with a message that
// starts with the model and request id and names the tensor and the reason, e.g.
//   model 'digits', request '7': input 'image': raw content has 100 bytes but shape
//   [1,8,8,1] of FP32 needs 256 bytes
//
// Request parameters: `reactant_timeout_ns` (int64) sets InferRequest::deadline (see
// deadline.h); `binary_data_output`, `binary_data` and other parameters are ignored.
// The gRPC call deadline is the server's to apply (steadyDeadline in deadline.h).
//
// Thread safety: pure functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/inference.h"
#include "protocol/proto/grpc_service.pb.h"
#include "protocol/shared_memory.h"
#include "support/status.h"

namespace rs::protocol {

// ---- Server side ------------------------------------------------------------

/// Decodes and validates a ModelInferRequest (rules above). Tensors are copied into owned,
/// aligned buffers. `now` anchors the `reactant_timeout_ns` parameter.
Result<InferRequest> decodeModelInferRequest(const inference::ModelInferRequest &msg,
                                             Clock::time_point now);

/// A decoded request and the outputs to write into shared memory after it runs.
struct DecodedInferRequest {
  InferRequest request;
  std::vector<SharedMemoryOutput> shared_memory_outputs;
};

/// As above, with shared-memory tensors resolved through `options.shared_memory`; with
/// `options.message_owner` set, raw inputs are views into `msg` (DecodeOptions).
Result<DecodedInferRequest> decodeModelInferRequest(const inference::ModelInferRequest &msg,
                                                    const DecodeOptions &options);

/// Fills `out` from `response`: model_name, model_version, id, and per output its name,
/// datatype, shape and bytes in raw_output_contents. `out` is cleared first.
void encodeModelInferResponse(const InferResponse &response, inference::ModelInferResponse *out);
/// As above, but each output in `shared_memory` (already written there) gets the region
/// parameters (shared_memory_region, shared_memory_byte_size = its bytes, and
/// shared_memory_offset when not 0) and an empty raw_output_contents entry.
void encodeModelInferResponse(const InferResponse &response,
                              std::span<const SharedMemoryOutput> shared_memory,
                              inference::ModelInferResponse *out);

/// Fills `out` (cleared first) from server metadata.
void encodeServerMetadata(const ServerMetadata &metadata, inference::ServerMetadataResponse *out);
/// Fills `out` (cleared first) from model metadata; shapes keep -1 for variable axes.
void encodeModelMetadata(const ModelMetadata &metadata, inference::ModelMetadataResponse *out);

// ---- Client side ------------------------------------------------------------

/// Builds a ModelInferRequest with every input in raw_input_contents and the requested
/// outputs (no parameters). The deadline is not encoded; set it on the ClientContext.
inference::ModelInferRequest encodeModelInferRequest(const InferRequest &request);

/// Decodes a ModelInferResponse (raw_output_contents or typed contents), validated with the
/// same rules as requests.
Result<InferResponse> decodeModelInferResponse(const inference::ModelInferResponse &msg);

} // namespace rs::protocol
