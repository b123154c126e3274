//===- test/common/model_stream.h - One pipelined ModelStreamInfer stream ---===//
//
// Triton's ModelStreamInfer as a pipelining client uses it: every request written before
// any answer is read, then a half-close, then every answer read until the stream ends. For
// the tests that check a worker's or the gateway's stream answers each request in order.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/proto/grpc_service.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <vector>

namespace rs::testing {

/// What one stream gave: its answers in the order they came, and how it ended.
struct StreamAnswers {
  std::vector<inference::ModelStreamInferResponse> answers;
  grpc::Status finished;
};

/// Writes `requests`, `rounds` times over, on one ModelStreamInfer stream of `stub`, then
/// half-closes and reads until the stream ends. A write that fails stops the writing (the
/// answers then fall short).
StreamAnswers pipelineStream(inference::GRPCInferenceService::Stub &stub,
                             const std::vector<inference::ModelInferRequest> &requests, int rounds);

} // namespace rs::testing
