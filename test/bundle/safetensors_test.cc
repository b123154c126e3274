//===- test/bundle/safetensors_test.cc - safetensors reader and writer -----===//
#include "bundle/safetensors.h"

#include "test_util.h"

#include <gtest/gtest.h>

#include <cstring>

namespace rs::bundle {
namespace {

using testing::goldenFile;
using testing::safetensorsBytes;
using testing::TempDir;
using testing::writeFile;

float floatAt(const Tensor &t, int64_t i) { return t.dataAs<float>()[i]; }

TEST(Safetensors, ReadsGoldenFile) {
  auto file = SafetensorsFile::open(goldenFile("digits_cnn", "b1.safetensors"));
  ASSERT_TRUE(file.isOk()) << file.status().toString();
  EXPECT_EQ(file->names(), (std::vector<std::string>{"image", "logits", "probs"}));
  EXPECT_TRUE(file->metadata().empty());

  auto image = file->tensor("image");
  ASSERT_TRUE(image.isOk()) << image.status().toString();
  EXPECT_EQ(image->dtype(), DType::kF32);
  EXPECT_EQ(image->shape(), (Shape{1, 8, 8, 1}));
  // Values checked against the file with Python's struct module.
  EXPECT_EQ(floatAt(*image, 0), 0.0f);
  EXPECT_EQ(floatAt(*image, 1), 0.0625f);
  EXPECT_EQ(floatAt(*image, 2), 0.5f);
  EXPECT_EQ(floatAt(*image, 3), 0.75f);

  auto logits = file->tensor("logits");
  ASSERT_TRUE(logits.isOk());
  EXPECT_EQ(logits->shape(), (Shape{1, 10}));
  EXPECT_FLOAT_EQ(floatAt(*logits, 0), -10.266572952270508f);
}

TEST(Safetensors, TensorsAreZeroCopyAndOutliveTheFile) {
  Tensor w;
  const uint8_t *expected_data = nullptr;
  {
    auto file = SafetensorsFile::open(testing::fixtureBundle("op_zoo") + "/weights.safetensors");
    ASSERT_TRUE(file.isOk()) << file.status().toString();
    EXPECT_EQ(file->metadata().at("argument_order"), "[\"w\"]");
    auto t = file->tensor("w");
    ASSERT_TRUE(t.isOk());
    w = *t;
    auto again = file->tensor("w");
    ASSERT_TRUE(again.isOk());
    expected_data = again->data();
  }
  // Same bytes (a view, not a copy) and still readable after the file object is gone.
  EXPECT_EQ(w.data(), expected_data);
  EXPECT_EQ(w.shape(), (Shape{8, 8}));
  EXPECT_EQ(w.byteSize(), 256);
  // The bytes are those of the file's data buffer (header length 104).
  std::string raw = testing::readFile(testing::fixtureBundle("op_zoo") + "/weights.safetensors");
  ASSERT_EQ(raw.size(), 8u + 104u + 256u);
  EXPECT_EQ(std::memcmp(w.data(), raw.data() + 8 + 104, 256), 0);
}

TEST(Safetensors, GoldenScalarsHaveShapeOne) {
  auto file = SafetensorsFile::open(goldenFile("op_zoo", "b1.safetensors"));
  ASSERT_TRUE(file.isOk()) << file.status().toString();
  auto idx = file->tensor("idx");
  ASSERT_TRUE(idx.isOk());
  EXPECT_EQ(idx->dtype(), DType::kI32);
  EXPECT_EQ(idx->shape(), (Shape{1}));
  EXPECT_EQ(file->size(), 14u);
}

TEST(Safetensors, MissingTensorIsNotFound) {
  auto file = SafetensorsFile::open(goldenFile("digits_cnn", "b1.safetensors"));
  ASSERT_TRUE(file.isOk());
  auto t = file->tensor("nope");
  ASSERT_FALSE(t.isOk());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_NE(t.status().message().find("no tensor named 'nope'"), std::string::npos);
}

TEST(Safetensors, MissingFileIsNotFound) {
  auto file = SafetensorsFile::open("/nonexistent/dir/weights.safetensors");
  ASSERT_FALSE(file.isOk());
  EXPECT_EQ(file.status().code(), StatusCode::kNotFound);
  EXPECT_NE(file.status().message().find("/nonexistent/dir/weights.safetensors"),
            std::string::npos);
}

TEST(Safetensors, DirectoryIsRefusedByName) {
  TempDir dir;
  auto file = SafetensorsFile::open(dir.path());
  ASSERT_FALSE(file.isOk());
  EXPECT_EQ(file.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(file.status().message(), dir.str() + ": is a directory, not a file");
}

TEST(Safetensors, WriteThenReadRoundTrips) {
  TempDir dir;
  std::vector<float> a_values = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -0.5f};
  Tensor a =
      Tensor::copyOf(DType::kF32, {2, 3}, {reinterpret_cast<const uint8_t *>(a_values.data()), 24});
  std::vector<int32_t> b_values = {42};
  Tensor b =
      Tensor::copyOf(DType::kI32, {}, {reinterpret_cast<const uint8_t *>(b_values.data()), 4});
  Tensor c = Tensor::copyOf(DType::kU8, {3}, std::vector<uint8_t>{9, 8, 7});
  Tensor empty = Tensor::zeros(DType::kF64, {0, 4});
  const std::string path = dir.file("out.safetensors");
  Status s = writeSafetensors(path, {{"zeta", a}, {"b", b}, {"c", c}, {"empty", empty}},
                              {{"argument_order", "[\"zeta\"]"}, {"k", "v"}});
  ASSERT_TRUE(s.isOk()) << s.toString();

  std::string bytes = testing::readFile(path);
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  EXPECT_EQ((8 + header_len) % 8, 0u) << "data must start 8-byte aligned";
  EXPECT_EQ(bytes.size(), 8 + header_len + 24 + 4 + 3);

  auto file = SafetensorsFile::open(path);
  ASSERT_TRUE(file.isOk()) << file.status().toString();
  EXPECT_EQ(file->names(), (std::vector<std::string>{"b", "c", "empty", "zeta"}));
  EXPECT_EQ(file->metadata(),
            (std::map<std::string, std::string>{{"argument_order", "[\"zeta\"]"}, {"k", "v"}}));
  auto ra = file->tensor("zeta");
  ASSERT_TRUE(ra.isOk());
  EXPECT_EQ(ra->dtype(), DType::kF32);
  EXPECT_EQ(ra->shape(), (Shape{2, 3}));
  EXPECT_EQ(std::memcmp(ra->data(), a_values.data(), 24), 0);
  auto rb = file->tensor("b");
  ASSERT_TRUE(rb.isOk());
  EXPECT_EQ(rb->shape(), Shape{});
  EXPECT_EQ(rb->dataAs<int32_t>()[0], 42);
  auto rc = file->tensor("c");
  ASSERT_TRUE(rc.isOk());
  EXPECT_EQ(rc->dtype(), DType::kU8);
  EXPECT_EQ(rc->data()[2], 7);
  auto re = file->tensor("empty");
  ASSERT_TRUE(re.isOk());
  EXPECT_EQ(re->shape(), (Shape{0, 4}));
  EXPECT_EQ(re->byteSize(), 0);
}

TEST(Safetensors, WriterRejectsBadNames) {
  TempDir dir;
  Tensor t = Tensor::zeros(DType::kF32, {1});
  Status dup = writeSafetensors(dir.file("x.safetensors"), {{"a", t}, {"a", t}});
  EXPECT_EQ(dup.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dup.message().find("duplicate tensor name 'a'"), std::string::npos);
  Status meta = writeSafetensors(dir.file("x.safetensors"), {{"__metadata__", t}});
  EXPECT_EQ(meta.code(), StatusCode::kInvalidArgument);
  Status invalid = writeSafetensors(dir.file("x.safetensors"), {{"a", Tensor()}});
  EXPECT_EQ(invalid.code(), StatusCode::kInvalidArgument);
  Status no_dir = writeSafetensors(dir.file("missing/x.safetensors"), {{"a", t}});
  EXPECT_EQ(no_dir.code(), StatusCode::kInternal);
}

TEST(Safetensors, UnalignedDataIsCopied) {
  TempDir dir;
  // Header of 5 bytes ("{...}" padded to make data start at offset 8 + len = odd).
  std::string header = R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  if ((8 + header.size()) % 4 == 0)
    header += " ";
  float v = 2.5f;
  writeFile(dir.file("u.safetensors"),
            safetensorsBytes(header, std::string(reinterpret_cast<const char *>(&v), 4)));
  auto file = SafetensorsFile::open(dir.file("u.safetensors"));
  ASSERT_TRUE(file.isOk()) << file.status().toString();
  auto t = file->tensor("x");
  ASSERT_TRUE(t.isOk());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % 4, 0u);
  EXPECT_EQ(t->dataAs<float>()[0], 2.5f);
}

struct CorruptCase {
  const char *label;
  std::string bytes;
  StatusCode code;
  const char *message; // substring of the error
};

std::vector<CorruptCase> corruptCases() {
  const std::string good_header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const std::string data(8, '\1');
  std::string good = safetensorsBytes(good_header, data);
  return {
      {"empty file", "", StatusCode::kDataLoss, "truncated: 0 bytes"},
      {"short length", std::string(5, '\0'), StatusCode::kDataLoss, "truncated: 5 bytes"},
      {"header longer than file", good.substr(0, 30), StatusCode::kDataLoss,
       "truncated: header length"},
      {"data truncated", good.substr(0, good.size() - 3), StatusCode::kDataLoss,
       "tensor 'w': data_offsets [0,8] exceed the data buffer of 5 bytes"},
      {"not json", safetensorsBytes("{\"w\": [", data), StatusCode::kDataLoss, "not valid JSON"},
      {"not object", safetensorsBytes("[1,2]", data), StatusCode::kDataLoss,
       "expected a JSON object"},
      {"unknown dtype",
       safetensorsBytes(R"({"w":{"dtype":"Q7","shape":[2],"data_offsets":[0,8]}})", data),
       StatusCode::kInvalidArgument, "tensor 'w': unknown dtype 'Q7'"},
      {"negative dim",
       safetensorsBytes(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", data),
       StatusCode::kInvalidArgument, "tensor 'w': negative dimension -2"},
      {"float dim",
       safetensorsBytes(R"({"w":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})", data),
       StatusCode::kDataLoss, "tensor 'w': corrupt entry: shape entries must be integers"},
      {"size mismatch",
       safetensorsBytes(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", data),
       StatusCode::kInvalidArgument,
       "tensor 'w': F32[3] needs 12 bytes but data_offsets [0,8] hold 8"},
      {"begin after end",
       safetensorsBytes(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", data),
       StatusCode::kDataLoss, "begin 8 is after end 0"},
      {"offset overflow",
       safetensorsBytes(
           R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[18446744073709551615,7]}})", data),
       StatusCode::kDataLoss, "'data_offsets' must be non-negative integers"},
      {"shape overflow",
       safetensorsBytes(
           R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", data),
       StatusCode::kInvalidArgument, "overflows int64"},
      {"missing dtype", safetensorsBytes(R"({"w":{"shape":[2],"data_offsets":[0,8]}})", data),
       StatusCode::kDataLoss, "missing or non-string 'dtype'"},
      {"overlap",
       safetensorsBytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                        R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                        data),
       StatusCode::kInvalidArgument, "tensor 'b' overlaps tensor 'a'"},
      {"metadata not string", safetensorsBytes(R"({"__metadata__":{"k":1}})", ""),
       StatusCode::kDataLoss, "__metadata__ value 'k' must be a string"},
  };
}

TEST(Safetensors, CorruptFilesGiveClearErrors) {
  TempDir dir;
  for (const CorruptCase &c : corruptCases()) {
    SCOPED_TRACE(c.label);
    const std::string path = dir.file("bad.safetensors");
    writeFile(path, c.bytes);
    auto file = SafetensorsFile::open(path);
    ASSERT_FALSE(file.isOk());
    EXPECT_EQ(file.status().code(), c.code) << file.status().toString();
    EXPECT_EQ(file.status().message().rfind(path + ": ", 0), 0u) << file.status().message();
    EXPECT_NE(file.status().message().find(c.message), std::string::npos)
        << file.status().message();
  }
}

TEST(Safetensors, EmptyHeaderIsValid) {
  TempDir dir;
  writeFile(dir.file("e.safetensors"), safetensorsBytes("{}", ""));
  auto file = SafetensorsFile::open(dir.file("e.safetensors"));
  ASSERT_TRUE(file.isOk()) << file.status().toString();
  EXPECT_EQ(file->size(), 0u);
}

} // namespace
} // namespace rs::bundle
