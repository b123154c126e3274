//===- test/e2e/testset_test.cc - Real digits, 8 concurrent clients ---------===//
//
// The 297 held-out digit images of golden/digits_cnn/testset.safetensors, one request
// each, from 8 concurrent clients, over gRPC and over HTTP: the predicted class equals
// the argmax of the XLA:CPU logits stored in the file for every image, and the accuracy
// against `label` is the file's 0.9798.
//
//===----------------------------------------------------------------------===//
#include "harness.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <thread>

namespace rs::e2e {
namespace {

int64_t argmax(const float *v, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (v[i] > v[best])
      best = i;
  return best;
}

class TestsetTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TestsetTest, EightClientsReproduceXlaClassesAndAccuracy) {
  const bool use_grpc = GetParam() == "grpc";
  auto server = TestServer::start(kBundles, "  models_include: [digits_cnn]\n");
  ASSERT_TRUE(server.isOk()) << server.status().toString();
  auto testset = openGolden("digits_cnn", "testset.safetensors");
  ASSERT_TRUE(testset.isOk()) << testset.status().toString();
  const Tensor images = *testset->tensor("image");
  const Tensor logits = *testset->tensor("logits");
  const Tensor labels = *testset->tensor("label");
  const int64_t n = images.shape()[0];
  ASSERT_EQ(n, 297);

  std::vector<int64_t> predicted(static_cast<size_t>(n), -1);
  std::vector<std::string> errors(static_cast<size_t>(n));
  std::atomic<int64_t> next{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&] {
      for (int64_t i = next++; i < n; i = next++) {
        protocol::InferRequest request;
        request.model_name = "digits_cnn";
        request.id = "img-" + std::to_string(i);
        request.inputs.push_back({"image", rowsOf(images, i, 1)});
        request.requested_outputs = {"logits"};
        auto reply =
            use_grpc ? (*server)->inferGrpc(request) : (*server)->inferHttp(request, false);
        if (!reply.isOk()) {
          errors[static_cast<size_t>(i)] = reply.status().toString();
          continue;
        }
        if (reply->id != request.id || reply->outputs.size() != 1 ||
            reply->outputs[0].tensor.shape() != Shape{1, 10}) {
          errors[static_cast<size_t>(i)] = "malformed reply";
          continue;
        }
        predicted[static_cast<size_t>(i)] = argmax(reply->outputs[0].tensor.dataAs<float>(), 10);
      }
    });
  }
  for (auto &t : clients)
    t.join();

  int64_t correct = 0;
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(errors[static_cast<size_t>(i)], "") << "image " << i;
    const int64_t xla = argmax(logits.dataAs<float>() + i * 10, 10);
    EXPECT_EQ(predicted[static_cast<size_t>(i)], xla) << "image " << i;
    correct += predicted[static_cast<size_t>(i)] == labels.dataAs<int32_t>()[i];
  }
  char accuracy[16];
  std::snprintf(accuracy, sizeof accuracy, "%.4f", static_cast<double>(correct) / n);
  std::printf("digits_cnn testset over %s: %lld/%lld correct, accuracy %s\n", GetParam().c_str(),
              static_cast<long long>(correct), static_cast<long long>(n), accuracy);
  EXPECT_EQ(std::string(accuracy), testset->metadata().at("accuracy"));
  EXPECT_EQ(std::string(accuracy), "0.9798");
}

INSTANTIATE_TEST_SUITE_P(Protocols, TestsetTest, ::testing::Values("grpc", "http"));

} // namespace
} // namespace rs::e2e
