//===- test/e2e/determinism_test.cc - Same request, same bytes --------------===//
//
// The same request sent 100 times returns bit-identical bytes: alone, and interleaved
// with concurrent traffic from other clients to the same model, with coalescing off (so
// no dispatch mixes requests). A request larger than the largest compiled size is split
// the same way every time and also returns the same bytes.
//
//===----------------------------------------------------------------------===//
#include "harness.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace rs::e2e {
namespace {

protocol::InferRequest digitsRequest(int64_t first, int64_t rows) {
  auto testset = openGolden("digits_cnn", "testset.safetensors");
  protocol::InferRequest request;
  request.model_name = "digits_cnn";
  request.inputs.push_back({"image", rowsOf(*testset->tensor("image"), first, rows)});
  return request;
}

std::string replyBytes(const protocol::InferResponse &r) {
  std::string all;
  for (const auto &o : r.outputs)
    all += o.name + ":" + bytesOf(o.tensor);
  return all;
}

TEST(Determinism, SameRequestSameBytesAloneAndUnderTraffic) {
  auto server = TestServer::start(
      kBundles, "  models_include: [digits_cnn]\n  scheduler: {coalescing: false}\n");
  ASSERT_TRUE(server.isOk()) << server.status().toString();
  const protocol::InferRequest probe = digitsRequest(7, 1);
  auto first = (*server)->inferGrpc(probe);
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  const std::string want = replyBytes(*first);

  for (int i = 0; i < 100; ++i) {
    auto r = (*server)->inferGrpc(probe);
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    ASSERT_EQ(replyBytes(*r), want) << "alone, repetition " << i;
  }

  // Interleaved with 4 clients sending other images (1 to 3 rows) to the same model.
  std::atomic<bool> stop{false};
  std::atomic<int64_t> traffic{0}, traffic_errors{0};
  std::vector<std::thread> others;
  for (int c = 0; c < 4; ++c) {
    others.emplace_back([&, c] {
      int64_t k = 0;
      while (!stop) {
        auto r = (*server)->inferGrpc(digitsRequest((c * 50 + k) % 290, 1 + k % 3));
        ++traffic;
        traffic_errors += r.isOk() ? 0 : 1;
        ++k;
      }
    });
  }
  for (int i = 0; i < 100; ++i) {
    auto r = (*server)->inferGrpc(probe);
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    ASSERT_EQ(replyBytes(*r), want) << "under traffic, repetition " << i;
  }
  stop = true;
  for (auto &t : others)
    t.join();
  EXPECT_GT(traffic.load(), 0);
  EXPECT_EQ(traffic_errors.load(), 0);
}

TEST(Determinism, SplitRequestsAreStable) {
  auto server = TestServer::start(kBundles, "  models_include: [digits_cnn]\n");
  ASSERT_TRUE(server.isOk()) << server.status().toString();
  // 19 rows > largest compiled size 8: pieces 8, 8, 3 (padded to 4).
  const protocol::InferRequest big = digitsRequest(0, 19);
  auto first = (*server)->inferGrpc(big);
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  ASSERT_EQ(first->outputs[0].tensor.shape(), (Shape{19, 10}));
  for (int i = 0; i < 10; ++i) {
    auto r = (*server)->inferGrpc(big);
    ASSERT_TRUE(r.isOk());
    ASSERT_EQ(replyBytes(*r), replyBytes(*first));
  }
  // Rows 8..15 of the split request ran as one full batch-8 piece: the same bytes as
  // sending those 8 rows on their own.
  auto piece = (*server)->inferGrpc(digitsRequest(8, 8));
  ASSERT_TRUE(piece.isOk());
  EXPECT_EQ(bytesOf(piece->outputs[0].tensor), bytesOf(rowsOf(first->outputs[0].tensor, 8, 8)));
}

} // namespace
} // namespace rs::e2e
