//===- frontend/grpc_reflection_v1.cc - gRPC server reflection, v1 -----------===//
#include "frontend/grpc_reflection_v1.h"

#include "protocol/proto/reflection_v1.grpc.pb.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <grpcpp/impl/server_builder_option.h>
#include <grpcpp/impl/server_builder_plugin.h>
#include <grpcpp/impl/server_initializer.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace rs::frontend {
namespace {

namespace v1 = grpc::reflection::v1;
using google::protobuf::DescriptorPool;
using google::protobuf::FileDescriptor;

/// The service: answers each request of a stream in turn.
class ReflectionV1Service final : public v1::ServerReflection::Service {
public:
  /// `services`: the server's list of service names (it outlives the service).
  void setServices(const std::vector<std::string> *services) { services_ = services; }

  grpc::Status ServerReflectionInfo(
      grpc::ServerContext *,
      grpc::ServerReaderWriter<v1::ServerReflectionResponse, v1::ServerReflectionRequest> *stream)
      override {
    v1::ServerReflectionRequest req;
    while (stream->Read(&req)) {
      v1::ServerReflectionResponse resp;
      resp.set_valid_host(req.host());
      *resp.mutable_original_request() = req;
      std::set<std::string> sent; // the files already in this response
      answer(req, sent, &resp);
      if (!stream->Write(resp))
        break;
    }
    return grpc::Status::OK;
  }

private:
  void answer(const v1::ServerReflectionRequest &req, std::set<std::string> &sent,
              v1::ServerReflectionResponse *resp) const {
    const DescriptorPool *pool = DescriptorPool::generated_pool();
    auto error = [resp](grpc::StatusCode code, const std::string &message) {
      resp->mutable_error_response()->set_error_code(static_cast<int32_t>(code));
      resp->mutable_error_response()->set_error_message(message);
    };
    switch (req.message_request_case()) {
    case v1::ServerReflectionRequest::kListServices:
      resp->mutable_list_services_response();
      if (services_)
        for (const std::string &name : *services_)
          resp->mutable_list_services_response()->add_service()->set_name(name);
      return;
    case v1::ServerReflectionRequest::kFileByFilename: {
      const FileDescriptor *file = pool->FindFileByName(req.file_by_filename());
      if (!file)
        return error(grpc::StatusCode::NOT_FOUND, "File not found.");
      return addFile(file, sent, resp);
    }
    case v1::ServerReflectionRequest::kFileContainingSymbol: {
      const FileDescriptor *file = pool->FindFileContainingSymbol(req.file_containing_symbol());
      if (!file)
        return error(grpc::StatusCode::NOT_FOUND, "Symbol not found.");
      return addFile(file, sent, resp);
    }
    case v1::ServerReflectionRequest::kFileContainingExtension: {
      const v1::ExtensionRequest &ext = req.file_containing_extension();
      const auto *type = pool->FindMessageTypeByName(ext.containing_type());
      if (!type)
        return error(grpc::StatusCode::NOT_FOUND, "Type not found.");
      const auto *field = pool->FindExtensionByNumber(type, ext.extension_number());
      if (!field)
        return error(grpc::StatusCode::NOT_FOUND, "Extension not found.");
      return addFile(field->file(), sent, resp);
    }
    case v1::ServerReflectionRequest::kAllExtensionNumbersOfType: {
      const auto *type = pool->FindMessageTypeByName(req.all_extension_numbers_of_type());
      if (!type)
        return error(grpc::StatusCode::NOT_FOUND, "Type not found.");
      std::vector<const google::protobuf::FieldDescriptor *> extensions;
      pool->FindAllExtensions(type, &extensions);
      auto *numbers = resp->mutable_all_extension_numbers_response();
      numbers->set_base_type_name(req.all_extension_numbers_of_type());
      for (const auto *e : extensions)
        numbers->add_extension_number(e->number());
      return;
    }
    case v1::ServerReflectionRequest::MESSAGE_REQUEST_NOT_SET: break;
    }
    error(grpc::StatusCode::UNIMPLEMENTED, "The request names no reflection query.");
  }

  /// `file`, then the files it imports (depth first, in import order), each once.
  static void addFile(const FileDescriptor *file, std::set<std::string> &sent,
                      v1::ServerReflectionResponse *resp) {
    if (!sent.insert(file->name()).second)
      return;
    google::protobuf::FileDescriptorProto proto;
    file->CopyTo(&proto);
    resp->mutable_file_descriptor_response()->add_file_descriptor_proto(proto.SerializeAsString());
    for (int i = 0; i < file->dependency_count(); ++i)
      addFile(file->dependency(i), sent, resp);
  }

  const std::vector<std::string> *services_ = nullptr;
};

/// Registers the service when the server is made and hands it the server's list of
/// service names once every service is registered.
class ReflectionV1Plugin final : public grpc::ServerBuilderPlugin {
public:
  std::string name() override { return "rs_reflection_v1"; }
  void InitServer(grpc::ServerInitializer *si) override { si->RegisterService(service_); }
  void Finish(grpc::ServerInitializer *si) override { service_->setServices(si->GetServiceList()); }
  void ChangeArguments(const std::string &, void *) override {}
  bool has_sync_methods() const override { return true; }

private:
  std::shared_ptr<ReflectionV1Service> service_ = std::make_shared<ReflectionV1Service>();
};

/// Adds the plugin to one builder (ServerBuilder's per-builder hook for plugins).
class ReflectionV1Option final : public grpc::ServerBuilderOption {
public:
  void UpdateArguments(grpc::ChannelArguments *) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>> *plugins) override {
    plugins->push_back(std::make_unique<ReflectionV1Plugin>());
  }
};

} // namespace

void addReflectionV1(grpc::ServerBuilder &builder) {
  builder.SetOption(std::make_unique<ReflectionV1Option>());
}

} // namespace rs::frontend
