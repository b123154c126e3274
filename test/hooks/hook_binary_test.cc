//===- test/hooks/hook_binary_test.cc - Binary frames and the shared segment ===//
#include "hooks/hook_binary.h"
#include "hooks/hook_segment.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>

namespace rs::hooks {
namespace {

Tensor floats(Shape shape, std::vector<float> values) {
  return Tensor::copyOf(DType::kF32, std::move(shape),
                        {reinterpret_cast<const uint8_t *>(values.data()), values.size() * 4});
}

template <typename T> void put(std::string &out, T v) {
  out.append(reinterpret_cast<const char *>(&v), sizeof(T));
}

/// The header of a results frame of one result, and the result's status and count.
std::string oneResultHead(uint8_t status, uint32_t n) {
  std::string out;
  put<uint8_t>(out, kResultsFrame);
  put<uint8_t>(out, 0);
  put<uint16_t>(out, 0);
  put<uint32_t>(out, 1);
  put<uint8_t>(out, status);
  put<uint32_t>(out, n);
  return out;
}

/// A results frame of one result holding one tensor record.
std::string oneResult(uint8_t code, std::vector<int64_t> shape, uint64_t offset, uint64_t nbytes,
                      std::string name = "y") {
  std::string out = oneResultHead(0, 1);
  put<uint8_t>(out, code);
  put<uint8_t>(out, static_cast<uint8_t>(shape.size()));
  put<uint16_t>(out, static_cast<uint16_t>(name.size()));
  put<uint64_t>(out, offset);
  put<uint64_t>(out, nbytes);
  for (int64_t d : shape)
    put<int64_t>(out, d);
  return out + name;
}

TEST(HookSegment, IsSealedAgainstResizing) {
  Result<HookSegment> s = HookSegment::create(10, 3u << 20);
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  EXPECT_EQ(s->requestBytes(), HookSegment::kMinAreaBytes);
  EXPECT_EQ(s->replyOffset(), HookSegment::kMinAreaBytes);
  EXPECT_EQ(s->replyBytes(), 4u << 20);
  // The hook process gets this descriptor: it can neither shrink nor grow the memory.
  EXPECT_NE(::ftruncate(s->fd(), 0), 0);
  EXPECT_NE(::ftruncate(s->fd(), 64 << 20), 0);
  s->requestArea()[0] = 7;
  s->releaseFd();
  EXPECT_EQ(s->requestArea()[0], 7); // the mapping outlives the descriptor
}

TEST(HookBinary, CallsAreLaidOutAlignedInTheRequestArea) {
  std::vector<protocol::NamedTensor> a = {{"x", floats({1, 3}, {1, 2, 3})}};
  std::vector<protocol::NamedTensor> b = {
      {"x", floats({1}, {4})},
      protocol::NamedTensor::ofBytes(
          "t", protocol::BytesTensor::fromElements({1}, std::vector<std::string_view>{"hi"}))};
  const std::vector<const std::vector<protocol::NamedTensor> *> calls = {&a, &b};
  EXPECT_EQ(callsBytes(calls), 128u + 6u);
  std::vector<uint8_t> area(callsBytes(calls));
  const std::string body = encodeCalls(calls, {1, kSegmentAttached, area.data(), 4096, 1024});
  ASSERT_GE(body.size(), 32u);
  EXPECT_EQ(body[0], kCallsFrame);
  EXPECT_EQ(body[1], 1);
  EXPECT_EQ(body[2], kSegmentAttached);
  uint32_t count = 0;
  uint64_t used = 0, reply_offset = 0, reply_bytes = 0;
  std::memcpy(&count, body.data() + 4, 4);
  std::memcpy(&used, body.data() + 8, 8);
  std::memcpy(&reply_offset, body.data() + 16, 8);
  std::memcpy(&reply_bytes, body.data() + 24, 8);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(used, 134u);
  EXPECT_EQ(reply_offset, 4096u);
  EXPECT_EQ(reply_bytes, 1024u);
  float second = 0;
  std::memcpy(&second, area.data() + 64, 4);
  EXPECT_EQ(second, 4.0f);
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(area.data()) + 128, 6),
            std::string("\x02\0\0\0hi", 6));
  // Every record: 20 bytes, the dims, the name.
  EXPECT_EQ(body.size(), 32u + 4 + (20 + 16 + 1) + 4 + (20 + 8 + 1) + (20 + 8 + 1));
}

TEST(HookBinary, ResultsDecodeAndCopyOutOfTheReplyArea) {
  std::vector<float> reply(16, 0);
  reply[4] = 5;
  Result<ResultsFrame> frame = decodeResults(oneResult(11, {1, 2}, 16, 8));
  ASSERT_TRUE(frame.isOk()) << frame.status().toString();
  ASSERT_EQ(frame->results.size(), 1u);
  EXPECT_EQ(frame->extent, 24u);
  const SharedSource source{reinterpret_cast<const uint8_t *>(reply.data()), 64, -1};
  Result<std::vector<protocol::NamedTensor>> out =
      readTensors(frame->results[0].tensors, source, "postprocess result");
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].name, "y");
  EXPECT_EQ((*out)[0].tensor.shape(), (Shape{1, 2}));
  EXPECT_EQ((*out)[0].tensor.dataAs<float>()[0], 5.0f);
  reply[4] = 6; // the copy does not see later writes of the hook process
  EXPECT_EQ((*out)[0].tensor.dataAs<float>()[0], 5.0f);
}

/// The error of reading the single tensor of `body` out of a reply area of 64 bytes.
std::string readError(const std::string &body) {
  std::vector<uint8_t> reply(64, 0);
  Result<ResultsFrame> frame = decodeResults(body);
  EXPECT_TRUE(frame.isOk()) << frame.status().toString();
  if (!frame.isOk())
    return "";
  Result<std::vector<protocol::NamedTensor>> out =
      readTensors(frame->results[0].tensors, {reply.data(), reply.size(), -1}, "r");
  EXPECT_FALSE(out.isOk());
  EXPECT_EQ(out.status().code(), StatusCode::kInternal);
  return out.status().message();
}

TEST(HookBinary, EveryRecordIsCheckedAgainstTheReplyArea) {
  EXPECT_EQ(readError(oneResult(11, {1, 2}, 60, 8)),
            "r: tensor 'y': bytes [60, 68) lie outside its shared memory of 64 bytes");
  EXPECT_EQ(readError(oneResult(11, {1, 2}, UINT64_MAX - 3, 8)),
            "r: tensor 'y': bytes [18446744073709551612, 4) lie outside its shared memory of 64 "
            "bytes");
  EXPECT_EQ(readError(oneResult(11, {1, 2}, 0, 4)),
            "r: tensor 'y': 4 bytes for shape [1,2] of FP32 (8 expected)");
  EXPECT_EQ(readError(oneResult(11, {1, -2}, 0, 8)),
            "r: tensor 'y': negative dimension -2 in shape [1,-2]");
  EXPECT_EQ(readError(oneResult(11, {INT64_MAX, 4}, 0, 8)).substr(0, 14), "r: tensor 'y':");
  EXPECT_EQ(readError(oneResult(13, {1}, 0, 8)),
            "r: tensor 'y': BYTES data has 4 bytes after its last element (shape [1] of BYTES "
            "holds 1 elements)");
}

TEST(HookBinary, AMalformedResultsFrameIsRefused) {
  auto error = [](const std::string &body) {
    Result<ResultsFrame> frame = decodeResults(body);
    EXPECT_FALSE(frame.isOk());
    EXPECT_EQ(frame.status().code(), StatusCode::kInternal);
    const std::string prefix = "the hook process sent a malformed results frame: ";
    const std::string message = frame.status().message();
    return message.starts_with(prefix) ? message.substr(prefix.size()) : message;
  };
  const std::string good = oneResult(11, {1, 2}, 0, 8);
  EXPECT_EQ(error(good.substr(0, 6)), "the header is cut short");
  EXPECT_EQ(error("\x01" + good.substr(1)), "frame kind 1");
  for (size_t cut = 8; cut < good.size(); ++cut) // every prefix is refused (error() checks)
    EXPECT_FALSE(error(good.substr(0, cut)).empty()) << cut;
  EXPECT_EQ(error(good + "x"), "1 bytes after the last result");
  EXPECT_EQ(error(oneResult(0, {1}, 0, 4)), "unknown datatype code 0");
  EXPECT_EQ(error(oneResult(14, {1}, 0, 4)), "unknown datatype code 14");
  EXPECT_EQ(error(oneResult(11, std::vector<int64_t>(65, 1), 0, 4)), "a tensor of rank 65");
  std::string many = good;
  const uint32_t huge = 0xffffffff;
  std::memcpy(many.data() + 4, &huge, 4);
  EXPECT_EQ(error(many), "4294967295 results in 42 bytes");
  std::string tensors = good;
  std::memcpy(tensors.data() + 9, &huge, 4);
  EXPECT_EQ(error(tensors), "4294967295 tensors in 37 bytes");
  std::string status = good;
  status[8] = 3;
  EXPECT_EQ(error(status), "result status 3");
  const std::string raised = oneResultHead(1, 5) + "boom!";
  Result<ResultsFrame> frame = decodeResults(raised);
  ASSERT_TRUE(frame.isOk()) << frame.status().toString();
  EXPECT_EQ(frame->results[0].status, 1);
  EXPECT_EQ(frame->results[0].error, "boom!");
  EXPECT_EQ(error(raised.substr(0, raised.size() - 1)), "an error text is cut short");
}

} // namespace
} // namespace rs::hooks
