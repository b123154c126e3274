//===- frontend/grpc_stream.h - Triton's ModelStreamInfer ---------------------===//
//
// `inference.GRPCInferenceService/ModelStreamInfer` (Triton's streaming extension,
// decoupled-free): a bidirectional stream of ModelInferRequests, each answered by one
// ModelStreamInferResponse, in the order the requests arrived. Each request runs as a unary
// ModelInfer would (the same decode, deadline and service call: GrpcServer's handler); the
// next request is read while earlier ones run, so a client may pipeline. A request that
// fails is answered with its error in `error_message` (and `infer_response` carrying only
// the model name, version and id, so the client can tell which request it was); the stream
// goes on. Once the client half-closes and every answer is written, the stream ends OK. A
// client that cancels or goes away ends the stream: requests already running finish and
// their answers are dropped.
//
// Runs on the front-end's completion queue (frontend/grpc_call_step.h): every step of a
// stream is a tag the server's polling threads proceed, and the inference answers arrive
// on whatever thread the service completes them.
//
// Thread safety: the steps of one stream are serialized by its own mutex.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/proto/grpc_service.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>

namespace rs::frontend {

/// Runs one ModelInfer: fills *resp and calls the reply exactly once (OK sends *resp, any
/// other status the error), before it returns or later, possibly on another thread. `resp`
/// stays valid until then.
using StreamInferFn = std::function<void(
    const grpc::ServerContext &, std::shared_ptr<const inference::ModelInferRequest>,
    inference::ModelInferResponse *, std::function<void(const grpc::Status &)>)>;

/// What serveModelStreamInfer needs for as long as a stream may run.
struct StreamInferMethod {
  inference::GRPCInferenceService::AsyncService *service = nullptr;
  grpc::ServerCompletionQueue *cq = nullptr;
  StreamInferFn infer;
  /// Called when a stream begins, and when it has ended and holds nothing (the server's
  /// shutdown waits for every begun stream to end).
  std::function<void()> started;
  std::function<void()> ended;
};

/// Accepts ModelStreamInfer streams of `method.service` (registered on a started server) on
/// `method.cq`: keeps one stream requested, and requests the next as each one arrives.
void serveModelStreamInfer(std::shared_ptr<const StreamInferMethod> method);

} // namespace rs::frontend
