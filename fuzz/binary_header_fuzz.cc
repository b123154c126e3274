//===- fuzz/binary_header_fuzz.cc - Binary tensor data extension ------------===//
//
// Input: two bytes (little-endian) giving the Inference-Header-Content-Length value (0xffff:
// no header; 0xfffe: a non-numeric header), then the body: JSON followed by binary
// tensors. The decoder must check every binary_data_size against the body before copying.
// Decoded requests are encoded back and decoded again as a response (client side).
//
//===----------------------------------------------------------------------===//
#include "fuzz_util.h"
#include "protocol/http_codec.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2)
    return 0;
  const unsigned len = data[0] | (unsigned(data[1]) << 8);
  std::string_view body(reinterpret_cast<const char *>(data + 2), size - 2);
  std::optional<std::string> header;
  if (len == 0xfffe)
    header = "12x";
  else if (len != 0xffff)
    header = std::to_string(len);
  std::optional<std::string_view> h;
  if (header)
    h = *header;
  rs::protocol::DecodeOptions options;
  options.now = rs::protocol::Clock::now();
  options.shared_memory = &rs::fuzz::registry();
  rs::Result<rs::protocol::HttpInferRequest> r =
      rs::protocol::decodeHttpInferRequest({"m", "1"}, body, h, options);
  // The client side parses the same framing.
  (void)rs::protocol::decodeHttpInferResponse(body, h);
  if (!r.isOk())
    return 0;
  rs::protocol::InferResponse resp;
  resp.model_name = "m";
  resp.outputs = r->request.inputs;
  rs::protocol::OutputEncoding binary;
  binary.binary_by_default = true;
  rs::protocol::HttpBody out = rs::protocol::encodeHttpInferResponse(resp, binary);
  std::string length = out.json_length ? std::to_string(*out.json_length) : "";
  rs::Result<rs::protocol::InferResponse> back = rs::protocol::decodeHttpInferResponse(
      out.body, out.json_length ? std::optional<std::string_view>(length) : std::nullopt);
  if (!back.isOk() || back->outputs.size() != resp.outputs.size())
    std::abort(); // what we encode must decode
  return 0;
}
