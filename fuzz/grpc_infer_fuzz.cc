//===- fuzz/grpc_infer_fuzz.cc - gRPC ModelInferRequest into tensors --------===//
//
// The input is a serialized inference.ModelInferRequest (as gRPC hands it over after
// protobuf parsing). It is decoded into tensors with the shared memory extension on,
// validated against fixture manifests, and its inputs encoded back as a response that
// must decode again.
//
//===----------------------------------------------------------------------===//
#include "fuzz_util.h"
#include "protocol/grpc_codec.h"
#include "server/request_validation.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  inference::ModelInferRequest msg;
  if (!msg.ParseFromArray(data, static_cast<int>(size)))
    return 0;
  rs::protocol::DecodeOptions options;
  options.now = rs::protocol::Clock::now();
  options.shared_memory = &rs::fuzz::registry();
  options.max_shared_memory_input_bytes = 1 << 20;
  rs::Result<rs::protocol::DecodedInferRequest> r =
      rs::protocol::decodeModelInferRequest(msg, options);
  if (!r.isOk())
    return 0;
  for (const rs::bundle::Manifest &m : rs::fuzz::manifests())
    (void)rs::server::validateRequest(m, r->request);
  rs::protocol::InferResponse resp;
  resp.model_name = r->request.model_name;
  resp.outputs = r->request.inputs;
  (void)rs::protocol::writeSharedMemoryOutputs(r->shared_memory_outputs, resp);
  inference::ModelInferResponse out;
  rs::protocol::encodeModelInferResponse(resp, &out);
  rs::Result<rs::protocol::InferResponse> back = rs::protocol::decodeModelInferResponse(out);
  if (!back.isOk() || back->outputs.size() != resp.outputs.size())
    std::abort(); // what we encode must decode
  return 0;
}
