//===- test/common/raw_grpc.h - Calls of standard gRPC services without their stubs ===//
//
// The standard grpc.health.v1.Health and grpc.reflection.v1alpha / v1 ServerReflection services
// called the way grpcurl and Kubernetes probes call them, without generated stubs (the
// server links grpc++_reflection, whose generated reflection messages a second copy in
// the test would collide with): the request bytes are written by hand and the replies read
// with protobuf's UnknownFieldSet. Field numbers are the services' protos'.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace rs::testing {

/// grpc.health.v1.HealthCheckResponse.ServingStatus.
enum class ServingStatus { kUnknown = 0, kServing = 1, kNotServing = 2, kServiceUnknown = 3 };

/// Health/Check of `service`; `status` is set when the call is OK.
grpc::Status healthCheck(const std::shared_ptr<grpc::Channel> &channel, const std::string &service,
                         ServingStatus *status);

/// An open Health/Watch of one service.
class HealthWatch {
public:
  HealthWatch(const std::shared_ptr<grpc::Channel> &channel, const std::string &service);
  ~HealthWatch();
  /// The next status the server sends; false when the stream ended (or its 60 s deadline
  /// passed).
  bool next(ServingStatus *status);

private:
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReader<grpc::ByteBuffer>> reader_;
};

/// Which server reflection service to ask (the two have the same messages).
enum class Reflection { kV1alpha, kV1 };

/// ServerReflectionInfo with one list_services request: the full names of the services the
/// server offers, in its order. Fails the call's status otherwise.
grpc::Status reflectionServices(const std::shared_ptr<grpc::Channel> &channel,
                                std::vector<std::string> *services,
                                Reflection version = Reflection::kV1alpha);

/// ServerReflectionInfo with one file_containing_symbol request: the names of the files in
/// the reply's file_descriptor_response (each a serialized FileDescriptorProto). A reply
/// carrying an error_response is returned as that status (its code and message).
grpc::Status reflectionFilesOf(const std::shared_ptr<grpc::Channel> &channel,
                               const std::string &symbol, std::vector<std::string> *files,
                               Reflection version = Reflection::kV1alpha);

} // namespace rs::testing
