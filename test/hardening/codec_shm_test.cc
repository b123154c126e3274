//===- test/hardening/codec_shm_test.cc - Shared memory tensors in the codecs -===//
#include "protocol/grpc_codec.h"
#include "protocol/http_codec.h"
#include "shm_util.h"

#include <gtest/gtest.h>

namespace rs::protocol {
namespace {

using rs::testing::kPeer;
using rs::testing::ShmObject;

class CodecShm : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(object_.ok());
    object_.writeValues<float>(0, {1, 2, 3, 4, 5, 6, 7, 8});
    ASSERT_TRUE(registry_.registerRegion(kPeer, {"in", object_.key(), 0, 64}).isOk());
    ASSERT_TRUE(registry_.registerRegion(kPeer, {"out", object_.key(), 64, 64}).isOk());
    options_.now = protocol::Clock::now();
    options_.shared_memory = &registry_;
    options_.shared_memory_owner = kPeer;
  }

  static void setParam(inference::InferParameter &p, const std::string &v) {
    p.set_string_param(v);
  }
  static void setParam(inference::InferParameter &p, int64_t v) { p.set_int64_param(v); }

  /// A gRPC request: input "x" FP32 [1,4] from region `region` at `offset`, input "w" FP32 [2]
  /// inline (raw), output "y" to region "out".
  inference::ModelInferRequest grpcRequest(const std::string &region, int64_t offset,
                                           int64_t byte_size) {
    inference::ModelInferRequest msg;
    msg.set_model_name("m");
    msg.set_id("7");
    auto *x = msg.add_inputs();
    x->set_name("x");
    x->set_datatype("FP32");
    x->add_shape(1);
    x->add_shape(4);
    setParam((*x->mutable_parameters())[kShmRegionParameter], region);
    setParam((*x->mutable_parameters())[kShmOffsetParameter], offset);
    setParam((*x->mutable_parameters())[kShmByteSizeParameter], byte_size);
    auto *w = msg.add_inputs();
    w->set_name("w");
    w->set_datatype("FP32");
    w->add_shape(2);
    float wv[2] = {0.5f, -1};
    msg.add_raw_input_contents(reinterpret_cast<const char *>(wv), 8);
    auto *y = msg.add_outputs();
    y->set_name("y");
    setParam((*y->mutable_parameters())[kShmRegionParameter], std::string("out"));
    setParam((*y->mutable_parameters())[kShmByteSizeParameter], int64_t{16});
    setParam((*y->mutable_parameters())[kShmOffsetParameter], int64_t{8});
    return msg;
  }

  ShmObject object_{256};
  SharedMemoryRegistry registry_;
  DecodeOptions options_;
};

TEST_F(CodecShm, GrpcInputFromRegionOutputToRegion) {
  Result<DecodedInferRequest> d = decodeModelInferRequest(grpcRequest("in", 16, 16), options_);
  ASSERT_TRUE(d.isOk()) << d.status().message();
  ASSERT_EQ(d->request.inputs.size(), 2u);
  const Tensor &x = d->request.inputs[0].tensor;
  EXPECT_EQ(x.shape(), (Shape{1, 4}));
  EXPECT_EQ(std::vector<float>(x.dataAs<float>(), x.dataAs<float>() + 4),
            (std::vector<float>{5, 6, 7, 8}));
  EXPECT_EQ(d->request.inputs[1].tensor.dataAs<float>()[1], -1.0f); // raw entry 0 is "w"
  ASSERT_EQ(d->shared_memory_outputs.size(), 1u);
  EXPECT_EQ(d->shared_memory_outputs[0].name, "y");
  EXPECT_EQ(d->request.requested_outputs, (std::vector<std::string>{"y"}));

  // The reply: "y" goes to the region, "z" inline; raw entries stay aligned.
  protocol::InferResponse response;
  response.model_name = "m";
  std::vector<float> y = {9, 10, 11, 12};
  response.outputs.push_back(
      {"y", Tensor::copyOf(DType::kF32, {1, 4}, {reinterpret_cast<uint8_t *>(y.data()), 16})});
  response.outputs.push_back(
      {"z", Tensor::copyOf(DType::kF32, {1}, {reinterpret_cast<uint8_t *>(y.data()), 4})});
  ASSERT_TRUE(writeSharedMemoryOutputs(d->shared_memory_outputs, response).isOk());
  EXPECT_EQ(object_.readValues<float>(64 + 8, 4), y);
  inference::ModelInferResponse out;
  encodeModelInferResponse(response, d->shared_memory_outputs, &out);
  ASSERT_EQ(out.outputs_size(), 2);
  ASSERT_EQ(out.raw_output_contents_size(), 2);
  EXPECT_EQ(out.raw_output_contents(0), "");
  EXPECT_EQ(out.raw_output_contents(1).size(), 4u);
  const auto &params = out.outputs(0).parameters();
  EXPECT_EQ(params.at(kShmRegionParameter).string_param(), "out");
  EXPECT_EQ(params.at(kShmByteSizeParameter).int64_param(), 16);
  EXPECT_EQ(params.at(kShmOffsetParameter).int64_param(), 8);
  EXPECT_EQ(out.outputs(0).shape_size(), 2);
  EXPECT_EQ(out.outputs(1).parameters_size(), 0);
}

TEST_F(CodecShm, GrpcErrors) {
  auto code = [&](const inference::ModelInferRequest &msg) {
    return decodeModelInferRequest(msg, options_).status();
  };
  Status s = code(grpcRequest("in", 52, 16));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "model 'm', request '7': input 'x': shared memory region \"in\": 16 "
                         "bytes at offset 52 run past the region's 64 bytes");
  s = code(grpcRequest("in", std::numeric_limits<int64_t>::max(), 16));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  s = code(grpcRequest("in", -8, 16));
  EXPECT_EQ(s.message(), "model 'm', request '7': input 'x': parameter 'shared_memory_offset' "
                         "must be a non-negative integer");
  s = code(grpcRequest("in", 0, 12));
  EXPECT_EQ(s.message(), "model 'm', request '7': input 'x': shared_memory_byte_size is 12 bytes "
                         "but shape [1,4] of FP32 needs 16 bytes");
  s = code(grpcRequest("nope", 0, 16));
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "model 'm', request '7': input 'x': shared memory region \"nope\" is not registered");
  inference::ModelInferRequest unbound = grpcRequest("in", 0, 16);
  setParam((*unbound.mutable_outputs(0)->mutable_parameters())[kShmRegionParameter],
           std::string("gone"));
  s = code(unbound);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "model 'm', request '7': output 'y': shared memory region \"gone\" is not registered");

  inference::ModelInferRequest msg = grpcRequest("in", 0, 16);
  (*msg.mutable_outputs(0)->mutable_parameters())[kShmOffsetParameter].set_int64_param(56);
  s = code(msg);
  EXPECT_EQ(s.message(), "model 'm', request '7': output 'y': shared memory region \"out\": 16 "
                         "bytes at offset 56 run past the region's 64 bytes");

  msg = grpcRequest("in", 0, 16);
  msg.add_raw_input_contents("extra");
  s = code(msg);
  EXPECT_EQ(s.message(), "model 'm', request '7': request has 2 raw_input_contents entries for 1 "
                         "inputs not in shared memory");

  msg = grpcRequest("in", 0, 16);
  msg.mutable_inputs(0)->mutable_parameters()->erase(kShmByteSizeParameter);
  s = code(msg);
  EXPECT_EQ(s.message(), "model 'm', request '7': input 'x': parameter 'shared_memory_byte_size' "
                         "is required with 'shared_memory_region'");

  msg = grpcRequest("in", 0, 16);
  msg.mutable_inputs(0)->mutable_parameters()->erase(kShmRegionParameter);
  msg.clear_raw_input_contents(); // x is inline now: a raw entry for each input
  msg.add_raw_input_contents(std::string(16, '\0'));
  msg.add_raw_input_contents(std::string(8, '\0'));
  s = code(msg);
  EXPECT_EQ(s.message(), "model 'm', request '7': input 'x': shared memory size or offset given "
                         "without 'shared_memory_region'");

  msg = grpcRequest("in", 0, 16);
  msg.mutable_inputs(0)->mutable_contents()->add_fp32_contents(1);
  s = code(msg);
  EXPECT_EQ(s.message(), "model 'm', request '7': input 'x': typed contents must be empty when "
                         "the data is in shared memory");

  // Without a registry (a front-end that does not offer the extension): Unimplemented.
  DecodeOptions plain;
  s = decodeModelInferRequest(grpcRequest("in", 0, 16), plain).status();
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);

  // The per-request limit on bytes taken from shared memory.
  DecodeOptions limited = options_;
  limited.max_shared_memory_input_bytes = 8;
  s = decodeModelInferRequest(grpcRequest("in", 0, 16), limited).status();
  EXPECT_EQ(s.message(), "model 'm', request '7': input 'x': inputs in shared memory exceed the "
                         "limit of 8 bytes per request");
}

TEST_F(CodecShm, HttpInputFromRegionOutputToRegion) {
  const std::string body =
      R"({"id":"q","inputs":[{"name":"x","datatype":"FP32","shape":[2,2],"parameters":)"
      R"({"shared_memory_region":"in","shared_memory_offset":4,"shared_memory_byte_size":16}},)"
      R"({"name":"w","datatype":"INT32","shape":[1],"data":[3]}],)"
      R"("outputs":[{"name":"y","parameters":{"shared_memory_region":"out",)"
      R"("shared_memory_byte_size":64}},{"name":"z"}]})";
  Result<HttpInferRequest> d = decodeHttpInferRequest({"m", ""}, body, std::nullopt, options_);
  ASSERT_TRUE(d.isOk()) << d.status().message();
  const Tensor &x = d->request.inputs[0].tensor;
  EXPECT_EQ(std::vector<float>(x.dataAs<float>(), x.dataAs<float>() + 4),
            (std::vector<float>{2, 3, 4, 5}));
  ASSERT_EQ(d->shared_memory_outputs.size(), 1u);

  protocol::InferResponse response;
  response.model_name = "m";
  response.id = "q";
  std::vector<int32_t> y = {-1, 5};
  response.outputs.push_back(
      {"y", Tensor::copyOf(DType::kI32, {2}, {reinterpret_cast<uint8_t *>(y.data()), 8})});
  response.outputs.push_back(
      {"z", Tensor::copyOf(DType::kI32, {1}, {reinterpret_cast<uint8_t *>(y.data()), 4})});
  ASSERT_TRUE(writeSharedMemoryOutputs(d->shared_memory_outputs, response).isOk());
  EXPECT_EQ(object_.readValues<int32_t>(64, 2), y);
  HttpBody out = encodeHttpInferResponse(response, d->output_encoding, d->shared_memory_outputs);
  EXPECT_FALSE(out.json_length.has_value());
  EXPECT_EQ(out.body, R"({"model_name":"m","model_version":"","id":"q","outputs":[)"
                      R"({"name":"y","datatype":"INT32","shape":[2]},)"
                      R"({"name":"z","datatype":"INT32","shape":[1],"data":[-1]}]})");
}

TEST_F(CodecShm, HttpErrors) {
  auto decode = [&](const std::string &params) {
    std::string body = R"({"inputs":[{"name":"x","datatype":"FP32","shape":[4],)" + params + "}]}";
    return decodeHttpInferRequest({"m", ""}, body, std::nullopt, options_).status();
  };
  Status s = decode(R"("parameters":{"shared_memory_region":"in","shared_memory_byte_size":16,)"
                    R"("shared_memory_offset":56})");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "model 'm': input 'x': shared memory region \"in\": 16 bytes at offset "
                         "56 run past the region's 64 bytes");
  s = decode(R"("parameters":{"shared_memory_region":"in","shared_memory_byte_size":16,)"
             R"("shared_memory_offset":18446744073709551615})");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  s = decode(R"("parameters":{"shared_memory_region":"gone","shared_memory_byte_size":16})");
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "model 'm': input 'x': shared memory region \"gone\" is not registered");
  s = decode(R"("parameters":{"shared_memory_region":"in","shared_memory_byte_size":16},)"
             R"("data":[1,2,3,4])");
  EXPECT_EQ(s.message(), "model 'm': input 'x': has shared memory parameters and 'data'");
  s = decode(R"("parameters":{"shared_memory_region":3,"shared_memory_byte_size":16})");
  EXPECT_EQ(s.message(),
            "model 'm': input 'x': parameter 'shared_memory_region' must be a non-empty string");
  s = decode(R"("parameters":{"shared_memory_region":"in","shared_memory_byte_size":"16"})");
  EXPECT_EQ(s.message(), "model 'm': input 'x': shared_memory_byte_size must be a non-negative "
                         "integer, got \"16\"");

  const std::string body =
      R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":[1]}],"outputs":[)"
      R"({"name":"y","parameters":{"shared_memory_region":"out","shared_memory_byte_size":8,)"
      R"("shared_memory_offset":60}}]})";
  s = decodeHttpInferRequest({"m", ""}, body, std::nullopt, options_).status();
  EXPECT_EQ(s.message(), "model 'm': output 'y': shared memory region \"out\": 8 bytes at offset "
                         "60 run past the region's 64 bytes");
  std::string unbound = body;
  unbound.replace(unbound.find("\"out\""), 5, "\"gone\"");
  s = decodeHttpInferRequest({"m", ""}, unbound, std::nullopt, options_).status();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "model 'm': output 'y': shared memory region \"gone\" is not registered");
  DecodeOptions plain;
  s = decodeHttpInferRequest({"m", ""}, body, std::nullopt, plain).status();
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
}

TEST_F(CodecShm, BytesInputFromRegionOutputToRegion) {
  const std::string serialized("\x02\0\0\0hi\0\0\0\0", 10);
  object_.write(0, serialized.data(), serialized.size());
  auto request = [&](int64_t byte_size) {
    inference::ModelInferRequest msg;
    msg.set_model_name("m");
    auto *s = msg.add_inputs();
    s->set_name("s");
    s->set_datatype("BYTES");
    s->add_shape(2);
    setParam((*s->mutable_parameters())[kShmRegionParameter], std::string("in"));
    setParam((*s->mutable_parameters())[kShmByteSizeParameter], byte_size);
    return msg;
  };
  Result<DecodedInferRequest> d = decodeModelInferRequest(request(10), options_);
  ASSERT_TRUE(d.isOk()) << d.status().message();
  ASSERT_EQ(d->request.inputs.size(), 1u);
  ASSERT_TRUE(d->request.inputs[0].isBytes());
  EXPECT_EQ(d->request.inputs[0].bytes->element(0), "hi");
  EXPECT_EQ(d->request.inputs[0].bytes->element(1), "");
  // The window holds the elements and nothing else; its size counts against the limit.
  EXPECT_EQ(decodeModelInferRequest(request(12), options_).status().message(),
            "model 'm': input 's': BYTES data has 2 bytes after its last element (shape [2] of "
            "BYTES holds 2 elements)");
  EXPECT_EQ(decodeModelInferRequest(request(80), options_).status().message(),
            "model 'm': input 's': shared memory region \"in\": 80 bytes at offset 0 run past "
            "the region's 64 bytes");
  DecodeOptions limited = options_;
  limited.max_shared_memory_input_bytes = 8;
  EXPECT_EQ(decodeModelInferRequest(request(10), limited).status().message(),
            "model 'm': input 's': inputs in shared memory exceed the limit of 8 bytes per "
            "request");
  const std::string too_long("\x50\0\0\0abcd", 8);
  object_.write(0, too_long.data(), too_long.size());
  EXPECT_EQ(decodeModelInferRequest(request(8), options_).status().message(),
            "model 'm': input 's': BYTES element 0 declares 80 bytes but only 4 remain");

  // A BYTES output goes to its region serialized.
  const std::string body =
      R"({"inputs":[],"outputs":[{"name":"t","parameters":{"shared_memory_region":"out",)"
      R"("shared_memory_byte_size":64}}]})";
  Result<HttpInferRequest> h = decodeHttpInferRequest({"m", ""}, body, std::nullopt, options_);
  ASSERT_TRUE(h.isOk()) << h.status().message();
  protocol::InferResponse response;
  response.model_name = "m";
  const std::vector<std::string_view> elements = {"abc"};
  response.outputs.push_back(NamedTensor::ofBytes("t", BytesTensor::fromElements({1}, elements)));
  ASSERT_TRUE(writeSharedMemoryOutputs(h->shared_memory_outputs, response).isOk());
  const std::vector<char> written = object_.readValues<char>(64, 7);
  EXPECT_EQ(std::string(written.begin(), written.end()), std::string("\x03\0\0\0abc", 7));
  HttpBody out = encodeHttpInferResponse(response, h->output_encoding, h->shared_memory_outputs);
  // Over HTTP the entry carries no parameters, as Triton's (protocol/http_body.cc).
  EXPECT_EQ(out.body, R"({"model_name":"m","model_version":"","outputs":[)"
                      R"({"name":"t","datatype":"BYTES","shape":[1]}]})");
}

} // namespace
} // namespace rs::protocol
