//===- test/gateway/gateway_bytes_cors_test.cc - Payloads and CORS through the gateway ===//
//
// CORS on the gateway's REST port (http.cors_allowed_origins), BYTES tensors over both
// protocols (the gates' echo model) and Triton's raw binary request, asked of a gateway
// (protocol_fleet.h).
//
//===----------------------------------------------------------------------===//
#include "protocol_fleet.h"

#include "protocol/http_codec.h"

#include <nlohmann/json.hpp>

#include <map>

namespace rs::gateway::testing {
namespace {

class GatewayBytesAndCorsTest : public ProtocolFleetTest {};

// ---- CORS ---------------------------------------------------------------------------------

TEST_F(GatewayBytesAndCorsTest, CorsFromTheGatewayConfig) {
  httplib::Client cli = http();
  httplib::Result p = cli.Options("/v2/models/iris_mlp/infer",
                                  {{"Origin", kApp}, {"Access-Control-Request-Method", "POST"}});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status, 204);
  const std::map<std::string, std::string> preflight_headers = {
      {"Access-Control-Allow-Origin", kApp},
      {"Access-Control-Allow-Methods", "POST"},
      {"Access-Control-Allow-Headers",
       "Content-Type, Content-Encoding, Inference-Header-Content-Length"},
      {"Access-Control-Max-Age", "600"},
      {"Vary", "Origin"}};
  for (const auto &[name, value] : preflight_headers)
    EXPECT_EQ(p->get_header_value(name), value) << name;
  // Every reply to the origin carries its headers, an error's too.
  httplib::Result r = cli.Get("/v2/models/nope", {{"Origin", kApp}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  const std::map<std::string, std::string> reply_headers = {
      {"Access-Control-Allow-Origin", kApp},
      {"Access-Control-Expose-Headers", "Inference-Header-Content-Length"},
      {"Vary", "Origin"}};
  for (const auto &[name, value] : reply_headers)
    EXPECT_EQ(r->get_header_value(name), value) << name;
  // Another origin gets no CORS header, and its preflight is refused as without CORS.
  r = cli.Get("/v2/health/ready", {{"Origin", "https://evil.example.com"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_FALSE(r->has_header("Access-Control-Allow-Origin"));
  p = cli.Options("/v2/models/iris_mlp/infer", {{"Origin", "https://evil.example.com"},
                                                {"Access-Control-Request-Method", "POST"}});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status, 405);
  EXPECT_FALSE(p->has_header("Access-Control-Allow-Origin"));
}

// ---- BYTES tensors and the raw binary request --------------------------------------------

TEST_F(GatewayBytesAndCorsTest, BytesTensorsOverGrpc) {
  const std::vector<std::string> text = {"hello", std::string("a\0b", 3), "w\xc3\xb6rld", ""};
  for (bool raw : {false, true}) {
    inference::ModelInferRequest req;
    req.set_model_name(kEcho);
    req.set_id(raw ? "raw" : "typed");
    auto *in = req.add_inputs();
    in->set_name("text");
    in->set_datatype("BYTES");
    in->add_shape(4);
    if (raw)
      req.add_raw_input_contents(lengthPrefixed(text));
    else
      for (const std::string &t : text)
        in->mutable_contents()->add_bytes_contents(t);
    grpc::ClientContext ctx;
    inference::ModelInferResponse resp;
    grpc::Status s = gw_->stub().ModelInfer(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(resp.id(), req.id());
    ASSERT_EQ(resp.outputs_size(), 1);
    EXPECT_EQ(resp.outputs(0).name(), "text");
    EXPECT_EQ(resp.outputs(0).datatype(), "BYTES");
    EXPECT_EQ(std::vector<int64_t>(resp.outputs(0).shape().begin(), resp.outputs(0).shape().end()),
              (std::vector<int64_t>{4}));
    ASSERT_EQ(resp.raw_output_contents_size(), 1);
    EXPECT_EQ(resp.raw_output_contents(0), lengthPrefixed(text));
  }
}

TEST_F(GatewayBytesAndCorsTest, BytesTensorsOverHttp) {
  httplib::Client cli = http();
  // JSON strings in, JSON strings out (every element is UTF-8).
  httplib::Result r = cli.Post(
      "/v2/models/text_echo/infer",
      R"({"id":"j","inputs":[{"name":"text","shape":[2],"datatype":"BYTES","data":["hello","w\u00f6rld"]}]})",
      "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  nlohmann::json body = nlohmann::json::parse(r->body);
  EXPECT_EQ(body["id"], "j");
  EXPECT_EQ(body["model_name"], kEcho);
  EXPECT_EQ(body["outputs"], nlohmann::json::parse(R"([{"name":"text","datatype":"BYTES",
            "shape":[2],"data":["hello","w\u00f6rld"]}])"));
  // Binary in (the length-prefixed form), binary out (an element that is no UTF-8).
  const std::string data = lengthPrefixed({"ok", "\xff\xfe"});
  const std::string json = R"({"inputs":[{"name":"text","shape":[2],"datatype":"BYTES",)"
                           R"("parameters":{"binary_data_size":)" +
                           std::to_string(data.size()) + "}}]}";
  r = cli.Post("/v2/models/text_echo/infer",
               {{protocol::kInferenceHeaderContentLength, std::to_string(json.size())}},
               json + data, "application/octet-stream");
  Result<protocol::InferResponse> decoded = inferReply(r);
  ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
  const std::string length = r->get_header_value(protocol::kInferenceHeaderContentLength);
  ASSERT_FALSE(length.empty());
  EXPECT_EQ(r->body.substr(std::stoul(length)), data);
  ASSERT_EQ(decoded->outputs.size(), 1u);
  ASSERT_TRUE(decoded->outputs[0].isBytes());
  EXPECT_EQ(decoded->outputs[0].shape(), (Shape{2}));
}

TEST_F(GatewayBytesAndCorsTest, RawBinaryRequestOverHttp) {
  httplib::Client cli = http();
  const httplib::Headers raw = {{protocol::kInferenceHeaderContentLength, "0"}};
  for (int rows : {1, 2}) {
    // The gRPC answer to the same rows.
    inference::ModelInferRequest req = iris("", 0.5f);
    std::string body = req.raw_input_contents(0);
    if (rows == 2) {
      body += floats({4, 3, 2, 1});
      req.mutable_inputs(0)->set_shape(0, 2);
      req.set_raw_input_contents(0, body);
    }
    grpc::ClientContext ctx;
    inference::ModelInferResponse unary;
    ASSERT_TRUE(gw_->stub().ModelInfer(&ctx, req, &unary).ok());
    httplib::Result r =
        cli.Post("/v2/models/iris_mlp/infer", raw, body, "application/octet-stream");
    Result<protocol::InferResponse> decoded = inferReply(r);
    ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
    ASSERT_EQ(decoded->outputs.size(), 1u);
    EXPECT_EQ(decoded->outputs[0].name, "logits");
    EXPECT_EQ(decoded->outputs[0].shape(), (Shape{rows, 3}));
    const auto span = decoded->outputs[0].tensor.bytes();
    EXPECT_EQ(std::string(reinterpret_cast<const char *>(span.data()), span.size()),
              unary.raw_output_contents(0));
  }
  httplib::Result r =
      cli.Post("/v2/models/iris_mlp/infer", raw, floats({1, 2, 3}), "application/octet-stream");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(nlohmann::json::parse(r->body),
            nlohmann::json({{"error", "model 'iris_mlp': input 'features': the raw binary request "
                                      "body has 12 bytes, which is no positive whole number of "
                                      "the 16-byte steps along axis 0 of the model's shape "
                                      "[-1,4] of FP32"}}));
}

} // namespace
} // namespace rs::gateway::testing
