//===- client/load_requests.h - loadgen request kinds (internal) -------===//
//
// Internal to loadgen (load_generator.cc, load_client.cc, load_requests.cc): the model
// description, the request kinds, and builders that turn a payload into the wire request
// of a kind.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/inference.h"
#include "protocol/proto/grpc_service.pb.h"
#include "support/status.h"

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace rs::client::loadgen {

enum class Proto : uint8_t { kGrpc, kHttp };

/// The model under load, from its metadata (row-major shapes, -1 for the batch axis).
struct Model {
  std::string name;
  std::vector<protocol::TensorSpec> inputs;
  std::vector<protocol::TensorSpec> outputs;
};

/// One payload: inputs with `rows` rows and the shapes and sizes of the outputs.
struct Payload {
  std::vector<protocol::NamedTensor> inputs;
  std::vector<Shape> output_shapes;
  std::vector<int64_t> output_bytes;
};

/// One client's shared memory: an object with an input window (region `in_region`) and an
/// output window (region `out_region`), each tensor at its offset inside its window.
struct ClientShm {
  std::string key;
  std::string in_region;
  std::string out_region;
  uint64_t in_size = 0;
  uint64_t out_size = 0;
  std::vector<uint64_t> input_offsets;
  std::vector<uint64_t> output_offsets;
  int fd = -1;
};

struct KindSpec {
  std::string name;
  Proto proto = Proto::kGrpc;
  bool malformed = false;
  bool shm = false;
  /// The answer a malformed request must get (kOk for valid kinds).
  StatusCode expected = StatusCode::kOk;
};

/// Every kind for the protocols in use, valid ones first.
std::vector<KindSpec> allKinds(bool grpc, bool http, bool shm);

/// An HTTP request: POST `path` with `body` and optional Inference-Header-Content-Length.
struct HttpCall {
  std::string path;
  std::string body;
  std::optional<std::string> header_length;
};

/// What one request sends.
struct WireRequest {
  inference::ModelInferRequest grpc;
  HttpCall http;
};

/// Builds the request of `kind` for `payload`; `serial` makes unknown model names unique.
/// `shm` is the client's shared memory (kinds with shm only).
WireRequest buildRequest(const KindSpec &kind, const Model &model, const Payload &payload,
                         const ClientShm *shm, uint64_t serial);

/// Random inputs for `model` with `rows` rows (floats in [-1, 1), integers in [0, 4)).
Result<Payload> makePayload(const Model &model, int64_t rows, std::mt19937_64 &rng);

} // namespace rs::client::loadgen
