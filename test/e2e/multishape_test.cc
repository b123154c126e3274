//===- test/e2e/multishape_test.cc - A multi-shape bundle served end to end -===//
//
// The multi-shape fixture text_encoder_ms (test/bundle/multishape_fixture.h: sequence
// lengths 8 and 16, batch sizes 1 and 4) served by a real worker on the CPU, over gRPC and
// HTTP (binary extension and JSON):
// - each variant is routed to its programs and answers within tolerance of the JAX goldens
//   (multishape::kRelTol 1e-5 relative plus kAbsTol 1e-6 absolute per element), with the
//   same bytes over every protocol;
// - concurrent requests of both variants (coalesced only within a variant) give the bytes
//   each gives alone;
// - ModelMetadata reports -1 on the batch and sequence axes over both protocols;
// - a sequence length no variant has (12) is INVALID_ARGUMENT / HTTP 400 naming the input,
//   its shape and the variants served, and the worker keeps serving;
// - the evidence document lists every variant's program.
// The same checks run on the portable-artifact copy (text_encoder_ms_portable: the programs
// as jax.export wrote them, VHLO bytecode).
//
// The bundle is copied to a temporary repository, so the executable cache writes there and
// never into test/data.
//
//===----------------------------------------------------------------------===//
#include "harness.h"

#include "../bundle/multishape_fixture.h"
#include "bundle/manifest.h"
#include "common/temp_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <thread>

namespace rs::e2e {
namespace {

namespace fs = std::filesystem;
using multishape::kMultiShapeBatchSizes;
using multishape::kSeqLengths;

/// A temporary model repository holding a copy of one fixture bundle, removed at the end.
class TempRepo {
public:
  explicit TempRepo(const std::string &bundle_dir) : root_("rs_multishape_") {
    multishape::copyBundleDir(bundle_dir, root_.path() / fs::path(bundle_dir).filename());
  }
  std::string root() const { return root_.str(); }

private:
  rs::testing::TempDir root_;
};

/// The request of golden file (variant, batch) for `model`.
protocol::InferRequest goldenRequest(const std::string &model, const bundle::SafetensorsFile &g,
                                     const std::string &id) {
  protocol::InferRequest r;
  r.model_name = model;
  r.id = id;
  for (const char *name : {"input_ids", "attention_mask"})
    r.inputs.push_back({name, *g.tensor(name)});
  return r;
}

/// The served model of one fixture copy: the text bundle, or the portable one.
class MultiShapeServing : public ::testing::TestWithParam<bool> {
protected:
  void SetUp() override {
    portable_ = GetParam();
    model_ = std::string(multishape::kMultiShapeModel) + (portable_ ? "_portable" : "");
    repo_ = std::make_unique<TempRepo>(multishape::multiShapeBundle(portable_));
    auto s = TestServer::start(repo_->root());
    ASSERT_TRUE(s.isOk()) << s.status().toString();
    server_ = std::move(s).value();
    auto ready = server_->worker().service().modelReady(model_);
    ASSERT_TRUE(ready.isOk() && ready->ready) << (ready.isOk() ? ready->reason : "unknown");
  }

  bool portable_ = false;
  std::string model_;
  std::unique_ptr<TempRepo> repo_;
  std::unique_ptr<TestServer> server_;
};

TEST_P(MultiShapeServing, EachVariantMatchesJaxOverEveryProtocol) {
  for (size_t v = 0; v < 2; ++v)
    for (int64_t batch : kMultiShapeBatchSizes) {
      const std::string id = "v" + std::to_string(v) + ".b" + std::to_string(batch);
      SCOPED_TRACE(id);
      auto g = bundle::SafetensorsFile::open(multishape::multiShapeGolden(v, batch));
      ASSERT_TRUE(g.isOk()) << g.status().toString();
      const protocol::InferRequest request = goldenRequest(model_, *g, id);
      auto grpc_reply = server_->inferGrpc(request);
      ASSERT_TRUE(grpc_reply.isOk()) << grpc_reply.status().toString();
      EXPECT_EQ(grpc_reply->id, id);
      ASSERT_EQ(grpc_reply->outputs.size(), 3u);
      EXPECT_EQ(grpc_reply->outputs[0].tensor.shape(), (Shape{batch, kSeqLengths[v], 16}));
      double max_abs = 0, max_rel = 0;
      for (const protocol::NamedTensor &out : grpc_reply->outputs) {
        multishape::GoldenDiff diff = multishape::compareToGolden(out.tensor, *g->tensor(out.name));
        EXPECT_EQ(diff.first_bad, "") << out.name;
        max_abs = std::max(max_abs, diff.max_abs);
        max_rel = std::max(max_rel, diff.max_rel);
      }
      std::printf("accuracy %s %s max_abs_err %.3g max_rel_err %.3g\n", model_.c_str(), id.c_str(),
                  max_abs, max_rel);
      for (bool binary : {true, false}) {
        auto http_reply = server_->inferHttp(request, binary);
        ASSERT_TRUE(http_reply.isOk())
            << (binary ? "binary: " : "json: ") << http_reply.status().toString();
        ASSERT_EQ(http_reply->outputs.size(), 3u);
        for (size_t o = 0; o < 3; ++o)
          EXPECT_EQ(bytesOf(http_reply->outputs[o].tensor), bytesOf(grpc_reply->outputs[o].tensor))
              << (binary ? "binary " : "json ") << grpc_reply->outputs[o].name;
      }
    }
}

TEST_P(MultiShapeServing, ConcurrentRequestsOfBothVariantsGetTheirOwnBytes) {
  std::vector<protocol::InferRequest> requests;
  std::vector<std::string> alone; // each request's logits served on its own
  for (size_t v = 0; v < 2; ++v) {
    auto g = bundle::SafetensorsFile::open(multishape::multiShapeGolden(v, 1));
    ASSERT_TRUE(g.isOk()) << g.status().toString();
    requests.push_back(goldenRequest(model_, *g, "v" + std::to_string(v)));
    auto reply = server_->inferGrpc(requests.back());
    ASSERT_TRUE(reply.isOk()) << reply.status().toString();
    alone.push_back(bytesOf(reply->outputs[2].tensor));
  }
  constexpr int kClients = 8;
  std::vector<std::future<Result<protocol::InferResponse>>> replies;
  for (int c = 0; c < kClients; ++c)
    replies.push_back(std::async(std::launch::async, [&, c] {
      return server_->inferGrpc(requests[static_cast<size_t>(c % 2)]);
    }));
  for (int c = 0; c < kClients; ++c) {
    auto reply = replies[static_cast<size_t>(c)].get();
    ASSERT_TRUE(reply.isOk()) << reply.status().toString();
    EXPECT_EQ(bytesOf(reply->outputs[2].tensor), alone[static_cast<size_t>(c % 2)])
        << "client " << c;
  }
}

TEST_P(MultiShapeServing, MetadataReportsVariableAxesAsMinusOne) {
  inference::ModelMetadataRequest req;
  req.set_name(model_);
  inference::ModelMetadataResponse meta;
  grpc::ClientContext ctx;
  grpc::Status st = server_->stub().ModelMetadata(&ctx, req, &meta);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(meta.inputs_size(), 2);
  EXPECT_EQ(meta.inputs(0).name(), "input_ids");
  EXPECT_EQ(std::vector<int64_t>(meta.inputs(0).shape().begin(), meta.inputs(0).shape().end()),
            (std::vector<int64_t>{-1, -1}));
  ASSERT_EQ(meta.outputs_size(), 3);
  EXPECT_EQ(std::vector<int64_t>(meta.outputs(0).shape().begin(), meta.outputs(0).shape().end()),
            (std::vector<int64_t>{-1, -1, 16}));

  auto http = server_->httpClient();
  auto res = http->Get("/v2/models/" + model_);
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  ASSERT_EQ(res->status, 200) << res->body;
  const nlohmann::json doc = nlohmann::json::parse(res->body);
  EXPECT_EQ(doc["inputs"][1]["name"], "attention_mask");
  EXPECT_EQ(doc["inputs"][1]["shape"], nlohmann::json::parse("[-1, -1]"));
  EXPECT_EQ(doc["outputs"][0]["shape"], nlohmann::json::parse("[-1, -1, 16]"));
  EXPECT_EQ(doc["outputs"][2]["shape"], nlohmann::json::parse("[-1, 4]"));
}

TEST_P(MultiShapeServing, ShapeOfNoVariantIsInvalidArgument) {
  protocol::InferRequest bad;
  bad.model_name = model_;
  bad.id = "s12";
  bad.inputs = {{"input_ids", Tensor::zeros(DType::kI32, {1, 12})},
                {"attention_mask", Tensor::zeros(DType::kI32, {1, 12})}};
  const std::string reason = "input 'input_ids': shape [1,12] matches no shape variant of the "
                             "model; variants served: [-1,8] {s=8}, [-1,16] {s=16}";
  auto grpc_reply = server_->inferGrpc(bad);
  ASSERT_FALSE(grpc_reply.isOk());
  EXPECT_EQ(grpc_reply.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(grpc_reply.status().message(), "model '" + model_ + "', request 's12': " + reason);
  for (bool binary : {true, false}) {
    auto http_reply = server_->inferHttp(bad, binary);
    ASSERT_FALSE(http_reply.isOk());
    EXPECT_EQ(http_reply.status().code(), StatusCode::kInvalidArgument); // HTTP 400
    EXPECT_NE(http_reply.status().message().find(reason), std::string::npos)
        << http_reply.status().message();
  }
  // The worker keeps serving.
  auto g = bundle::SafetensorsFile::open(multishape::multiShapeGolden(1, 1));
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  EXPECT_TRUE(server_->inferGrpc(goldenRequest(model_, *g, "after")).isOk());
}

TEST_P(MultiShapeServing, EvidenceListsEveryVariantsPrograms) {
  auto http = server_->httpClient();
  auto res = http->Get("/v2/evidence");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  ASSERT_EQ(res->status, 200) << res->body;
  const nlohmann::json doc = nlohmann::json::parse(res->body);
  const nlohmann::json &model = doc["models"][model_];
  EXPECT_EQ(model["state"], "ready");
  EXPECT_EQ(model["input_shapes"], nlohmann::json::parse(R"([{"s": 8}, {"s": 16}])"));
  EXPECT_EQ(model["batch_sizes"], nlohmann::json::parse("[1, 4]"));
  std::vector<std::string> keys;
  for (auto it = model["programs"].begin(); it != model["programs"].end(); ++it) {
    keys.push_back(it.key());
    EXPECT_EQ(it.value()["file"], "model." + it.key() + ".mlir");
    EXPECT_EQ(it.value()["sha256"].get<std::string>().size(), 64u) << it.key();
    EXPECT_EQ(it.value()["cache_key"].get<std::string>().size(), 64u) << it.key();
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"v0.b1", "v0.b4", "v1.b1", "v1.b4"}));
  const nlohmann::json &cache = doc["instance"]["executable_cache"]["programs"][model_];
  EXPECT_EQ(cache.size(), 4u);
  EXPECT_EQ(cache["v1.b4"], "miss: no entry");
}

INSTANTIATE_TEST_SUITE_P(Bundles, MultiShapeServing, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return std::string(info.param ? "Portable" : "Text");
                         });

} // namespace
} // namespace rs::e2e
