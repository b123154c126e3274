//===- test/e2e/golden_test.cc - Every fixture through the server vs XLA ----===//
//
// Every fixture model at every compiled batch size with a golden file, sent through the
// running server over gRPC and over HTTP (binary extension, and JSON for the small
// models): outputs match golden/<model>/b{N}.safetensors (XLA:CPU) within the tolerance
// below, integer outputs exactly, and every protocol returns the same bytes.
//
// Tolerance: |ours - xla| <= kAbsTol + kRelTol * |xla| per element. XLA:CPU and the
// built-in executor sum in different orders and use different transcendental
// approximations, so f32 results may differ in the last bits (fixtures/README.md). The
// largest errors seen are printed and recorded in docs/accuracy.md.
//
//===----------------------------------------------------------------------===//
#include "harness.h"

#include "bundle/manifest.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

namespace rs::e2e {
namespace {

constexpr double kAbsTol = 1e-5;
constexpr double kRelTol = 1e-4;

struct GoldenCase {
  std::string model;
  int64_t batch;
  bool json; // also send as KServe JSON (small models only)
};

const std::vector<GoldenCase> kCases = {
    {"digits_cnn", 1, true},    {"digits_cnn", 4, true},   {"digits_cnn", 8, true},
    {"iris_mlp", 1, true},      {"iris_mlp", 8, true},     {"tiny_bert", 1, true},
    {"tiny_bert", 4, false},    {"resnet_mini", 1, false}, {"resnet_mini", 8, false},
    {"op_zoo", 1, true},        {"tf32_algo", 1, true},    {"tf32_algo", 4, true},
    {"bert_bench", 1, false},   {"bert_bench", 8, false},  {"resnet_bench", 1, false},
    {"resnet_bench", 8, false},
};

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {
protected:
  static void SetUpTestSuite() {
    auto s = TestServer::start(kBundles);
    ASSERT_TRUE(s.isOk()) << s.status().toString();
    server_ = std::move(s).value().release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static TestServer *server_;
};
TestServer *GoldenTest::server_ = nullptr;

/// Element i of a numeric tensor as double.
double valueAt(const Tensor &t, int64_t i) {
  switch (t.dtype()) {
  case DType::kF32: return t.dataAs<float>()[i];
  case DType::kF64: return t.dataAs<double>()[i];
  case DType::kI32: return t.dataAs<int32_t>()[i];
  case DType::kI64: return static_cast<double>(t.dataAs<int64_t>()[i]);
  case DType::kBool: return t.data()[i];
  default: return NAN;
  }
}

TEST_P(GoldenTest, MatchesXlaCpuOverEveryProtocol) {
  const GoldenCase &c = GetParam();
  auto golden = openGolden(c.model, "b" + std::to_string(c.batch) + ".safetensors");
  ASSERT_TRUE(golden.isOk()) << golden.status().toString();
  auto manifest = bundle::loadManifest(kBundles + "/" + c.model + "/manifest.yaml", c.model);
  ASSERT_TRUE(manifest.isOk()) << manifest.status().toString();

  protocol::InferRequest request;
  request.model_name = c.model;
  request.id = c.model + "-b" + std::to_string(c.batch);
  for (const auto &spec : manifest->executable_inputs) {
    auto t = golden->tensor(spec.name);
    ASSERT_TRUE(t.isOk()) << t.status().toString();
    // Golden files store scalars as [1]; the wire shape is the manifest's.
    request.inputs.push_back({spec.name, t->reshaped(spec.shapeForBatch(c.batch))});
  }

  auto grpc_reply = server_->inferGrpc(request);
  ASSERT_TRUE(grpc_reply.isOk()) << grpc_reply.status().toString();
  EXPECT_EQ(grpc_reply->id, request.id);
  ASSERT_EQ(grpc_reply->outputs.size(), manifest->executable_outputs.size());

  double max_abs = 0, max_rel = 0;
  for (size_t o = 0; o < manifest->executable_outputs.size(); ++o) {
    const auto &spec = manifest->executable_outputs[o];
    const Tensor &ours = grpc_reply->outputs[o].tensor;
    EXPECT_EQ(grpc_reply->outputs[o].name, spec.name);
    auto want = golden->tensor(spec.name);
    ASSERT_TRUE(want.isOk()) << want.status().toString();
    ASSERT_EQ(ours.dtype(), want->dtype()) << spec.name;
    ASSERT_EQ(ours.numElements(), want->numElements()) << spec.name;
    EXPECT_EQ(ours.shape(), spec.shapeForBatch(c.batch)) << spec.name;
    if (!isFloat(ours.dtype())) {
      EXPECT_EQ(bytesOf(ours), bytesOf(*want)) << spec.name << " must match exactly";
      continue;
    }
    for (int64_t i = 0; i < ours.numElements(); ++i) {
      const double a = valueAt(ours, i), b = valueAt(*want, i);
      const double err = std::fabs(a - b);
      max_abs = std::max(max_abs, err);
      if (b != 0)
        max_rel = std::max(max_rel, err / std::fabs(b));
      ASSERT_LE(err, kAbsTol + kRelTol * std::fabs(b))
          << spec.name << "[" << i << "]: ours " << a << " xla " << b;
    }
  }
  std::printf("accuracy %-12s b%-2lld max_abs_err %.3g max_rel_err %.3g\n", c.model.c_str(),
              static_cast<long long>(c.batch), max_abs, max_rel);

  // HTTP with the binary extension, and JSON for small models: the same bytes as gRPC.
  std::vector<bool> modes{true};
  if (c.json)
    modes.push_back(false);
  for (bool binary : modes) {
    auto http_reply = server_->inferHttp(request, binary);
    ASSERT_TRUE(http_reply.isOk())
        << (binary ? "binary: " : "json: ") << http_reply.status().toString();
    ASSERT_EQ(http_reply->outputs.size(), grpc_reply->outputs.size());
    EXPECT_EQ(http_reply->id, request.id);
    for (size_t o = 0; o < grpc_reply->outputs.size(); ++o) {
      EXPECT_EQ(http_reply->outputs[o].tensor.shape(), grpc_reply->outputs[o].tensor.shape());
      EXPECT_EQ(bytesOf(http_reply->outputs[o].tensor), bytesOf(grpc_reply->outputs[o].tensor))
          << (binary ? "binary" : "json") << " output " << grpc_reply->outputs[o].name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GoldenTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<GoldenCase> &info) {
                           return info.param.model + "_b" + std::to_string(info.param.batch);
                         });

} // namespace
} // namespace rs::e2e
