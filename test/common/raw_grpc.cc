//===- test/common/raw_grpc.cc - Calls of standard gRPC services without their stubs ===//
#include "common/raw_grpc.h"

#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/unknown_field_set.h>
#include <grpcpp/impl/codegen/client_unary_call.h>
#include <grpcpp/impl/codegen/rpc_method.h>
#include <grpcpp/impl/codegen/sync_stream.h>

namespace rs::testing {
namespace {

using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;

/// One length-delimited field: tag, length, bytes (lengths < 128 only).
std::string stringField(int number, const std::string &value) {
  std::string out;
  out.push_back(static_cast<char>((number << 3) | 2));
  out.push_back(static_cast<char>(value.size()));
  return out + value;
}

grpc::ByteBuffer bufferOf(const std::string &bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

std::string bytesOf(const grpc::ByteBuffer &buffer) {
  std::vector<grpc::Slice> slices;
  (void)buffer.Dump(&slices);
  std::string out;
  for (const grpc::Slice &s : slices)
    out.append(reinterpret_cast<const char *>(s.begin()), s.size());
  return out;
}

/// The fields of `bytes` numbered `number`, in order.
std::vector<const UnknownField *> fieldsOf(const UnknownFieldSet &set, int number) {
  std::vector<const UnknownField *> out;
  for (int i = 0; i < set.field_count(); ++i)
    if (set.field(i).number() == number)
      out.push_back(&set.field(i));
  return out;
}

ServingStatus statusOf(const std::string &response) {
  UnknownFieldSet set;
  if (!set.ParseFromString(response))
    return ServingStatus::kUnknown;
  std::vector<const UnknownField *> f = fieldsOf(set, 1);
  return f.empty() ? ServingStatus::kUnknown : static_cast<ServingStatus>(f[0]->varint());
}

/// One ServerReflectionInfo exchange with `version`: `request` out, the reply's bytes back.
grpc::Status reflect(const std::shared_ptr<grpc::Channel> &channel, Reflection version,
                     const std::string &request, UnknownFieldSet *reply) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  grpc::internal::RpcMethod method(
      version == Reflection::kV1 ? "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
                                 : "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
      grpc::internal::RpcMethod::BIDI_STREAMING, channel);
  std::unique_ptr<grpc::ClientReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>> stream(
      grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer, grpc::ByteBuffer>::Create(
          channel.get(), method, &ctx));
  stream->Write(bufferOf(request));
  stream->WritesDone();
  grpc::ByteBuffer response;
  const bool got = stream->Read(&response);
  grpc::Status status = stream->Finish();
  if (!status.ok())
    return status;
  if (!got || !reply->ParseFromString(bytesOf(response)))
    return grpc::Status(grpc::StatusCode::INTERNAL, "no reflection reply");
  return status;
}

} // namespace

grpc::Status healthCheck(const std::shared_ptr<grpc::Channel> &channel, const std::string &service,
                         ServingStatus *status) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  grpc::internal::RpcMethod method("/grpc.health.v1.Health/Check",
                                   grpc::internal::RpcMethod::NORMAL_RPC, channel);
  grpc::ByteBuffer response;
  grpc::Status s = grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer>(
      channel.get(), method, &ctx, bufferOf(stringField(1, service)), &response);
  if (s.ok())
    *status = statusOf(bytesOf(response));
  return s;
}

HealthWatch::HealthWatch(const std::shared_ptr<grpc::Channel> &channel,
                         const std::string &service) {
  ctx_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  grpc::internal::RpcMethod method("/grpc.health.v1.Health/Watch",
                                   grpc::internal::RpcMethod::SERVER_STREAMING, channel);
  reader_.reset(grpc::internal::ClientReaderFactory<grpc::ByteBuffer>::Create(
      channel.get(), method, &ctx_, bufferOf(stringField(1, service))));
}

HealthWatch::~HealthWatch() {
  ctx_.TryCancel();
  (void)reader_->Finish();
}

bool HealthWatch::next(ServingStatus *status) {
  grpc::ByteBuffer response;
  if (!reader_->Read(&response))
    return false;
  *status = statusOf(bytesOf(response));
  return true;
}

grpc::Status reflectionServices(const std::shared_ptr<grpc::Channel> &channel,
                                std::vector<std::string> *services, Reflection version) {
  // ServerReflectionRequest.list_services = 7; the reply's list_services_response = 6 holds
  // ServiceResponse service = 1 entries, each with name = 1.
  UnknownFieldSet reply;
  grpc::Status s = reflect(channel, version, stringField(7, "*"), &reply);
  if (!s.ok())
    return s;
  for (const UnknownField *list : fieldsOf(reply, 6)) {
    UnknownFieldSet entries;
    (void)entries.ParseFromString(list->length_delimited());
    for (const UnknownField *service : fieldsOf(entries, 1)) {
      UnknownFieldSet named;
      (void)named.ParseFromString(service->length_delimited());
      for (const UnknownField *name : fieldsOf(named, 1))
        services->push_back(name->length_delimited());
    }
  }
  return s;
}

grpc::Status reflectionFilesOf(const std::shared_ptr<grpc::Channel> &channel,
                               const std::string &symbol, std::vector<std::string> *files,
                               Reflection version) {
  // file_containing_symbol = 4; the reply's file_descriptor_response = 4 holds
  // bytes file_descriptor_proto = 1 entries, its error_response = 7 error_code = 1 and
  // error_message = 2.
  UnknownFieldSet reply;
  grpc::Status s = reflect(channel, version, stringField(4, symbol), &reply);
  if (!s.ok())
    return s;
  for (const UnknownField *error : fieldsOf(reply, 7)) {
    UnknownFieldSet parts;
    (void)parts.ParseFromString(error->length_delimited());
    std::vector<const UnknownField *> code = fieldsOf(parts, 1), message = fieldsOf(parts, 2);
    return grpc::Status(static_cast<grpc::StatusCode>(code.empty() ? 0 : code[0]->varint()),
                        message.empty() ? "" : message[0]->length_delimited());
  }
  for (const UnknownField *response : fieldsOf(reply, 4)) {
    UnknownFieldSet protos;
    (void)protos.ParseFromString(response->length_delimited());
    for (const UnknownField *proto : fieldsOf(protos, 1)) {
      google::protobuf::FileDescriptorProto file;
      if (file.ParseFromString(proto->length_delimited()))
        files->push_back(file.name());
    }
  }
  return s;
}

} // namespace rs::testing
