//===- frontend/grpc_reflection_v1.h - gRPC server reflection, v1 ------------===//
//
// grpc.reflection.v1.ServerReflection (protocol/proto/reflection_v1.proto), which grpcurl and
// newer gRPC tools ask before grpc.reflection.v1alpha. grpc++_reflection (Debian's gRPC)
// serves only v1alpha; the two protocols are the same message for message, so this answers
// v1 the way grpc++_reflection answers v1alpha: the services the server registered
// (the same list, read from the server), and files, symbols and extensions from the
// process's generated descriptor pool, a file followed by every file it imports (each once
// per response), in the same order and with the same error texts, so that a query gets the
// bytes v1alpha gives as the first query of a stream. (grpc++ 1.51's v1alpha keeps adding
// to one response message for the whole stream, so its later answers repeat earlier ones'
// files; each v1 answer holds only its own.) An unknown file, symbol, type or extension is
// answered with an error_response (NOT_FOUND), and the stream goes on.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <grpcpp/server_builder.h>

namespace rs::frontend {

/// Serves grpc.reflection.v1.ServerReflection on the server `builder` builds, beside
/// whatever else it registers; call before BuildAndStart. Its service list is the built
/// server's (the v1alpha service lists the same).
void addReflectionV1(grpc::ServerBuilder &builder);

} // namespace rs::frontend
