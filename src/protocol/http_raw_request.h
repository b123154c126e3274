//===- protocol/http_raw_request.h - Triton's raw binary HTTP request -------===//
//
// The raw binary request of the binary tensor data extension (Triton
// docs/protocol/extension_binary_data.md, "Raw Binary Request"): a POST to
// /v2/models/{m}/infer with `Inference-Header-Content-Length: 0` has no JSON header; the
// whole body is the data of the model's single input (little-endian, row-major, no
// padding), and the request is what a JSON header would say with defaults for everything:
// no id, no parameters, every output requested, every output returned binary.
//
// The input's datatype and shape come from the model's metadata: the batch axis of a
// batched model is 1 (a batch-1 request), and at most one other axis may be variable
// (-1), whose size is the body's byte size divided by the bytes of one step along it.
//
// Errors (InvalidArgument, prefixed with the model): a model with more or fewer than one
// input; an input of more than one variable axis besides the batch axis; a body whose
// size is not the input's byte size (no variable axis) or not a whole multiple of one
// step (one variable axis), or empty with a variable axis (its size cannot be deduced).
//
// Thread safety: pure functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/http_codec.h"
#include "protocol/inference.h"
#include "support/status.h"

#include <optional>
#include <string_view>

namespace rs::protocol {

/// Whether the Inference-Header-Content-Length value `header_length` (when present) asks
/// for a raw binary request: a decimal number equal to 0.
bool isRawBinaryRequest(std::optional<std::string_view> header_length);

/// Decodes a raw binary request for `model`, whose metadata is `metadata` (rules above).
/// The body is copied into the input tensor.
Result<HttpInferRequest> decodeRawBinaryInferRequest(const ModelRef &model,
                                                     const ModelMetadata &metadata,
                                                     std::string_view body);

} // namespace rs::protocol
