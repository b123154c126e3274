//===- frontend/grpc_infer.cc - The ModelInfer RPC ------------------------===//
//
// GrpcServer's ModelInfer handler (frontend/grpc_server.h), which ModelStreamInfer
// (frontend/grpc_stream.h) shares: the size check against grpc.max_recv_msg_bytes, the
// decode (protocol/grpc_codec.h) with raw inputs viewed in place, the deadline, the
// service's inference, the shared-memory outputs and the reply's size check against
// grpc.max_send_msg_bytes. Every failure is told to the RequestReporter.
//
//===----------------------------------------------------------------------===//
#include "frontend/grpc_server.h"

#include "frontend/grpc_server_impl.h"
#include "frontend/peer.h"
#include "protocol/deadline.h"
#include "protocol/grpc_codec.h"
#include "protocol/status_mapping.h"

#include <chrono>

namespace rs::frontend {

void GrpcServer::Impl::ModelInfer(const grpc::ServerContext &ctx,
                                  std::shared_ptr<const inference::ModelInferRequest> req,
                                  inference::ModelInferResponse *resp, Reply finish,
                                  CancellationPtr cancel) {
  if (const size_t bytes = req->ByteSizeLong();
      max_recv_bytes_ > 0 && bytes > static_cast<size_t>(max_recv_bytes_)) {
    Status too_big = resourceExhausted() << oversizeMessage(bytes, max_recv_bytes_);
    report(req->model_name(), req->id(), too_big, false);
    finish(protocol::toGrpcStatus(too_big));
    return;
  }
  protocol::Clock::time_point now = protocol::Clock::now();
  protocol::DecodeOptions options;
  options.now = now;
  options.shared_memory = shared_memory_;
  options.max_shared_memory_input_bytes = max_shm_input_bytes_;
  options.message_owner = req; // raw inputs are read in place (no copy of the payload)
  options.expected_datatype = protocol::expectedDatatypes(service_, req->model_name());
  options.shared_memory_owner = localPeerIdentity(ctx.peer()).value_or("");
  Result<protocol::DecodedInferRequest> decoded = protocol::decodeModelInferRequest(*req, options);
  if (!decoded.isOk()) {
    report(req->model_name(), req->id(), decoded.status(), false);
    finish(protocol::toGrpcStatus(decoded.status()));
    return;
  }
  protocol::InferRequest request = std::move(decoded->request);
  request.received = now;
  request.cancel = std::move(cancel);
  request.deadline = protocol::tighterDeadline(
      request.deadline,
      protocol::steadyDeadline(ctx.deadline(), std::chrono::system_clock::now(), now));
  // The shared-memory outputs hold their regions until the reply is written. The
  // service delivers (writes them, encodes the reply, checks its size) before it counts
  // the answer; `delivered` says whether it did.
  auto shm = std::make_shared<std::vector<protocol::SharedMemoryOutput>>(
      std::move(decoded->shared_memory_outputs));
  auto delivered = std::make_shared<bool>(false);
  request.deliver = [this, resp, shm, delivered, model = req->model_name(),
                     id = req->id()](const protocol::InferResponse &r) {
    *delivered = true;
    Status s = deliverReply(r, *shm, resp);
    return s.isOk() ? s : s.withPrefix(requestPrefix(model, id));
  };
  std::function<Status(const protocol::InferResponse &)> deliver = request.deliver;
  service_.infer(std::move(request), [this, finish = std::move(finish), shm, delivered,
                                      deliver = std::move(deliver), model = req->model_name(),
                                      id = req->id()](Result<protocol::InferResponse> result) {
    if (result.isOk() && !*delivered)
      if (Status s = deliver(*result); !s.isOk())
        result = s;
    if (!result.isOk()) {
      report(model, id, result.status(), true);
      finish(protocol::toGrpcStatus(result.status()));
      return;
    }
    finish(grpc::Status::OK);
  });
}

Status GrpcServer::Impl::deliverReply(const protocol::InferResponse &r,
                                      const std::vector<protocol::SharedMemoryOutput> &shm,
                                      inference::ModelInferResponse *resp) const {
  RS_RETURN_IF_ERROR(protocol::writeSharedMemoryOutputs(shm, r));
  protocol::encodeModelInferResponse(r, shm, resp);
  const size_t bytes = resp->ByteSizeLong();
  if (max_send_bytes_ > 0 && bytes > static_cast<size_t>(max_send_bytes_)) {
    resp->Clear();
    return StatusBuilder(StatusCode::kResourceExhausted)
           << "response of " << bytes << " bytes exceeds grpc.max_send_msg_bytes ("
           << max_send_bytes_ << ")";
  }
  return Status::ok();
}

std::string GrpcServer::Impl::requestPrefix(const std::string &model, const std::string &id) {
  return "model '" + model + "'" + (id.empty() ? "" : ", request '" + id + "'");
}

void GrpcServer::Impl::report(const std::string &model, const std::string &id, const Status &status,
                              bool in_service) const {
  if (reporter_)
    reporter_->requestFailed({"grpc", model, id}, status, in_service);
}

} // namespace rs::frontend
