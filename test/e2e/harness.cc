//===- test/e2e/harness.cc - A real worker on loopback for end-to-end tests -===//
#include "harness.h"

#include "config/node_config.h"
#include "protocol/grpc_codec.h"
#include "protocol/http_codec.h"
#include "protocol/status_mapping.h"

#include <grpcpp/grpcpp.h>

#include <cstring>

namespace rs::e2e {

Result<std::unique_ptr<TestServer>> TestServer::start(const std::string &model_repo,
                                                      const std::string &global_yaml) {
  std::string yaml = "model_repo: \"" + model_repo +
                     "\"\nbase_port: 18001\nmetrics_base_port: 18002\nglobal:\n"
                     "  endpoints: {host: 127.0.0.1, http_port: 18000}\n" +
                     global_yaml;
  RS_ASSIGN_OR_RETURN(config::WorkerConfig cfg, testing::firstWorker(yaml, "<e2e>"));
  // ../shared is read-only material (we may run as root, which ignores permission bits):
  // never write an executable cache into it.
  if (model_repo.rfind(kShared, 0) == 0)
    cfg.runtime.executable_cache = false;
  auto server = std::unique_ptr<TestServer>(new TestServer());
  RS_ASSIGN_OR_RETURN(server->worker_, testing::TestWorker::start(cfg));
  return server;
}

Result<protocol::InferResponse> TestServer::inferGrpc(const protocol::InferRequest &request) {
  inference::ModelInferRequest msg = protocol::encodeModelInferRequest(request);
  inference::ModelInferResponse reply;
  grpc::ClientContext ctx;
  grpc::Status status = stub().ModelInfer(&ctx, msg, &reply);
  if (!status.ok())
    return protocol::fromGrpcStatus(status);
  return protocol::decodeModelInferResponse(reply);
}

Result<protocol::InferResponse> TestServer::inferHttp(const protocol::InferRequest &request,
                                                      bool binary) {
  protocol::OutputEncoding outputs;
  outputs.binary_by_default = binary;
  protocol::HttpBody body = protocol::encodeHttpInferRequest(request, binary, outputs);
  httplib::Headers headers;
  if (body.json_length)
    headers.emplace(protocol::kInferenceHeaderContentLength, std::to_string(*body.json_length));
  auto client = httpClient();
  auto res = client->Post("/v2/models/" + request.model_name + "/infer", headers, body.body,
                          binary ? "application/octet-stream" : "application/json");
  if (!res)
    return unavailable() << "http request failed: " << httplib::to_string(res.error());
  if (res->status != 200)
    return protocol::fromHttpError(res->status, res->body);
  std::optional<std::string_view> header_length;
  std::string length_text;
  if (res->has_header(protocol::kInferenceHeaderContentLength)) {
    length_text = res->get_header_value(protocol::kInferenceHeaderContentLength);
    header_length = length_text;
  }
  return protocol::decodeHttpInferResponse(res->body, header_length);
}

Result<bundle::SafetensorsFile> openGolden(const std::string &model, const std::string &file) {
  return bundle::SafetensorsFile::open(kGolden + "/" + model + "/" + file);
}

std::string bytesOf(const Tensor &t) {
  return std::string(reinterpret_cast<const char *>(t.data()), static_cast<size_t>(t.byteSize()));
}

Tensor rowsOf(const Tensor &t, int64_t begin, int64_t count) {
  Shape shape = t.shape();
  const int64_t row_bytes = shape[0] == 0 ? 0 : t.byteSize() / shape[0];
  shape[0] = count;
  return Tensor::copyOf(t.dtype(), shape,
                        std::span<const uint8_t>(t.data() + begin * row_bytes,
                                                 static_cast<size_t>(count * row_bytes)));
}

} // namespace rs::e2e
