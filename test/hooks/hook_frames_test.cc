//===- test/hooks/hook_frames_test.cc - The hook channel's frames and memfds ===//
#include "hooks/hook_frames.h"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace rs::hooks {
namespace {

using nlohmann::json;

Tensor floats(Shape shape, std::vector<float> values) {
  return Tensor::copyOf(DType::kF32, std::move(shape),
                        {reinterpret_cast<const uint8_t *>(values.data()), values.size() * 4});
}

TEST(HookFrames, TensorsRoundTripThroughOneMemfd) {
  std::vector<protocol::NamedTensor> in = {
      {"x", floats({2, 2}, {1, 2, 3, 4})},
      protocol::NamedTensor::ofBytes("text", protocol::BytesTensor::fromElements(
                                                 {2}, std::vector<std::string_view>{"hello", ""})),
  };
  Result<SharedTensors> shared = writeSharedTensors(in);
  ASSERT_TRUE(shared.isOk()) << shared.status().toString();
  EXPECT_EQ(shared->descriptors,
            json::parse(R"([{"name":"x","datatype":"FP32","shape":[2,2],"offset":0,"nbytes":16},
                            {"name":"text","datatype":"BYTES","shape":[2],"offset":16,"nbytes":13}])"));
  Result<std::vector<protocol::NamedTensor>> out =
      readSharedTensors(shared->fd.get(), shared->descriptors, "test");
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].tensor.shape(), (Shape{2, 2}));
  EXPECT_EQ(std::memcmp((*out)[0].tensor.data(), in[0].tensor.data(), 16), 0);
  ASSERT_TRUE((*out)[1].isBytes());
  EXPECT_EQ(*(*out)[1].bytes, *in[1].bytes);
}

/// The error readSharedTensors gives for `descriptors` over the 16 bytes of one FP32 [2,2].
std::string readError(const json &descriptors) {
  Result<SharedTensors> shared = writeSharedTensors({{"x", floats({2, 2}, {1, 2, 3, 4})}});
  EXPECT_TRUE(shared.isOk());
  Result<std::vector<protocol::NamedTensor>> out =
      readSharedTensors(shared->fd.get(), descriptors, "postprocess result");
  EXPECT_FALSE(out.isOk());
  EXPECT_EQ(out.status().code(), StatusCode::kInternal);
  return out.status().message();
}

TEST(HookFrames, EveryDescriptorIsCheckedAgainstItsMemfd) {
  auto one = [](json patch) {
    json d = {
        {"name", "y"}, {"datatype", "FP32"}, {"shape", {2, 2}}, {"offset", 0}, {"nbytes", 16}};
    d.merge_patch(patch);
    return json::array({d});
  };
  EXPECT_EQ(readError(one({{"offset", 8}})),
            "postprocess result: tensor 'y': bytes [8, 24) lie outside its shared memory of 16 "
            "bytes");
  EXPECT_EQ(readError(one({{"offset", 18446744073709551615ull}})),
            "postprocess result: tensor 'y': bytes [18446744073709551615, 15) lie outside its "
            "shared memory of 16 bytes");
  EXPECT_EQ(readError(one({{"nbytes", 12}})),
            "postprocess result: tensor 'y': 12 bytes for shape [2,2] of FP32 (16 expected)");
  EXPECT_EQ(readError(one({{"datatype", "FP99"}})),
            "postprocess result: tensor 'y': unknown datatype 'FP99'");
  EXPECT_EQ(readError(one({{"shape", {2, -2}}})),
            "postprocess result: tensor 'y': negative dimension -2 in shape [2,-2]");
  EXPECT_EQ(readError(one({{"nbytes", "16"}})),
            "postprocess result: tensor 0 is not described by name, datatype, shape, offset and "
            "nbytes");
  json twice = one(json::object());
  twice.push_back(twice[0]);
  EXPECT_EQ(readError(twice), "postprocess result: tensor 'y' given twice");
  EXPECT_EQ(readError(one({{"datatype", "BYTES"}, {"shape", {1}}})),
            "postprocess result: tensor 'y': BYTES element 0 declares 1065353216 bytes but only "
            "12 remain");
}

TEST(HookFrames, FramesCarryJsonAndOneDescriptor) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  UniqueFd a(sv[0]), b(sv[1]);
  Result<SharedTensors> shared = writeSharedTensors({{"x", floats({1}, {7})}});
  ASSERT_TRUE(shared.isOk());
  ASSERT_TRUE(sendFrame(a.get(), {{"op", "preprocess"}}, shared->fd.get()).isOk());
  Result<Frame> got = receiveFrame(b.get(), Clock::now() + std::chrono::seconds(5));
  ASSERT_TRUE(got.isOk()) << got.status().toString();
  EXPECT_EQ(got->body, json({{"op", "preprocess"}}));
  EXPECT_TRUE(got->fd.valid());
  // Nothing more arrives: the deadline ends the wait; a closed peer is Unavailable.
  Result<Frame> none = receiveFrame(b.get(), Clock::now());
  EXPECT_EQ(none.status().code(), StatusCode::kDeadlineExceeded);
  a.reset();
  Result<Frame> closed = receiveFrame(b.get(), Clock::now() + std::chrono::seconds(5));
  EXPECT_EQ(closed.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(closed.status().message(), "the hook process closed its socket");
}

TEST(HookFrames, AnOversizedFrameIsRefusedBeforeItIsRead) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  UniqueFd a(sv[0]), b(sv[1]);
  const unsigned char head[4] = {0xff, 0xff, 0xff, 0xff};
  ASSERT_EQ(::write(a.get(), head, 4), 4);
  Result<Frame> got = receiveFrame(b.get(), Clock::now() + std::chrono::seconds(5));
  EXPECT_EQ(got.status().code(), StatusCode::kInternal);
  EXPECT_EQ(got.status().message(),
            "the hook process sent a frame of 4294967295 bytes (at most 67108864)");
}

} // namespace
} // namespace rs::hooks
