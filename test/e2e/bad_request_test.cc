//===- test/e2e/bad_request_test.cc - Bad requests get clear errors ---------===//
//
// Every bad request of the main-job list, over gRPC and over HTTP, against the real
// worker: the right code (gRPC INVALID_ARGUMENT / NOT_FOUND, HTTP 400 / 404), a message
// naming the tensor and the reason, and a valid request right after it succeeds.
//
//===----------------------------------------------------------------------===//
#include "harness.h"

#include <gtest/gtest.h>

#include <cstring>

namespace rs::e2e {
namespace {

class BadRequestTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    auto s = TestServer::start(kBundles, "  models_include: [digits_cnn, tiny_bert]\n");
    ASSERT_TRUE(s.isOk()) << s.status().toString();
    server_ = std::move(s).value().release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  /// A valid digits request as a gRPC message: one image of 64 floats.
  static inference::ModelInferRequest validGrpc() {
    inference::ModelInferRequest msg;
    msg.set_model_name("digits_cnn");
    msg.set_id("ok");
    auto *in = msg.add_inputs();
    in->set_name("image");
    in->set_datatype("FP32");
    for (int64_t d : {1, 8, 8, 1})
      in->add_shape(d);
    msg.add_raw_input_contents(std::string(64 * 4, '\0'));
    return msg;
  }

  /// Sends `msg`; returns the status.
  static grpc::Status sendGrpc(const inference::ModelInferRequest &msg) {
    inference::ModelInferResponse reply;
    grpc::ClientContext ctx;
    return server_->stub().ModelInfer(&ctx, msg, &reply);
  }

  /// Expects `msg` to fail with `code` and a message containing `needle`, then a valid
  /// request to succeed.
  static void expectGrpcError(const inference::ModelInferRequest &msg, grpc::StatusCode code,
                              const std::string &needle) {
    grpc::Status st = sendGrpc(msg);
    EXPECT_EQ(st.error_code(), code) << st.error_message();
    EXPECT_NE(st.error_message().find(needle), std::string::npos) << st.error_message();
    EXPECT_TRUE(sendGrpc(validGrpc()).ok()) << "valid request after a bad one";
  }

  static const std::string validJson() {
    std::string data = "[";
    for (int i = 0; i < 64; ++i)
      data += (i ? ",0.5" : "0.5");
    data += "]";
    return R"({"inputs":[{"name":"image","shape":[1,8,8,1],"datatype":"FP32","data":)" + data +
           "}]}";
  }

  /// POSTs `body` to `path` with optional Inference-Header-Content-Length; expects
  /// `status` and `needle` in the body, then a valid JSON request to succeed.
  static void expectHttpError(const std::string &path, const std::string &body,
                              std::optional<size_t> header_length, int status,
                              const std::string &needle) {
    auto client = server_->httpClient();
    httplib::Headers headers;
    if (header_length)
      headers.emplace("Inference-Header-Content-Length", std::to_string(*header_length));
    auto r = client->Post(path, headers, body, "application/octet-stream");
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    EXPECT_EQ(r->status, status) << r->body;
    EXPECT_NE(r->body.find(needle), std::string::npos) << r->body;
    auto ok = client->Post("/v2/models/digits_cnn/infer", validJson(), "application/json");
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->status, 200) << ok->body;
  }

  static TestServer *server_;
};
TestServer *BadRequestTest::server_ = nullptr;

TEST_F(BadRequestTest, Grpc) {
  ASSERT_TRUE(sendGrpc(validGrpc()).ok());
  {
    auto m = validGrpc();
    m.set_model_name("no_such_model");
    expectGrpcError(m, grpc::StatusCode::NOT_FOUND, "unknown model 'no_such_model'");
  }
  {
    // tiny_bert needs input_ids and attention_mask.
    inference::ModelInferRequest m;
    m.set_model_name("tiny_bert");
    auto *in = m.add_inputs();
    in->set_name("input_ids");
    in->set_datatype("INT32");
    in->add_shape(1);
    in->add_shape(16);
    m.add_raw_input_contents(std::string(16 * 4, '\0'));
    expectGrpcError(m, grpc::StatusCode::INVALID_ARGUMENT, "missing input 'attention_mask'");
  }
  {
    auto m = validGrpc();
    auto *in = m.add_inputs();
    in->set_name("extra");
    in->set_datatype("FP32");
    in->add_shape(1);
    m.add_raw_input_contents(std::string(4, '\0'));
    expectGrpcError(m, grpc::StatusCode::INVALID_ARGUMENT, "unexpected input 'extra'");
  }
  {
    auto m = validGrpc();
    m.mutable_inputs(0)->set_datatype("FP64");
    m.set_raw_input_contents(0, std::string(64 * 8, '\0'));
    expectGrpcError(m, grpc::StatusCode::INVALID_ARGUMENT,
                    "input 'image': datatype FP64 does not match the model's FP32");
  }
  {
    auto m = validGrpc();
    m.mutable_inputs(0)->clear_shape();
    for (int64_t d : {1, 8, 8})
      m.mutable_inputs(0)->add_shape(d);
    expectGrpcError(m, grpc::StatusCode::INVALID_ARGUMENT,
                    "input 'image': shape [1,8,8] does not match the model's [-1,8,8,1]");
  }
  {
    auto m = validGrpc();
    m.mutable_inputs(0)->set_shape(0, 0);
    m.set_raw_input_contents(0, "");
    expectGrpcError(m, grpc::StatusCode::INVALID_ARGUMENT, "input 'image': batch of 0 rows");
  }
  {
    auto m = validGrpc();
    m.set_raw_input_contents(0, std::string(100, '\0'));
    expectGrpcError(m, grpc::StatusCode::INVALID_ARGUMENT, "input 'image'");
  }
  {
    // A 1 GiB declared size in a small message: refused before any allocation.
    auto m = validGrpc();
    m.mutable_inputs(0)->set_shape(0, int64_t{1} << 22); // 4M images x 256 B = 1 GiB
    expectGrpcError(m, grpc::StatusCode::INVALID_ARGUMENT, "input 'image'");
  }
  {
    auto m = validGrpc();
    m.mutable_inputs(0)->set_shape(1, -8);
    expectGrpcError(m, grpc::StatusCode::INVALID_ARGUMENT, "input 'image'");
  }
  {
    auto m = validGrpc();
    m.set_model_name("");
    expectGrpcError(m, grpc::StatusCode::INVALID_ARGUMENT, "model name");
  }
  {
    // Well-formed BYTES reach the model, whose input is numeric.
    auto m = validGrpc();
    m.mutable_inputs(0)->set_datatype("BYTES");
    m.mutable_inputs(0)->clear_shape();
    m.mutable_inputs(0)->add_shape(1);
    m.set_raw_input_contents(0, std::string("\x05\0\0\0hello", 9));
    expectGrpcError(m, grpc::StatusCode::INVALID_ARGUMENT,
                    "model 'digits_cnn', request 'ok': input 'image': datatype BYTES does not "
                    "match the model's FP32");
  }
}

TEST_F(BadRequestTest, Http) {
  const std::string infer = "/v2/models/digits_cnn/infer";
  auto image = [](const std::string &shape, const std::string &datatype, const std::string &data) {
    return R"({"name":"image","shape":)" + shape + R"(,"datatype":")" + datatype + R"(","data":)" +
           data + "}";
  };
  std::string zeros64 = "[";
  for (int i = 0; i < 64; ++i)
    zeros64 += (i ? ",0" : "0");
  zeros64 += "]";
  expectHttpError("/v2/models/no_such_model/infer", validJson(), std::nullopt, 404,
                  "unknown model 'no_such_model'");
  expectHttpError("/v2/models/tiny_bert/infer",
                  R"({"inputs":[{"name":"input_ids","shape":[1,16],"datatype":"INT32","data":[)"
                  "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}]}",
                  std::nullopt, 400, "missing input 'attention_mask'");
  expectHttpError(infer,
                  R"({"inputs":[)" + image("[1,8,8,1]", "FP32", zeros64) +
                      R"(,{"name":"extra","shape":[1],"datatype":"FP32","data":[1]}]})",
                  std::nullopt, 400, "unexpected input 'extra'");
  expectHttpError(infer, R"({"inputs":[)" + image("[1,8,8,1]", "INT32", zeros64) + "]}",
                  std::nullopt, 400, "input 'image': datatype INT32 does not match");
  expectHttpError(infer, R"({"inputs":[)" + image("[1,64]", "FP32", zeros64) + "]}", std::nullopt,
                  400, "input 'image': shape [1,64] does not match");
  expectHttpError(infer, R"({"inputs":[)" + image("[0,8,8,1]", "FP32", "[]") + "]}", std::nullopt,
                  400, "input 'image': batch of 0 rows");
  expectHttpError(infer, R"({"inputs":[)" + image("[1,8,8,1]", "FP32", "[1,2,3]") + "]}",
                  std::nullopt, 400, "input 'image'");
  expectHttpError(infer, R"({"inputs":[{"name":"image",)", std::nullopt, 400, "json");

  // Binary extension: sizes that do not match the shape, overflow, or exceed the body.
  const std::string bin_header =
      R"({"inputs":[{"name":"image","shape":[1,8,8,1],"datatype":"FP32","parameters":{"binary_data_size":256}}]})";
  expectHttpError(infer, bin_header + std::string(100, '\0'), bin_header.size(), 400,
                  "input 'image'");
  expectHttpError(infer, bin_header + std::string(256, '\0'), bin_header.size() + 1000, 400,
                  "Inference-Header-Content-Length");
  const std::string huge =
      R"({"inputs":[{"name":"image","shape":[4194304,8,8,1],"datatype":"FP32","parameters":{"binary_data_size":1073741824}}]})";
  expectHttpError(infer, huge + std::string(256, '\0'), huge.size(), 400, "input 'image'");
  const std::string overflow =
      R"({"inputs":[{"name":"image","shape":[1,8,8,1],"datatype":"FP32","parameters":{"binary_data_size":18446744073709551615}}]})";
  expectHttpError(infer, overflow + std::string(256, '\0'), overflow.size(), 400, "input 'image'");
  const std::string overflow_shape =
      R"({"inputs":[{"name":"image","shape":[9223372036854775807,8,8,1],"datatype":"FP32","data":[]}]})";
  expectHttpError(infer, overflow_shape, std::nullopt, 400, "input 'image'");
  expectHttpError(infer,
                  R"({"inputs":[{"name":"image","shape":[1],"datatype":"BYTES","data":["x"]}]})",
                  std::nullopt, 400,
                  "model 'digits_cnn': input 'image': datatype BYTES does not match the model's "
                  "FP32");
  // Raw binary requests (Inference-Header-Content-Length: 0) of the wrong size.
  expectHttpError(infer, std::string(100, '\0'), 0, 400,
                  "model 'digits_cnn': input 'image': the raw binary request body has 100 bytes "
                  "but shape [1,8,8,1] of FP32 needs 256 bytes");
  expectHttpError("/v2/models/tiny_bert/infer", std::string(64, '\0'), 0, 400,
                  "model 'tiny_bert': a raw binary request (Inference-Header-Content-Length: 0) "
                  "needs a model of one input; this model has 2");
}

TEST_F(BadRequestTest, HttpRawBinaryRequestIsOneImageWithBinaryOutputs) {
  // The whole body is digits_cnn's one input, as a batch of one; the reply is binary.
  std::vector<float> image(64, 0.5f);
  const std::string body(reinterpret_cast<const char *>(image.data()), image.size() * 4);
  auto client = server_->httpClient();
  auto raw = client->Post("/v2/models/digits_cnn/infer", {{"Inference-Header-Content-Length", "0"}},
                          body, "application/octet-stream");
  ASSERT_TRUE(raw) << httplib::to_string(raw.error());
  ASSERT_EQ(raw->status, 200) << raw->body;
  ASSERT_TRUE(raw->has_header("Inference-Header-Content-Length"));
  // The same image as a JSON request with binary outputs gives the same body.
  std::string data;
  for (int i = 0; i < 64; ++i)
    data += (i ? ",0.5" : "0.5");
  auto json = client->Post(
      "/v2/models/digits_cnn/infer",
      R"({"parameters":{"binary_data_output":true},"inputs":[{"name":"image","shape":[1,8,8,1],)"
      R"("datatype":"FP32","data":[)" +
          data + "]}]}",
      "application/json");
  ASSERT_TRUE(json);
  ASSERT_EQ(json->status, 200) << json->body;
  EXPECT_EQ(raw->body, json->body);
  EXPECT_EQ(raw->get_header_value("Inference-Header-Content-Length"),
            json->get_header_value("Inference-Header-Content-Length"));
}

} // namespace
} // namespace rs::e2e
