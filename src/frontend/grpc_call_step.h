//===- frontend/grpc_call_step.h - One step of a call on the completion queue ===//
//
// The tag protocol of the gRPC front-end's completion queue (frontend/grpc_call_queue.h): every
// tag put on the queue is a CallStep, and the polling thread that takes it calls proceed().
// Shared by the unary calls (grpc_call_queue.h) and ModelStreamInfer (grpc_stream.cc). Not API.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace rs::frontend {

/// One step of a call on the completion queue; a pointer to it is the step's tag.
class CallStep {
public:
  virtual ~CallStep() = default;
  /// Runs on the polling thread that took the tag. `ok` is false when the server shut down
  /// before a call arrived, or when the answer could not be sent.
  virtual void proceed(bool ok) = 0;
};

} // namespace rs::frontend
