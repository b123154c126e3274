//===- client/infer_io.h - Request files and output display for `infer` -----===//
//
// What the `infer` command reads and writes, kept apart from its CLI glue so it is tested:
//
//  - Request files: `.safetensors` (every tensor is an input, named as stored; dtype and
//    row-major shape as stored) or `.json` in the KServe V2 REST request form
//    (`{"id", "inputs":[{"name","shape","datatype","data"}], "outputs":[{"name"}]}`,
//    decoded and validated by protocol/http_codec.h, so the file means what it would mean
//    as a request body).
//  - Output files: `.safetensors` with the outputs in reply order and `__metadata__`
//    {"model_name", "model_version", "id"} (empty values left out).
//  - Display: one line per tensor, `name DTYPE [shape] = [v, v, ...]`, the first
//    `max_values` elements then `... (N values)`; FP16/BF16 shown as their float values,
//    BYTES elements as JSON strings (a byte that is not UTF-8 as U+FFFD). A BYTES output
//    has no safetensors form: saving one is InvalidArgument.
//
// Errors: NotFound for a missing file, InvalidArgument for an unknown extension or a bad
// request file (the message names the file), the safetensors codes of bundle/safetensors.h.
// Thread safety: pure functions (files aside).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/inference.h"
#include "support/status.h"

#include <cstddef>
#include <string>

namespace rs::client {

/// Reads the inputs (and, from JSON, the id and requested outputs) of a request for `model`.
Result<protocol::InferRequest> loadInferRequest(const std::string &path, const std::string &model);

/// Writes `response`'s outputs to a safetensors file at `path`.
Status saveInferOutputs(const std::string &path, const protocol::InferResponse &response);

/// `name DTYPE [shape] = [v, ...]` with at most `max_values` elements shown.
std::string describeTensor(const protocol::NamedTensor &tensor, size_t max_values);

} // namespace rs::client
