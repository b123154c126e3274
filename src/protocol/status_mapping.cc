//===- protocol/status_mapping.cc - rs::Status to gRPC and HTTP, once --------===//
#include "protocol/status_mapping.h"

#include <nlohmann/json.hpp>

namespace rs::protocol {

grpc::StatusCode toGrpcCode(StatusCode code) { return static_cast<grpc::StatusCode>(code); }

grpc::Status toGrpcStatus(const Status &status) {
  if (status.isOk())
    return grpc::Status::OK;
  return grpc::Status(toGrpcCode(status.code()), status.message());
}

Status fromGrpcStatus(const grpc::Status &status) {
  if (status.ok())
    return Status::ok();
  int code = static_cast<int>(status.error_code());
  if (code < 1 || code > static_cast<int>(StatusCode::kUnauthenticated))
    return Status(StatusCode::kUnknown, status.error_message());
  return Status(static_cast<StatusCode>(code), status.error_message());
}

int toHttpStatus(StatusCode code) {
  switch (code) {
  case StatusCode::kOk: return 200;
  case StatusCode::kInvalidArgument: return 400;
  case StatusCode::kFailedPrecondition: return 400;
  case StatusCode::kPermissionDenied: return 403;
  case StatusCode::kNotFound: return 404;
  case StatusCode::kAlreadyExists: return 409;
  case StatusCode::kResourceExhausted: return 429;
  case StatusCode::kUnimplemented: return 501;
  case StatusCode::kUnavailable: return 503;
  case StatusCode::kDeadlineExceeded: return 504;
  default: return 500;
  }
}

std::string httpErrorBody(std::string_view message) {
  nlohmann::json body = {{"error", std::string(message)}};
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status fromHttpError(int http_status, std::string_view body) {
  StatusCode code = StatusCode::kInternal;
  switch (http_status) {
  case 400: code = StatusCode::kInvalidArgument; break;
  case 403: code = StatusCode::kPermissionDenied; break;
  case 404: code = StatusCode::kNotFound; break;
  case 409: code = StatusCode::kAlreadyExists; break;
  case 429: code = StatusCode::kResourceExhausted; break;
  case 501: code = StatusCode::kUnimplemented; break;
  case 503: code = StatusCode::kUnavailable; break;
  case 504: code = StatusCode::kDeadlineExceeded; break;
  default: break;
  }
  nlohmann::json parsed = nlohmann::json::parse(body.begin(), body.end(), nullptr, false);
  if (parsed.is_object()) {
    auto it = parsed.find("error");
    if (it != parsed.end() && it->is_string())
      return Status(code, it->get<std::string>());
  }
  return Status(code, "http " + std::to_string(http_status) + ": " + std::string(body));
}

} // namespace rs::protocol
