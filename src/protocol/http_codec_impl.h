//===- protocol/http_codec_impl.h - REST body parts (private) ---------------===//
//
// What the server side (http_codec.cc) and the client side (http_client_codec.cc) of
// protocol/http_codec.h share, defined in http_body.cc: the split of a body into its JSON and
// binary parts, the "inputs"/"outputs" tensor entries decoded and encoded, and the finished
// body. Not API.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/http_codec.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rs::protocol::http_codec_detail {

/// `s` as a JSON string literal (invalid UTF-8 replaced).
std::string jsonString(std::string_view s);

/// Splits `body` into its JSON and binary parts according to the header value.
Status splitBody(std::string_view body, std::optional<std::string_view> header_length,
                 std::string_view &json_part, std::string_view &binary_part);

/// The tensor's shared-memory parameters, when `params` names a region (shared_memory.h).
Result<std::optional<SharedMemoryRef>> sharedMemoryParameters(const std::string &what,
                                                              const nlohmann::json &params,
                                                              const SharedMemoryRegistry *registry);

/// Decodes every entry of `list` ("inputs" or "outputs") taking binary parts from `binary`
/// and shared-memory data through `options` (nullptr: none).
Status decodeTensorList(const nlohmann::json &list, bool input, std::string_view binary,
                        bool has_header, const DecodeOptions *options,
                        std::vector<NamedTensor> &out);

/// Appends `{"name","datatype","shape", data or binary parameters}`; returns true when the
/// tensor's bytes go to the binary section. With `shm` (an output already written to
/// shared memory) the entry has neither data nor parameters, as Triton's reply: Triton's C++
/// HTTP client (perf_analyzer, Model Analyzer) takes an output's `parameters` to describe
/// binary data and fails on one without `binary_data_size`.
bool appendTensorEntry(const NamedTensor &t, bool binary, std::string &out,
                       const SharedMemoryOutput *shm = nullptr);

/// Finishes `json_text` + binary parts into a body.
HttpBody finishBody(std::string json_text, const std::vector<const NamedTensor *> &binary);

} // namespace rs::protocol::http_codec_detail
