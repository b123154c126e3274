//===- test/e2e_repro/regulated_test.cc - Same request, same bytes ---------===//
//
// Issue 5 acceptance: under `runtime.profile: regulated` (numerics f32), a fixed request
// to digits_cnn and to tiny_bert returns bit-identical bytes when sent alone, while 16
// other clients send different requests to the same model, after a server restart (a
// second Worker on the same bundles, loading from the executable cache), and under
// `batch_sizes: largest` whatever its row count (1 row, a few rows, more rows than the
// largest compiled size, which is split). The 16 clients' requests also get, each, the
// bytes they get alone.
//
//===----------------------------------------------------------------------===//
#include "repro_util.h"

#include <atomic>
#include <map>
#include <thread>

namespace rs::repro {
namespace {

constexpr int kClients = 16;

protocol::InferRequest digitsRequest(const std::vector<int64_t> &rows) {
  static const Tensor images = golden("digits_cnn", "testset.safetensors", "image");
  protocol::InferRequest r;
  r.model_name = "digits_cnn";
  r.inputs.push_back({"image", pickRows(images, rows)});
  return r;
}

/// tiny_bert rows: golden b4 rows, with token ids rotated by `shift` positions so that
/// every shift is a different input.
protocol::InferRequest bertRequest(const std::vector<int64_t> &rows, int shift) {
  static const Tensor ids = golden("tiny_bert", "b4.safetensors", "input_ids");
  static const Tensor mask = golden("tiny_bert", "b4.safetensors", "attention_mask");
  Tensor picked = pickRows(ids, rows);
  const int64_t seq = picked.shape()[1];
  Tensor rotated = Tensor::zeros(DType::kI32, picked.shape());
  for (int64_t r = 0; r < picked.shape()[0]; ++r)
    for (int64_t c = 0; c < seq; ++c)
      rotated.mutableDataAs<int32_t>()[r * seq + c] =
          picked.dataAs<int32_t>()[r * seq + (c + shift) % seq];
  protocol::InferRequest req;
  req.model_name = "tiny_bert";
  req.inputs.push_back({"input_ids", rotated});
  req.inputs.push_back({"attention_mask", pickRows(mask, rows)});
  return req;
}

/// The fixed requests: several row counts per model, one above the largest size.
std::vector<protocol::InferRequest> fixedRequests() {
  return {
      digitsRequest({7}),
      digitsRequest({11, 12, 13}),
      digitsRequest({20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37,
                     38}), // 19 rows > 8: pieces 8, 8, 3 (padded to 8)
      bertRequest({1}, 0),
      bertRequest({0, 2, 3}, 0),
      bertRequest({0, 1, 2, 3, 3, 2}, 1), // 6 rows > 4: pieces 4, 2 (padded to 4)
  };
}

/// Client c's k-th request (k in [0, 4)): other rows and row counts than the fixed ones.
protocol::InferRequest trafficRequest(const std::string &model, int c, int k) {
  const int64_t rows = 1 + (c + k) % 5;
  std::vector<int64_t> picked;
  for (int64_t i = 0; i < rows; ++i)
    picked.push_back(model == "digits_cnn" ? 100 + (c * 11 + k * 3 + i) % 190 : (c + k + i) % 4);
  return model == "digits_cnn" ? digitsRequest(picked) : bertRequest(picked, 2 + (c + k) % 13);
}

std::string mustInfer(server::Worker &w, const protocol::InferRequest &r) {
  auto reply = infer(w, r);
  EXPECT_TRUE(reply.isOk()) << reply.status().toString();
  return reply.isOk() ? replyBytes(*reply) : "";
}

TEST(RegulatedProfile, FixedRequestsBitIdenticalAloneUnderTrafficAndAfterRestart) {
  TempRepo repo({"digits_cnn", "tiny_bert"});
  auto cfg = workerConfig(repo.repo(), "  runtime: {profile: regulated, numerics: f32}\n");
  ASSERT_TRUE(cfg.isOk()) << cfg.status().toString();
  ASSERT_EQ(cfg->runtime.batch_sizes, config::BatchSizes::kLargest);
  ASSERT_FALSE(cfg->scheduler.coalescing);

  LogCapture log;
  auto first = startWorker(*cfg);
  ASSERT_NE(first, nullptr);
  // Only the largest program of each model is loaded.
  EXPECT_EQ(first->repository().state("digits_cnn")->model->batch_sizes, (std::vector<int64_t>{8}));
  EXPECT_EQ(first->repository().state("tiny_bert")->model->batch_sizes, (std::vector<int64_t>{4}));
  EXPECT_EQ(log.count("model loaded name=digits_cnn "), 1u);
  EXPECT_EQ(log.count("batch_sizes=[8] "), 1u) << log.text();
  EXPECT_EQ(log.count("batch_sizes=[4] "), 1u) << log.text();
  EXPECT_EQ(log.count("executable cache: miss"), 2u);

  const std::vector<protocol::InferRequest> fixed = fixedRequests();
  std::vector<std::string> want;
  for (const auto &r : fixed)
    want.push_back(mustInfer(*first, r));
  for (const std::string &w : want)
    ASSERT_FALSE(w.empty());

  // Alone, again and again.
  for (int rep = 0; rep < 5; ++rep)
    for (size_t i = 0; i < fixed.size(); ++i)
      ASSERT_EQ(mustInfer(*first, fixed[i]), want[i]) << "alone, request " << i;

  // What each client's requests give alone.
  std::map<std::pair<std::string, int>, std::string> traffic_alone;
  for (const std::string model : {"digits_cnn", "tiny_bert"})
    for (int c = 0; c < kClients; ++c)
      for (int k = 0; k < 4; ++k)
        traffic_alone[{model, c * 4 + k}] = mustInfer(*first, trafficRequest(model, c, k));

  // 16 clients per model send their own requests while the fixed ones are repeated.
  for (const std::string model : {"digits_cnn", "tiny_bert"}) {
    SCOPED_TRACE(model);
    std::atomic<bool> stop{false};
    std::atomic<int64_t> sent{0}, wrong{0}, failed{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < kClients; ++c) {
      clients.emplace_back([&, c] {
        for (int k = 0; !stop || k < 4; ++k) {
          auto reply = infer(*first, trafficRequest(model, c, k % 4));
          ++sent;
          if (!reply.isOk())
            ++failed;
          else if (replyBytes(*reply) != traffic_alone[{model, c * 4 + k % 4}])
            ++wrong;
        }
      });
    }
    for (int rep = 0; rep < 10; ++rep)
      for (size_t i = 0; i < fixed.size(); ++i)
        if (fixed[i].model_name == model) {
          EXPECT_EQ(mustInfer(*first, fixed[i]), want[i]) << "under traffic, request " << i;
        }
    stop = true;
    for (auto &t : clients)
      t.join();
    EXPECT_GE(sent.load(), kClients * 4);
    EXPECT_EQ(failed.load(), 0);
    EXPECT_EQ(wrong.load(), 0);
  }

  // Restart: a second worker on the same bundles loads every program from the cache and
  // answers with the same bytes.
  first->shutdown();
  first.reset();
  LogCapture restart_log;
  auto second = startWorker(*cfg);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(restart_log.count("executable cache: hit"), 2u) << restart_log.text();
  EXPECT_EQ(restart_log.count("executable cache: miss"), 0u);
  EXPECT_EQ(second->repository().executableCacheMisses(), 0);
  for (size_t i = 0; i < fixed.size(); ++i)
    EXPECT_EQ(mustInfer(*second, fixed[i]), want[i]) << "after restart, request " << i;

  // A restart with the cache off compiles afresh: still the same bytes.
  config::WorkerConfig no_cache = *cfg;
  no_cache.runtime.executable_cache = false;
  second->shutdown();
  second.reset();
  auto third = startWorker(no_cache);
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(third->repository().executableCacheHits(), 0);
  for (size_t i = 0; i < fixed.size(); ++i)
    EXPECT_EQ(mustInfer(*third, fixed[i]), want[i]) << "fresh compile, request " << i;
}

TEST(RegulatedProfile, LargestRunsOnePaddedProgramForEveryRowCount) {
  // Under `largest`, 1..8 rows all run the batch-8 program: a row's bytes are the same
  // whether it is sent alone or with up to 7 others of its own request.
  TempRepo repo({"digits_cnn"});
  auto cfg = workerConfig(repo.repo(), "  runtime: {profile: regulated, numerics: f32}\n");
  ASSERT_TRUE(cfg.isOk()) << cfg.status().toString();
  auto w = startWorker(*cfg);
  ASSERT_NE(w, nullptr);
  std::vector<std::string> alone;
  for (int64_t row = 40; row < 48; ++row) {
    auto r = infer(*w, digitsRequest({row}));
    ASSERT_TRUE(r.isOk());
    alone.push_back(rowBytes(r->outputs[0].tensor, 0) + rowBytes(r->outputs[1].tensor, 0));
  }
  for (int64_t n = 2; n <= 8; ++n) {
    std::vector<int64_t> rows;
    for (int64_t i = 0; i < n; ++i)
      rows.push_back(40 + i);
    auto r = infer(*w, digitsRequest(rows));
    ASSERT_TRUE(r.isOk());
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(rowBytes(r->outputs[0].tensor, i) + rowBytes(r->outputs[1].tensor, i),
                alone[static_cast<size_t>(i)])
          << n << " rows, row " << i;
  }
}

} // namespace
} // namespace rs::repro
