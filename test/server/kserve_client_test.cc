//===- test/server/kserve_client_test.cc - Client <-> front-ends end to end -===//
#include "client/kserve_client.h"

#include "../protocol/tensor_text.h"
#include "fake_service.h"
#include "frontend/grpc_server.h"
#include "frontend/http_server.h"

#include <gtest/gtest.h>

namespace rs::server {
namespace {

using protocol::tensorText;
using testing::FakeService;

TEST(ParseServerUrl, AcceptsAndRejects) {
  auto ok = [](const std::string &url, client::WireProtocol p) {
    Result<HostPort> r = client::parseServerUrl(url, p);
    EXPECT_TRUE(r.isOk()) << url << ": " << r.status().toString();
    return r.isOk() ? r->host + " " + std::to_string(r->port) : std::string();
  };
  EXPECT_EQ(ok("", client::WireProtocol::kGrpc), "127.0.0.1 8001");
  EXPECT_EQ(ok("", client::WireProtocol::kHttp), "127.0.0.1 8000");
  EXPECT_EQ(ok("localhost:9000", client::WireProtocol::kGrpc), "localhost 9000");
  EXPECT_EQ(ok("grpc://gw.example:443", client::WireProtocol::kGrpc), "gw.example 443");
  EXPECT_EQ(ok("http://10.0.0.2:8000/", client::WireProtocol::kHttp), "10.0.0.2 8000");
  EXPECT_EQ(ok("[::1]:8001", client::WireProtocol::kGrpc), "::1 8001");

  auto bad = [](const std::string &url, client::WireProtocol p) {
    Result<HostPort> r = client::parseServerUrl(url, p);
    EXPECT_FALSE(r.isOk()) << url;
    return r.isOk() ? std::string() : r.status().message();
  };
  EXPECT_EQ(bad("localhost", client::WireProtocol::kGrpc), "url 'localhost' has no port");
  EXPECT_EQ(bad(":80", client::WireProtocol::kHttp), "url ':80' has no host");
  EXPECT_EQ(bad("h:0", client::WireProtocol::kGrpc),
            "url 'h:0': port '0' is not a number in [1, 65535]");
  EXPECT_EQ(bad("h:70000", client::WireProtocol::kGrpc),
            "url 'h:70000': port '70000' is not a number in [1, 65535]");
  EXPECT_EQ(bad("h:8x", client::WireProtocol::kGrpc),
            "url 'h:8x': port '8x' is not a number in [1, 65535]");
  EXPECT_EQ(bad("http://h:1", client::WireProtocol::kGrpc),
            "url 'http://h:1': expected grpc:// for grpc");
  EXPECT_EQ(bad("[::1]8001", client::WireProtocol::kGrpc), "url '[::1]8001': expected [ipv6]:port");
}

template <typename T> Tensor makeTensor(DType dtype, Shape shape, std::vector<T> values) {
  return Tensor::copyOf(
      dtype, std::move(shape),
      {reinterpret_cast<const uint8_t *>(values.data()), values.size() * sizeof(T)});
}

struct ClientCase {
  const char *name;
  client::WireProtocol protocol;
  bool binary;
};

class KServeClientTest : public ::testing::TestWithParam<ClientCase> {
protected:
  void SetUp() override {
    frontend::GrpcServerOptions go;
    go.host = "127.0.0.1";
    go.port = 0;
    grpc_ = std::make_unique<frontend::GrpcServer>(go, service_, protocol::noModelControl());
    ASSERT_TRUE(grpc_->start().isOk());
    frontend::HttpServerOptions ho;
    ho.host = "127.0.0.1";
    ho.port = 0;
    http_ = std::make_unique<frontend::HttpServer>(ho, service_, protocol::noModelControl());
    ASSERT_TRUE(http_->start().isOk());
    client_ = makeClient(GetParam().protocol == client::WireProtocol::kGrpc ? grpc_->port()
                                                                            : http_->port());
  }

  std::unique_ptr<client::KServeClient> makeClient(int port) {
    client::KServeClientOptions o;
    o.protocol = GetParam().protocol;
    o.binary = GetParam().binary;
    o.url = "127.0.0.1:" + std::to_string(port);
    o.timeout_ms = 30000;
    Result<std::unique_ptr<client::KServeClient>> c = client::KServeClient::create(o);
    EXPECT_TRUE(c.isOk());
    return c.isOk() ? std::move(c).value() : nullptr;
  }

  FakeService service_;
  std::unique_ptr<frontend::GrpcServer> grpc_;
  std::unique_ptr<frontend::HttpServer> http_;
  std::unique_ptr<client::KServeClient> client_;
};

TEST_P(KServeClientTest, InferRoundTrip) {
  protocol::InferRequest req;
  req.model_name = "double_async";
  req.model_version = "2";
  req.id = "c-1";
  req.inputs.push_back({"x", makeTensor<float>(DType::kF32, {2, 2}, {0.1f, -0.0f, 3e38f, 1e-45f})});
  req.requested_outputs = {"z", "y"};
  Result<protocol::InferResponse> r = client_->infer(req);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(r->model_name, "double_async");
  EXPECT_EQ(r->model_version, "2");
  EXPECT_EQ(r->id, "c-1");
  ASSERT_EQ(r->outputs.size(), 2u);
  EXPECT_EQ(tensorText(r->outputs[0]), "z FP32 [2,2] = 1.1 1 3e+38 1");
  // 2 * 3e38 overflows to inf: the JSON form cannot carry it, so it comes back binary.
  EXPECT_EQ(tensorText(r->outputs[1]), "y FP32 [2,2] = 0.2 -0 inf 3e-45");
}

TEST_P(KServeClientTest, IntegerAndBoolDtypes) {
  protocol::InferRequest req;
  req.model_name = "double";
  req.inputs.push_back(
      {"x", makeTensor<int64_t>(DType::kI64, {3}, {-4611686018427387904LL, 0, 7})});
  Result<protocol::InferResponse> r = client_->infer(req);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(tensorText(r->outputs[0]), "y INT64 [3] = -9223372036854775808 0 14");
  EXPECT_EQ(tensorText(r->outputs[1]), "z INT64 [3] = -4611686018427387903 1 8");
}

TEST_P(KServeClientTest, ErrorsKeepCodeAndMessage) {
  protocol::InferRequest req;
  req.model_name = "nope";
  req.inputs.push_back({"x", makeTensor<float>(DType::kF32, {1}, {1})});
  Result<protocol::InferResponse> r = client_->infer(req);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "model 'nope' not found");

  req.model_name = "double";
  req.inputs[0].name = "image";
  r = client_->infer(req);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "model 'double': unexpected input 'image'");

  // FP16 has no JSON form, so the HTTP client sends it binary even without --binary.
  req.inputs[0] = {"x", makeTensor<uint16_t>(DType::kF16, {1}, {0x3c00})};
  r = client_->infer(req);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(),
            "model 'double': input 'x': datatype FP16 is not one of FP32, FP64, INT32, INT64");
}

TEST_P(KServeClientTest, ServerReady) {
  Result<bool> r = client_->serverReady();
  ASSERT_TRUE(r.isOk());
  EXPECT_TRUE(*r);
  service_.setReady(false);
  r = client_->serverReady();
  ASSERT_TRUE(r.isOk());
  EXPECT_FALSE(*r);
}

TEST_P(KServeClientTest, UnreachableServerIsUnavailable) {
  int port = GetParam().protocol == client::WireProtocol::kGrpc ? grpc_->port() : http_->port();
  grpc_->shutdown();
  http_->shutdown();
  std::unique_ptr<client::KServeClient> client = makeClient(port);
  protocol::InferRequest req;
  req.model_name = "double";
  Result<protocol::InferResponse> r = client->infer(req);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().toString();
}

INSTANTIATE_TEST_SUITE_P(
    Protocols, KServeClientTest,
    ::testing::Values(ClientCase{"grpc", client::WireProtocol::kGrpc, false},
                      ClientCase{"http_json", client::WireProtocol::kHttp, false},
                      ClientCase{"http_binary", client::WireProtocol::kHttp, true}),
    [](const auto &info) { return std::string(info.param.name); });

} // namespace
} // namespace rs::server
