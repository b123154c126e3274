//===- test/server/infer_io_test.cc - Request files and output display ------===//
#include "client/infer_io.h"

#include "../protocol/tensor_text.h"
#include "bundle/safetensors.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace rs::server {
namespace {

using protocol::tensorText;

template <typename T> Tensor makeTensor(DType dtype, Shape shape, std::vector<T> values) {
  return Tensor::copyOf(
      dtype, std::move(shape),
      {reinterpret_cast<const uint8_t *>(values.data()), values.size() * sizeof(T)});
}

class InferIoTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("rs_infer_io_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string &name, const std::string &text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(InferIoTest, LoadsSafetensorsInputs) {
  std::string path = (dir_ / "in.safetensors").string();
  ASSERT_TRUE(
      bundle::writeSafetensors(path, {{"image", makeTensor<float>(DType::kF32, {1, 2}, {0.5f, 1})},
                                      {"mask", makeTensor<int32_t>(DType::kI32, {2}, {1, 0})}})
          .isOk());
  Result<protocol::InferRequest> r = client::loadInferRequest(path, "digits");
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(r->model_name, "digits");
  ASSERT_EQ(r->inputs.size(), 2u);
  EXPECT_EQ(tensorText(r->inputs[0]), "image FP32 [1,2] = 0.5 1");
  EXPECT_EQ(tensorText(r->inputs[1]), "mask INT32 [2] = 1 0");
}

TEST_F(InferIoTest, LoadsKServeJson) {
  std::string path = write("req.json", R"({"id":"j1","inputs":[
      {"name":"x","shape":[2,2],"datatype":"FP64","data":[[1,2],[3,4.5]]}],
      "outputs":[{"name":"y"}],"parameters":{"reactant_timeout_ns":1000}})");
  Result<protocol::InferRequest> r = client::loadInferRequest(path, "m");
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(r->model_name, "m");
  EXPECT_EQ(r->id, "j1");
  EXPECT_EQ(r->requested_outputs, std::vector<std::string>{"y"});
  EXPECT_FALSE(r->deadline.has_value());
  ASSERT_EQ(r->inputs.size(), 1u);
  EXPECT_EQ(tensorText(r->inputs[0]), "x FP64 [2,2] = 1 2 3 4.5");
}

TEST_F(InferIoTest, BadFiles) {
  Result<protocol::InferRequest> r = client::loadInferRequest((dir_ / "in.npy").string(), "m");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            (dir_ / "in.npy").string() + ": expected a .safetensors or .json request file");

  r = client::loadInferRequest((dir_ / "missing.json").string(), "m");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(),
            (dir_ / "missing.json").string() + ": cannot open: No such file or directory");

  std::string path =
      write("bad.json", R"({"inputs":[{"name":"x","shape":[3],"datatype":"INT8","data":[1,2]}]})");
  r = client::loadInferRequest(path, "m");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(),
            path + ": model 'm': input 'x': data has 2 elements but shape [3] of INT8 needs 3");

  r = client::loadInferRequest(write("bad.safetensors", "xx"), "m");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
}

TEST_F(InferIoTest, SavesOutputsWithMetadata) {
  protocol::InferResponse resp{"digits",
                               "",
                               "r9",
                               {{"probs", makeTensor<float>(DType::kF32, {1, 2}, {0.25f, 0.75f})},
                                {"label", makeTensor<int64_t>(DType::kI64, {1}, {1})}}};
  std::string path = (dir_ / "out.safetensors").string();
  ASSERT_TRUE(client::saveInferOutputs(path, resp).isOk());
  Result<bundle::SafetensorsFile> f = bundle::SafetensorsFile::open(path);
  ASSERT_TRUE(f.isOk()) << f.status().toString();
  EXPECT_EQ(f->metadata(),
            (std::map<std::string, std::string>{{"id", "r9"}, {"model_name", "digits"}}));
  Result<Tensor> probs = f->tensor("probs");
  ASSERT_TRUE(probs.isOk());
  EXPECT_EQ(tensorText({"probs", *probs}), "probs FP32 [1,2] = 0.25 0.75");
  Result<Tensor> label = f->tensor("label");
  ASSERT_TRUE(label.isOk());
  EXPECT_EQ(tensorText({"label", *label}), "label INT64 [1] = 1");
  // A BYTES output has no safetensors form.
  const std::vector<std::string_view> text = {"x"};
  resp.outputs.push_back(
      protocol::NamedTensor::ofBytes("text", protocol::BytesTensor::fromElements({1}, text)));
  Status s = client::saveInferOutputs(path, resp);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), path + ": output 'text' is BYTES, which safetensors cannot hold");
}

TEST(DescribeTensor, TruncatesAndShowsHalfFloats) {
  std::vector<float> ramp(40);
  for (size_t i = 0; i < ramp.size(); ++i)
    ramp[i] = static_cast<float>(i) / 4;
  EXPECT_EQ(client::describeTensor({"r", makeTensor<float>(DType::kF32, {4, 10}, ramp)}, 5),
            "r FP32 [4,10] = [0, 0.25, 0.5, 0.75, 1, ... (40 values)]");
  EXPECT_EQ(client::describeTensor({"r", makeTensor<float>(DType::kF32, {2}, {1, 2})}, 0),
            "r FP32 [2] = [... (2 values)]");
  EXPECT_EQ(client::describeTensor({"b", makeTensor<uint8_t>(DType::kBool, {2}, {1, 0})}, 16),
            "b BOOL [2] = [true, false]");
  EXPECT_EQ(
      client::describeTensor(
          {"h", makeTensor<uint16_t>(DType::kF16, {4}, {0x3c00, 0xc000, 0x0001, 0x7c00})}, 16),
      "h FP16 [4] = [1, -2, 5.9604645e-08, inf]");
  EXPECT_EQ(client::describeTensor({"bf", makeTensor<uint16_t>(DType::kBF16, {1}, {0x3f80})}, 16),
            "bf BF16 [1] = [1]");
  EXPECT_EQ(client::describeTensor({"e", makeTensor<int8_t>(DType::kI8, {0}, {})}, 16),
            "e INT8 [0] = []");
  const std::vector<std::string_view> text = {"hi", "a\"b", "\xff", "z"};
  const auto bytes =
      protocol::NamedTensor::ofBytes("t", protocol::BytesTensor::fromElements({4}, text));
  EXPECT_EQ(client::describeTensor(bytes, 3),
            "t BYTES [4] = [\"hi\", \"a\\\"b\", \"\xef\xbf\xbd\", ... (4 values)]");
}

} // namespace
} // namespace rs::server
