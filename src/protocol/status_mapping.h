//===- protocol/status_mapping.h - rs::Status to gRPC and HTTP, once ---------===//
//
// The one place where our error codes become wire codes (STYLE.md rule 2).
//
// gRPC: rs::StatusCode uses the canonical gRPC numbering, so the code passes through
// unchanged and the message is kept verbatim.
//
// HTTP (KServe V2 REST "Status codes"; Triton's HTTP mapping for the rest):
//   OK 200, InvalidArgument 400, FailedPrecondition 400, PermissionDenied 403 (system shared
//   memory asked by a peer that is not on loopback), NotFound 404, AlreadyExists 409
//   (a shared memory region registered twice), ResourceExhausted 429, Unimplemented 501,
//   Unavailable 503, DeadlineExceeded 504, anything else 500. Error bodies are the KServe V2 error
//   object `{"error": "<message>"}`.
//
// Thread safety: pure functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <grpcpp/support/status.h>

#include <string>
#include <string_view>

namespace rs::protocol {

/// The gRPC code for `code` (same numbering).
grpc::StatusCode toGrpcCode(StatusCode code);
/// A gRPC status with the same code and message (OK for an OK status).
grpc::Status toGrpcStatus(const Status &status);
/// Client side: a gRPC status as an rs::Status (same code and message).
Status fromGrpcStatus(const grpc::Status &status);

/// The HTTP status code for `code` (table above).
int toHttpStatus(StatusCode code);
/// `{"error":"<message>"}` with the message JSON-escaped (invalid UTF-8 replaced).
std::string httpErrorBody(std::string_view message);
/// Client side: the Status for an HTTP error reply: the code is the inverse of
/// toHttpStatus (400 InvalidArgument, 403 PermissionDenied, 404 NotFound, 409 AlreadyExists,
/// 429 ResourceExhausted, 501
/// Unimplemented, 503 Unavailable, 504 DeadlineExceeded, other Internal); the message is
/// the body's "error" string when the body is the KServe error object, else the raw body.
Status fromHttpError(int http_status, std::string_view body);

} // namespace rs::protocol
