//===- fuzz/http_infer_fuzz.cc - KServe V2 JSON inference body --------------===//
//
// The input is a JSON request body (no binary part). It is decoded with the shared memory
// extension on (fuzz_util.h's regions), validated against fixture manifests, and its
// inputs are encoded back as a response, JSON and binary.
//
//===----------------------------------------------------------------------===//
#include "fuzz_util.h"
#include "protocol/http_codec.h"
#include "server/request_validation.h"

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view body(reinterpret_cast<const char *>(data), size);
  rs::protocol::DecodeOptions options;
  options.now = rs::protocol::Clock::now();
  options.shared_memory = &rs::fuzz::registry();
  options.max_shared_memory_input_bytes = 1 << 20;
  rs::Result<rs::protocol::HttpInferRequest> r =
      rs::protocol::decodeHttpInferRequest({"m", ""}, body, std::nullopt, options);
  if (!r.isOk())
    return 0;
  for (const rs::bundle::Manifest &m : rs::fuzz::manifests())
    (void)rs::server::validateRequest(m, r->request);
  rs::protocol::InferResponse resp;
  resp.model_name = "m";
  resp.id = r->request.id;
  resp.outputs = r->request.inputs;
  (void)rs::protocol::writeSharedMemoryOutputs(r->shared_memory_outputs, resp);
  (void)rs::protocol::encodeHttpInferResponse(resp, r->output_encoding, r->shared_memory_outputs);
  rs::protocol::OutputEncoding binary;
  binary.binary_by_default = true;
  (void)rs::protocol::encodeHttpInferResponse(resp, binary);
  return 0;
}
