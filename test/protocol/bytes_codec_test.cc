//===- test/protocol/bytes_codec_test.cc - BYTES tensors through the codecs -===//
//
// BytesTensor's serialized form, BYTES outputs from both encoders (exact bytes), round
// trips through the client-side encoders and server-side decoders, and Triton's raw binary
// HTTP request. The request decoders' BYTES errors are in the .cases files.
//
//===----------------------------------------------------------------------===//
#include "protocol/bytes_tensor.h"
#include "protocol/grpc_codec.h"
#include "protocol/http_codec.h"
#include "protocol/http_raw_request.h"
#include "tensor_text.h"

#include <gtest/gtest.h>

namespace rs::protocol {
namespace {

using namespace std::string_literals;

const Clock::time_point kNow = Clock::time_point(std::chrono::hours(1000));

BytesTensor strings(Shape shape, std::vector<std::string_view> elements) {
  return BytesTensor::fromElements(std::move(shape), elements);
}

WireTensorLayout bytesLayout(Shape shape) {
  Result<WireTensorLayout> layout = checkWireTensor("input 's'", "BYTES", shape);
  EXPECT_TRUE(layout.isOk()) << layout.status().toString();
  return *layout;
}

// ---- BytesTensor --------------------------------------------------------------------

TEST(BytesTensor, SerializesEachElementAfterItsLittleEndianLength) {
  BytesTensor t = strings({3}, {"hi", "", "a\0b"s});
  EXPECT_EQ(t.numElements(), 3);
  EXPECT_EQ(t.element(2), "a\0b"s);
  EXPECT_EQ(t.serializedSize(), 17u);
  EXPECT_EQ(t.serialized(), "\x02\0\0\0hi\0\0\0\0\x03\0\0\0a\0b"s);
  std::string long_element(0x10203, 'q');
  EXPECT_EQ(strings({1}, {long_element}).serialized().substr(0, 4), "\x03\x02\x01\0"s);
}

TEST(BytesTensor, ParseInvertsSerialize) {
  BytesTensor t = strings({2, 2}, {"one", "", "\xff\xfe", "four"});
  Result<BytesTensor> back =
      BytesTensor::parseSerialized("input 's'", bytesLayout({2, 2}), t.serialized());
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(*back, t);
  EXPECT_EQ(back->shape(), (Shape{2, 2}));
}

TEST(BytesTensor, ParseChecksEveryLengthAgainstTheRemainingBytes) {
  auto parse = [](Shape shape, std::string bytes) {
    return BytesTensor::parseSerialized("input 's'", bytesLayout(shape), bytes).status();
  };
  EXPECT_EQ(parse({1}, "\x03\0\0\0ab"s).message(),
            "input 's': BYTES element 0 declares 3 bytes but only 2 remain");
  EXPECT_EQ(parse({2}, "\x02\0\0\0hi\x01\0"s).message(),
            "input 's': BYTES element 1 of shape [2] of BYTES: its 4-byte length is cut short (2 "
            "bytes left)");
  EXPECT_EQ(parse({1}, "\x00\0\0\0z"s).message(),
            "input 's': BYTES data has 1 bytes after its last element (shape [1] of BYTES holds 1 "
            "elements)");
  EXPECT_EQ(parse({3}, "\0\0\0\0\0\0\0\0"s).message(),
            "input 's': BYTES data of 8 bytes cannot hold the 3 elements of shape [3] of BYTES "
            "(each takes a 4-byte length first)");
  EXPECT_EQ(parse({3}, "\0\0\0\0\0\0\0\0"s).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(parse({0}, "").isOk());
}

// ---- gRPC ---------------------------------------------------------------------------

TEST(GrpcCodecBytes, EncodesBytesOutputsRawLengthPrefixed) {
  InferResponse r{"m", "", "7", {}};
  r.outputs.push_back(NamedTensor::ofBytes("text", strings({2}, {"ok", "\xff"})));
  inference::ModelInferResponse msg;
  encodeModelInferResponse(r, &msg);
  ASSERT_EQ(msg.outputs_size(), 1);
  EXPECT_EQ(msg.outputs(0).datatype(), "BYTES");
  EXPECT_EQ(std::vector<int64_t>(msg.outputs(0).shape().begin(), msg.outputs(0).shape().end()),
            (std::vector<int64_t>{2}));
  ASSERT_EQ(msg.raw_output_contents_size(), 1);
  EXPECT_EQ(msg.raw_output_contents(0), "\x02\0\0\0ok\x01\0\0\0\xff"s);
}

TEST(GrpcCodecBytes, RequestAndResponseRoundTrip) {
  InferRequest req;
  req.model_name = "m";
  req.inputs.push_back(NamedTensor::ofBytes("s", strings({1, 2}, {"a", "\0"s})));
  req.inputs.push_back({"x", Tensor::zeros(DType::kI32, {1})});
  Result<InferRequest> decoded = decodeModelInferRequest(encodeModelInferRequest(req), kNow);
  ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
  ASSERT_EQ(decoded->inputs.size(), 2u);
  EXPECT_EQ(tensorText(decoded->inputs[0]), "s BYTES [1,2] = \"a\" \"\\x00\"");
  EXPECT_EQ(tensorText(decoded->inputs[1]), "x INT32 [1] = 0");

  InferResponse resp{"m", "", "", {}};
  resp.outputs.push_back(NamedTensor::ofBytes("out", strings({0}, {})));
  resp.outputs.push_back(NamedTensor::ofBytes("t", strings({1}, {"text"})));
  inference::ModelInferResponse msg;
  encodeModelInferResponse(resp, &msg);
  Result<InferResponse> back = decodeModelInferResponse(msg);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  ASSERT_EQ(back->outputs.size(), 2u);
  EXPECT_EQ(tensorText(back->outputs[0]), "out BYTES [0] =");
  EXPECT_EQ(tensorText(back->outputs[1]), "t BYTES [1] = \"text\"");
}

// ---- HTTP ---------------------------------------------------------------------------

InferResponse bytesResponse(std::vector<std::string_view> elements) {
  InferResponse r{"m", "", "", {}};
  const auto n = static_cast<int64_t>(elements.size());
  r.outputs.push_back(NamedTensor::ofBytes("t", strings({n}, std::move(elements))));
  return r;
}

TEST(HttpCodecBytes, EncodesUtf8BytesOutputsAsJsonStrings) {
  HttpBody b = encodeHttpInferResponse(bytesResponse({"h\u00e9", "a\"\n", ""}), {});
  EXPECT_FALSE(b.json_length);
  EXPECT_EQ(b.body, R"({"model_name":"m","model_version":"","outputs":[)"
                    R"({"name":"t","datatype":"BYTES","shape":[3],"data":["hé","a\"\n",""]}]})");
}

TEST(HttpCodecBytes, NonUtf8BytesOutputsGoBinary) {
  HttpBody b = encodeHttpInferResponse(bytesResponse({"ok", "\xff"}), {});
  const std::string json = R"({"model_name":"m","model_version":"","outputs":[)"
                           R"({"name":"t","datatype":"BYTES","shape":[2],)"
                           R"("parameters":{"binary_data_size":11}}]})";
  ASSERT_TRUE(b.json_length);
  EXPECT_EQ(*b.json_length, json.size());
  EXPECT_EQ(b.body, json + "\x02\0\0\0ok\x01\0\0\0\xff"s);
}

TEST(HttpCodecBytes, BytesOutputsGoBinaryWhenAsked) {
  OutputEncoding binary;
  binary.binary_by_default = true;
  HttpBody b = encodeHttpInferResponse(bytesResponse({"abc"}), binary);
  const std::string json = R"({"model_name":"m","model_version":"","outputs":[)"
                           R"({"name":"t","datatype":"BYTES","shape":[1],)"
                           R"("parameters":{"binary_data_size":7}}]})";
  EXPECT_EQ(b.body, json + "\x03\0\0\0abc"s);
  Result<InferResponse> back = decodeHttpInferResponse(b.body, std::to_string(*b.json_length));
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(tensorText(back->outputs[0]), "t BYTES [1] = \"abc\"");
}

TEST(HttpCodecBytes, RequestRoundTripsAsJsonAndBinary) {
  InferRequest req;
  req.model_name = "m";
  req.inputs.push_back(NamedTensor::ofBytes("s", strings({2}, {"x y", "\xc3\xa9"})));
  for (bool binary : {false, true}) {
    HttpBody b = encodeHttpInferRequest(req, binary, {});
    EXPECT_EQ(b.json_length.has_value(), binary);
    std::optional<std::string> header;
    if (b.json_length)
      header = std::to_string(*b.json_length);
    Result<HttpInferRequest> decoded = decodeHttpInferRequest({"m", ""}, b.body, header, kNow);
    ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
    ASSERT_EQ(decoded->request.inputs.size(), 1u);
    EXPECT_EQ(tensorText(decoded->request.inputs[0]), "s BYTES [2] = \"x y\" \"\\xc3\\xa9\"");
  }
  // An element that is not UTF-8 has no JSON form: it travels binary even when JSON was asked.
  req.inputs[0] = NamedTensor::ofBytes("s", strings({1}, {"\x80"}));
  HttpBody b = encodeHttpInferRequest(req, false, {});
  ASSERT_TRUE(b.json_length);
  Result<HttpInferRequest> decoded =
      decodeHttpInferRequest({"m", ""}, b.body, std::to_string(*b.json_length), kNow);
  ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
  EXPECT_EQ(tensorText(decoded->request.inputs[0]), "s BYTES [1] = \"\\x80\"");
}

// ---- Raw binary request -------------------------------------------------------------

ModelMetadata oneInput(Shape shape, std::optional<int> batch_axis, DType dtype = DType::kF32) {
  ModelMetadata md;
  md.name = "m";
  md.inputs = {{"x", dtype, std::move(shape), batch_axis}};
  md.outputs = {{"y", dtype, {-1}, 0}};
  return md;
}

std::string floats(std::vector<float> v) {
  return std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(float));
}

TEST(HttpRawRequest, OnlyAZeroHeaderIsARawRequest) {
  EXPECT_TRUE(isRawBinaryRequest("0"));
  EXPECT_TRUE(isRawBinaryRequest("000"));
  EXPECT_FALSE(isRawBinaryRequest(std::nullopt));
  EXPECT_FALSE(isRawBinaryRequest(""));
  EXPECT_FALSE(isRawBinaryRequest("10"));
  EXPECT_FALSE(isRawBinaryRequest("0x0"));
  EXPECT_FALSE(isRawBinaryRequest(" 0"));
}

TEST(HttpRawRequest, TheBodyIsTheSingleInputAsABatchOfOne) {
  Result<HttpInferRequest> r =
      decodeRawBinaryInferRequest({"m", ""}, oneInput({-1, 2}, 0), floats({1.5f, -2}));
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(r->request.model_name, "m");
  EXPECT_EQ(r->request.id, "");
  EXPECT_TRUE(r->request.requested_outputs.empty());
  EXPECT_FALSE(r->request.deadline);
  ASSERT_EQ(r->request.inputs.size(), 1u);
  EXPECT_EQ(tensorText(r->request.inputs[0]), "x FP32 [1,2] = 1.5 -2");
  // Every output comes back binary.
  EXPECT_TRUE(r->output_encoding.binary_by_default);
  EXPECT_TRUE(r->output_encoding.per_output.empty());
}

TEST(HttpRawRequest, OneVariableAxisIsDeducedFromTheBodySize) {
  // A batched model with a variable sequence axis: batch 1, the sequence from the size.
  Result<HttpInferRequest> r =
      decodeRawBinaryInferRequest({"m", ""}, oneInput({-1, -1, 2}, 0), floats({1, 2, 3, 4, 5, 6}));
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(tensorText(r->request.inputs[0]), "x FP32 [1,3,2] = 1 2 3 4 5 6");
  // An unbatched model's one variable axis.
  r = decodeRawBinaryInferRequest({"m", ""}, oneInput({2, -1}, std::nullopt, DType::kU8), "abcd");
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(tensorText(r->request.inputs[0]), "x UINT8 [2,2] = 97 98 99 100");
}

TEST(HttpRawRequest, RefusesWhatTheBodyCannotDescribe) {
  auto error = [](const ModelMetadata &md, const std::string &body) {
    Result<HttpInferRequest> r = decodeRawBinaryInferRequest({"m", ""}, md, body);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    return r.status().message();
  };
  EXPECT_EQ(error(oneInput({-1, 2}, 0), floats({1, 2, 3, 4})),
            "model 'm': input 'x': the raw binary request body has 16 bytes but shape [1,2] of "
            "FP32 needs 8 bytes");
  EXPECT_EQ(error(oneInput({-1, 2}, std::nullopt), floats({1, 2, 3})),
            "model 'm': input 'x': the raw binary request body has 12 bytes, which is no positive "
            "whole number of the 8-byte steps along axis 0 of the model's shape [-1,2] of FP32");
  EXPECT_EQ(error(oneInput({-1, 2}, std::nullopt), ""),
            "model 'm': input 'x': the raw binary request body has 0 bytes, which is no positive "
            "whole number of the 8-byte steps along axis 0 of the model's shape [-1,2] of FP32");
  EXPECT_EQ(error(oneInput({-1, -1, -1}, 0), floats({1})),
            "model 'm': input 'x': a raw binary request needs at most one variable axis besides "
            "the batch axis, but the model's shape is [-1,-1,-1]");
  EXPECT_EQ(error(oneInput({-1, -1, 8}, std::nullopt), floats({1})),
            "model 'm': input 'x': a raw binary request needs at most one variable axis here, "
            "where the model's batch axis is not known, but the model's shape is [-1,-1,8] "
            "(send it to a worker, or as a JSON or binary-extension request)");
  ModelMetadata two = oneInput({2}, std::nullopt);
  two.inputs.push_back({"w", DType::kF32, {2}});
  EXPECT_EQ(error(two, floats({1, 2})),
            "model 'm': a raw binary request (Inference-Header-Content-Length: 0) needs a model "
            "of one input; this model has 2");
}

} // namespace
} // namespace rs::protocol
