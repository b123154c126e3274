//===- test/protocol/codec_test.cc - Encoders, round trips, status mapping --===//
#include "protocol/deadline.h"
#include "protocol/grpc_codec.h"
#include "protocol/http_codec.h"
#include "protocol/status_mapping.h"
#include "tensor_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

namespace rs::protocol {
namespace {

using protocol::Clock;
using protocol::InferRequest;
using protocol::InferResponse;
using protocol::NamedTensor;

template <typename T> Tensor makeTensor(DType dtype, Shape shape, std::vector<T> values) {
  return Tensor::copyOf(
      dtype, std::move(shape),
      {reinterpret_cast<const uint8_t *>(values.data()), values.size() * sizeof(T)});
}

/// One tensor of every wire dtype, with edge values.
std::vector<NamedTensor> everyDtype() {
  return {
      {"b", makeTensor<uint8_t>(DType::kBool, {3}, {1, 0, 1})},
      {"i8", makeTensor<int8_t>(DType::kI8, {2}, {-128, 127})},
      {"i16", makeTensor<int16_t>(DType::kI16, {2}, {-32768, 32767})},
      {"i32", makeTensor<int32_t>(DType::kI32, {2, 1}, {std::numeric_limits<int32_t>::min(), 7})},
      {"i64", makeTensor<int64_t>(
                  DType::kI64, {2},
                  {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()})},
      {"u8", makeTensor<uint8_t>(DType::kU8, {1}, {255})},
      {"u16", makeTensor<uint16_t>(DType::kU16, {1}, {65535})},
      {"u32", makeTensor<uint32_t>(DType::kU32, {1}, {4294967295u})},
      {"u64", makeTensor<uint64_t>(DType::kU64, {1}, {std::numeric_limits<uint64_t>::max()})},
      {"f16", makeTensor<uint16_t>(DType::kF16, {2}, {0x3c00, 0x7e00})},
      {"bf16", makeTensor<uint16_t>(DType::kBF16, {1}, {0x3f80})},
      {"f32", makeTensor<float>(DType::kF32, {2, 2},
                                {0.1f, -0.0f, std::numeric_limits<float>::denorm_min(),
                                 std::numeric_limits<float>::max()})},
      {"f64", makeTensor<double>(DType::kF64, {2}, {0.1, -1e-300})},
      {"empty", makeTensor<float>(DType::kF32, {0, 5}, {})},
  };
}

std::vector<std::string> texts(const std::vector<NamedTensor> &ts) {
  std::vector<std::string> out;
  for (const auto &t : ts)
    out.push_back(tensorText(t));
  return out;
}

bool sameBytes(const Tensor &a, const Tensor &b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.byteSize() == b.byteSize() &&
         std::memcmp(a.data(), b.data(), a.byteSize()) == 0;
}

// ---- Status mapping ----------------------------------------------------------

TEST(StatusMapping, HttpCodes) {
  EXPECT_EQ(toHttpStatus(StatusCode::kOk), 200);
  EXPECT_EQ(toHttpStatus(StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(toHttpStatus(StatusCode::kFailedPrecondition), 400);
  EXPECT_EQ(toHttpStatus(StatusCode::kPermissionDenied), 403);
  EXPECT_EQ(toHttpStatus(StatusCode::kNotFound), 404);
  EXPECT_EQ(toHttpStatus(StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(toHttpStatus(StatusCode::kUnimplemented), 501);
  EXPECT_EQ(toHttpStatus(StatusCode::kUnavailable), 503);
  EXPECT_EQ(toHttpStatus(StatusCode::kDeadlineExceeded), 504);
  EXPECT_EQ(toHttpStatus(StatusCode::kInternal), 500);
  EXPECT_EQ(toHttpStatus(StatusCode::kUnknown), 500);
  EXPECT_EQ(toHttpStatus(StatusCode::kCancelled), 500);
}

TEST(StatusMapping, GrpcCodesPassThrough) {
  for (int c = 0; c <= 16; ++c) {
    auto code = static_cast<StatusCode>(c);
    EXPECT_EQ(static_cast<int>(toGrpcCode(code)), c);
    Status s = c == 0 ? Status::ok() : Status(code, "msg " + std::to_string(c));
    grpc::Status g = toGrpcStatus(s);
    EXPECT_EQ(static_cast<int>(g.error_code()), c);
    EXPECT_EQ(g.error_message(), s.message());
    Status back = fromGrpcStatus(g);
    EXPECT_EQ(back.code(), code);
    EXPECT_EQ(back.message(), s.message());
  }
}

TEST(StatusMapping, HttpErrorBody) {
  EXPECT_EQ(httpErrorBody("input 'x': bad \"thing\"\n"),
            R"({"error":"input 'x': bad \"thing\"\n"})");
  // Invalid UTF-8 from a client-chosen name must not break the body.
  EXPECT_EQ(httpErrorBody("model '\xff'"), "{\"error\":\"model '\xEF\xBF\xBD'\"}");
  Status s = fromHttpError(404, R"({"error":"model 'q' not found"})");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "model 'q' not found");
  s = fromHttpError(502, "bad gateway");
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_EQ(s.message(), "http 502: bad gateway");
  EXPECT_EQ(fromHttpError(403, "{}").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(fromHttpError(429, "{}").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(fromHttpError(504, "{}").code(), StatusCode::kDeadlineExceeded);
}

// ---- Deadlines ---------------------------------------------------------------

TEST(Deadline, SaturatesAndConverts) {
  Clock::time_point now(std::chrono::seconds(100));
  EXPECT_EQ(deadlineAfter(5, now), now + std::chrono::nanoseconds(5));
  EXPECT_EQ(deadlineAfter(-5, now), now);
  EXPECT_EQ(deadlineAfter(std::numeric_limits<int64_t>::max(), now), Clock::time_point::max());

  using Sys = std::chrono::system_clock;
  Sys::time_point sys_now(std::chrono::seconds(1'700'000'000));
  EXPECT_EQ(steadyDeadline(Sys::time_point::max(), sys_now, now), std::nullopt);
  EXPECT_EQ(steadyDeadline(sys_now - std::chrono::seconds(1), sys_now, now), now);
  EXPECT_EQ(steadyDeadline(sys_now + std::chrono::milliseconds(2500), sys_now, now),
            now + std::chrono::milliseconds(2500));

  auto a = now + std::chrono::seconds(1), b = now + std::chrono::seconds(2);
  EXPECT_EQ(tighterDeadline(a, b), a);
  EXPECT_EQ(tighterDeadline(std::nullopt, b), b);
  EXPECT_EQ(tighterDeadline(a, std::nullopt), a);
  EXPECT_EQ(tighterDeadline(std::nullopt, std::nullopt), std::nullopt);
}

// ---- gRPC --------------------------------------------------------------------

TEST(GrpcCodec, EncodesResponseRaw) {
  InferResponse resp{"digits",
                     "1",
                     "req-9",
                     {{"probs", makeTensor<float>(DType::kF32, {1, 2}, {0.25f, 0.75f})},
                      {"label", makeTensor<int32_t>(DType::kI32, {1}, {1})}}};
  inference::ModelInferResponse msg;
  msg.set_model_name("stale");
  encodeModelInferResponse(resp, &msg);
  EXPECT_EQ(msg.model_name(), "digits");
  EXPECT_EQ(msg.model_version(), "1");
  EXPECT_EQ(msg.id(), "req-9");
  ASSERT_EQ(msg.outputs_size(), 2);
  EXPECT_EQ(msg.outputs(0).name(), "probs");
  EXPECT_EQ(msg.outputs(0).datatype(), "FP32");
  EXPECT_EQ(std::vector<int64_t>(msg.outputs(0).shape().begin(), msg.outputs(0).shape().end()),
            (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(msg.outputs(1).datatype(), "INT32");
  ASSERT_EQ(msg.raw_output_contents_size(), 2);
  float f[2] = {0.25f, 0.75f};
  EXPECT_EQ(msg.raw_output_contents(0), std::string(reinterpret_cast<char *>(f), 8));
  EXPECT_EQ(msg.raw_output_contents(1), std::string("\x01\x00\x00\x00", 4));
}

TEST(GrpcCodec, RequestAndResponseRoundTrip) {
  InferRequest req;
  req.model_name = "m";
  req.model_version = "2";
  req.id = "rt";
  req.inputs = everyDtype();
  req.requested_outputs = {"y", "z"};
  inference::ModelInferRequest msg = encodeModelInferRequest(req);
  EXPECT_EQ(msg.raw_input_contents_size(), msg.inputs_size());
  Result<InferRequest> back = decodeModelInferRequest(msg, Clock::now());
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->model_name, "m");
  EXPECT_EQ(back->model_version, "2");
  EXPECT_EQ(back->id, "rt");
  EXPECT_EQ(back->requested_outputs, req.requested_outputs);
  EXPECT_FALSE(back->deadline.has_value());
  ASSERT_EQ(back->inputs.size(), req.inputs.size());
  for (size_t i = 0; i < req.inputs.size(); ++i) {
    EXPECT_EQ(back->inputs[i].name, req.inputs[i].name);
    EXPECT_TRUE(sameBytes(back->inputs[i].tensor, req.inputs[i].tensor)) << req.inputs[i].name;
  }

  InferResponse resp{"m", "2", "rt", everyDtype()};
  inference::ModelInferResponse rmsg;
  encodeModelInferResponse(resp, &rmsg);
  Result<InferResponse> rback = decodeModelInferResponse(rmsg);
  ASSERT_TRUE(rback.isOk()) << rback.status().toString();
  EXPECT_EQ(texts(rback->outputs), texts(resp.outputs));
}

TEST(GrpcCodec, DecodedTensorsAreAlignedCopies) {
  inference::ModelInferRequest msg;
  msg.set_model_name("m");
  auto *in = msg.add_inputs();
  in->set_name("x");
  in->set_datatype("FP32");
  in->add_shape(1);
  msg.add_raw_input_contents(std::string("\x00\x00\x80\x3f", 4));
  Result<InferRequest> r = decodeModelInferRequest(msg, Clock::now());
  ASSERT_TRUE(r.isOk());
  const uint8_t *p = r->inputs[0].tensor.data();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  EXPECT_NE(static_cast<const void *>(p), msg.raw_input_contents(0).data());
  EXPECT_EQ(r->inputs[0].tensor.dataAs<float>()[0], 1.0f);
}

TEST(GrpcCodec, RawInputsAreViewsWhenTheMessageHasAnOwner) {
  auto msg = std::make_shared<inference::ModelInferRequest>();
  msg->set_model_name("m");
  for (const char *name : {"x", "y"}) {
    auto *in = msg->add_inputs();
    in->set_name(name);
    in->set_datatype("FP32");
    in->add_shape(2);
  }
  msg->add_raw_input_contents(std::string("\x00\x00\x80\x3f\x00\x00\x00\x40", 8));
  msg->add_raw_input_contents(std::string("\x00\x00\x40\x40\x00\x00\x80\x40", 8));
  DecodeOptions options;
  options.now = Clock::now();
  options.message_owner = msg;
  Result<DecodedInferRequest> r = decodeModelInferRequest(*msg, options);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  std::optional<DecodedInferRequest> decoded = std::move(*r);
  std::weak_ptr<inference::ModelInferRequest> weak = msg;
  options.message_owner.reset();
  msg.reset();
  // The tensors hold the message: it lives until they are gone.
  ASSERT_FALSE(weak.expired());
  const std::vector<NamedTensor> &inputs = decoded->request.inputs;
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(static_cast<const void *>(inputs[0].tensor.data()),
            weak.lock()->raw_input_contents(0).data());
  EXPECT_EQ(static_cast<const void *>(inputs[1].tensor.data()),
            weak.lock()->raw_input_contents(1).data());
  EXPECT_EQ(inputs[0].tensor.dataAs<float>()[0], 1.0f);
  EXPECT_EQ(inputs[0].tensor.dataAs<float>()[1], 2.0f);
  EXPECT_EQ(inputs[1].tensor.dataAs<float>()[0], 3.0f);
  EXPECT_EQ(inputs[1].tensor.dataAs<float>()[1], 4.0f);
  decoded.reset();
  EXPECT_TRUE(weak.expired());
}

TEST(GrpcCodec, Metadata) {
  protocol::ModelMetadata md{"digits",
                             {},
                             "cpu",
                             {{"image", DType::kF32, {-1, 8, 8, 1}}},
                             {{"logits", DType::kF32, {-1, 10}}, {"label", DType::kI64, {-1}}}};
  inference::ModelMetadataResponse msg;
  encodeModelMetadata(md, &msg);
  EXPECT_EQ(msg.name(), "digits");
  EXPECT_EQ(msg.versions_size(), 0);
  EXPECT_EQ(msg.platform(), "cpu");
  ASSERT_EQ(msg.inputs_size(), 1);
  EXPECT_EQ(msg.inputs(0).name(), "image");
  EXPECT_EQ(msg.inputs(0).datatype(), "FP32");
  EXPECT_EQ(std::vector<int64_t>(msg.inputs(0).shape().begin(), msg.inputs(0).shape().end()),
            (std::vector<int64_t>{-1, 8, 8, 1}));
  ASSERT_EQ(msg.outputs_size(), 2);
  EXPECT_EQ(msg.outputs(1).datatype(), "INT64");

  inference::ServerMetadataResponse smsg;
  encodeServerMetadata({"ReactantServer", "0.1.0", {"system_shared_memory"}}, &smsg);
  EXPECT_EQ(smsg.name(), "ReactantServer");
  EXPECT_EQ(smsg.version(), "0.1.0");
  ASSERT_EQ(smsg.extensions_size(), 1);
  EXPECT_EQ(smsg.extensions(0), "system_shared_memory");
}

// ---- HTTP --------------------------------------------------------------------

TEST(HttpCodec, EncodesJsonResponseExactly) {
  InferResponse resp{"m",
                     "",
                     "r\"1",
                     {{"y", makeTensor<float>(DType::kF32, {2}, {0.1f, 2.0f})},
                      {"b", makeTensor<uint8_t>(DType::kBool, {2}, {1, 0})},
                      {"n", makeTensor<int64_t>(DType::kI64, {1, 1}, {-5})}}};
  HttpBody body = encodeHttpInferResponse(resp, {});
  EXPECT_FALSE(body.json_length.has_value());
  EXPECT_EQ(body.body, R"({"model_name":"m","model_version":"","id":"r\"1","outputs":[)"
                       R"({"name":"y","datatype":"FP32","shape":[2],"data":[0.1,2]},)"
                       R"({"name":"b","datatype":"BOOL","shape":[2],"data":[true,false]},)"
                       R"({"name":"n","datatype":"INT64","shape":[1,1],"data":[-5]}]})");
}

TEST(HttpCodec, EncodesBinaryOutputsInOrder) {
  InferResponse resp{"m",
                     "1",
                     "",
                     {{"a", makeTensor<float>(DType::kF32, {1}, {1.0f})},
                      {"j", makeTensor<int32_t>(DType::kI32, {1}, {3})},
                      {"h", makeTensor<uint16_t>(DType::kF16, {1}, {0x3c00})}}};
  OutputEncoding enc;
  enc.per_output = {{"a", true}};
  HttpBody body = encodeHttpInferResponse(resp, enc);
  std::string json =
      R"({"model_name":"m","model_version":"1","outputs":[)"
      R"({"name":"a","datatype":"FP32","shape":[1],"parameters":{"binary_data_size":4}},)"
      R"({"name":"j","datatype":"INT32","shape":[1],"data":[3]},)"
      R"({"name":"h","datatype":"FP16","shape":[1],"parameters":{"binary_data_size":2}}]})";
  ASSERT_TRUE(body.json_length.has_value());
  EXPECT_EQ(*body.json_length, json.size());
  EXPECT_EQ(body.body, json + std::string("\x00\x00\x80\x3f\x00\x3c", 6));
}

TEST(HttpCodec, NonFiniteOutputsGoBinary) {
  InferResponse resp{"m",
                     "",
                     "",
                     {{"x", makeTensor<float>(DType::kF32, {2}, {1.0f, std::nanf("")})},
                      {"d", makeTensor<double>(DType::kF64, {1}, {-INFINITY})}}};
  HttpBody body = encodeHttpInferResponse(resp, {});
  ASSERT_TRUE(body.json_length.has_value());
  Result<InferResponse> back =
      decodeHttpInferResponse(body.body, std::to_string(*body.json_length));
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_TRUE(sameBytes(back->outputs[0].tensor, resp.outputs[0].tensor));
  EXPECT_TRUE(sameBytes(back->outputs[1].tensor, resp.outputs[1].tensor));
}

TEST(HttpCodec, ResponseRoundTripsJsonAndBinary) {
  InferResponse resp{"m", "", "id", everyDtype()};
  for (bool binary : {false, true}) {
    SCOPED_TRACE(binary ? "binary" : "json");
    OutputEncoding enc;
    enc.binary_by_default = binary;
    HttpBody body = encodeHttpInferResponse(resp, enc);
    std::optional<std::string> header;
    if (body.json_length)
      header = std::to_string(*body.json_length);
    Result<InferResponse> back = decodeHttpInferResponse(
        body.body, header ? std::optional<std::string_view>(*header) : std::nullopt);
    ASSERT_TRUE(back.isOk()) << back.status().toString();
    EXPECT_EQ(back->model_name, "m");
    EXPECT_EQ(back->id, "id");
    ASSERT_EQ(back->outputs.size(), resp.outputs.size());
    for (size_t i = 0; i < resp.outputs.size(); ++i)
      EXPECT_TRUE(sameBytes(back->outputs[i].tensor, resp.outputs[i].tensor))
          << resp.outputs[i].name;
  }
}

TEST(HttpCodec, RequestRoundTrips) {
  InferRequest req;
  req.model_name = "m";
  req.id = "q";
  req.inputs = everyDtype();
  req.requested_outputs = {"y", "z"};
  OutputEncoding enc;
  enc.per_output = {{"z", true}};
  for (bool binary : {false, true}) {
    SCOPED_TRACE(binary ? "binary" : "json");
    HttpBody body = encodeHttpInferRequest(req, binary, enc);
    // FP16/BF16 have no JSON form, so there is always a binary part here.
    ASSERT_TRUE(body.json_length.has_value());
    std::string header = std::to_string(*body.json_length);
    Result<HttpInferRequest> back =
        decodeHttpInferRequest({"m", ""}, body.body, header, Clock::now());
    ASSERT_TRUE(back.isOk()) << back.status().toString();
    EXPECT_EQ(back->request.id, "q");
    EXPECT_EQ(back->request.requested_outputs, req.requested_outputs);
    EXPECT_FALSE(back->output_encoding.binaryFor("y"));
    EXPECT_TRUE(back->output_encoding.binaryFor("z"));
    ASSERT_EQ(back->request.inputs.size(), req.inputs.size());
    for (size_t i = 0; i < req.inputs.size(); ++i)
      EXPECT_TRUE(sameBytes(back->request.inputs[i].tensor, req.inputs[i].tensor))
          << req.inputs[i].name;
  }
}

TEST(HttpCodec, FloatsRoundTripExactlyThroughJson) {
  // A spread of bit patterns over every finite float exponent and many mantissas, plus
  // doubles, through JSON text and back as a client parses it (double, then cast).
  std::vector<float> fs;
  for (uint64_t bits = 0; bits < 0x7f800000u; bits += 9973) {
    float f;
    uint32_t b = static_cast<uint32_t>(bits);
    std::memcpy(&f, &b, 4);
    fs.push_back(f);
    fs.push_back(-f);
  }
  std::vector<double> ds;
  for (uint64_t bits = 1; bits < 0x7ff0000000000000ull; bits += 0x0000123456789abcull) {
    double d;
    std::memcpy(&d, &bits, 8);
    ds.push_back(d);
  }
  InferResponse resp{
      "m",
      "",
      "",
      {{"f", makeTensor<float>(DType::kF32, {static_cast<int64_t>(fs.size())}, fs)},
       {"d", makeTensor<double>(DType::kF64, {static_cast<int64_t>(ds.size())}, ds)}}};
  HttpBody body = encodeHttpInferResponse(resp, {});
  ASSERT_FALSE(body.json_length.has_value());
  Result<InferResponse> back = decodeHttpInferResponse(body.body, std::nullopt);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_TRUE(sameBytes(back->outputs[0].tensor, resp.outputs[0].tensor));
  EXPECT_TRUE(sameBytes(back->outputs[1].tensor, resp.outputs[1].tensor));
}

TEST(HttpCodec, DeeplyNestedJsonIsRejectedSafely) {
  // 200k levels: neither parsing, checking nor destroying the document may recurse that deep.
  constexpr int kDepth = 200000;
  std::string nested = std::string(kDepth, '[') + "1" + std::string(kDepth, ']');
  std::string body =
      R"({"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":)" + nested + "}]}";
  Result<HttpInferRequest> r = decodeHttpInferRequest({"m", ""}, body, std::nullopt, Clock::now());
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(), "model 'm': input 'x': data is nested deeper than shape [1]");
  std::string unterminated =
      R"({"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":)" + std::string(kDepth, '[');
  r = decodeHttpInferRequest({"m", ""}, unterminated, std::nullopt, Clock::now());
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message().rfind("model 'm': invalid JSON: ", 0), 0u);
}

TEST(HttpCodec, MetadataJson) {
  EXPECT_EQ(serverMetadataJson({"ReactantServer", "0.1.0", {"system_shared_memory"}}),
            R"({"extensions":["system_shared_memory"],"name":"ReactantServer","version":"0.1.0"})");
  protocol::ModelMetadata md{"digits",
                             {},
                             "cpu",
                             {{"image", DType::kF32, {-1, 8, 8, 1}}},
                             {{"logits", DType::kF32, {-1, 10}}}};
  EXPECT_EQ(modelMetadataJson(md),
            R"({"inputs":[{"datatype":"FP32","name":"image","shape":[-1,8,8,1]}],)"
            R"("name":"digits","outputs":[{"datatype":"FP32","name":"logits","shape":[-1,10]}],)"
            R"("platform":"cpu","versions":[]})");
}

TEST(HttpCodec, ResponseDecodeRejectsBadBodies) {
  Result<InferResponse> r = decodeHttpInferResponse(R"({"outputs":[{"name":"y"}]})", std::nullopt);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(), "output 'y': 'datatype' must be a string");
  r = decodeHttpInferResponse(R"({"model_name":"m"})", std::nullopt);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(), "response has no 'outputs' array");
  std::string json =
      R"({"outputs":[{"name":"y","datatype":"FP32","shape":[1],"parameters":{"binary_data_size":4}}]})";
  std::string header = std::to_string(json.size());
  r = decodeHttpInferResponse(json + "\x01\x02", header);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(), "output 'y': binary_data_size 4 runs past the end of the body "
                                  "(2 bytes after the JSON header)");
}

} // namespace
} // namespace rs::protocol
