//===- test/e2e/polymorphic_test.cc - A shape-polymorphic model.mlir served end to end -===//
//
// The polymorphic fixtures (test/bundle/polymorphic_fixture.h: an MLP with a symbolic batch
// axis, a transformer encoder layer with symbolic batch and sequence axes) served by a real
// worker on the CPU beside their per-size twins (same manifest and weights, one exported
// file per program):
// - at every compiled batch size and shape variant the refined program answers with the
//   bytes of the per-size program, over gRPC and HTTP (binary extension), and within
//   multishape::kRelTol/kAbsTol of JAX's CPU output;
// - a partial batch (padded to the next compiled size) also gives the per-size bytes;
// - ModelMetadata reports -1 on the batch (and sequence) axis;
// - the evidence lists, per program, model.mlir with the file's SHA-256 and the refined
//   module's SHA-256 (distinct per program), and the cache key; the per-size twin has no
//   refined_sha256;
// - a request whose shape fits none of the refined signatures is INVALID_ARGUMENT / HTTP
//   400 naming the input, its shape and what is served, and the worker keeps serving;
// - under `runtime.profile: regulated` (largest batch size only, numerics f32) the two
//   bundles still give the same bytes, for a full and a one-row batch.
//
//===----------------------------------------------------------------------===//
#include "harness.h"

#include "../bundle/multishape_fixture.h"
#include "../bundle/polymorphic_fixture.h"
#include "common/temp_dir.h"
#include "support/digest.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>

namespace rs::e2e {
namespace {

namespace fs = std::filesystem;
using polymorphic::FixtureModel;
using polymorphic::kEncoder;
using polymorphic::kMlp;

/// One worker serving copies of both fixtures' polymorphic and per-size bundles.
class PolymorphicServing : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    root_ = new rs::testing::TempDir("rs_poly_e2e_");
    for (const FixtureModel *m : {&kMlp, &kEncoder})
      for (const std::string &dir : {m->polyDir(), m->sizedDir()})
        multishape::copyBundleDir(dir, root_->path() / fs::path(dir).filename());
    auto s = TestServer::start(root_->str());
    ASSERT_TRUE(s.isOk()) << s.status().toString();
    server_ = std::move(s).value().release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    delete root_;
    root_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(server_, nullptr);
    for (const FixtureModel *m : {&kMlp, &kEncoder})
      for (const std::string &name : {m->polyName(), m->sizedName()}) {
        auto ready = server_->worker().service().modelReady(name);
        ASSERT_TRUE(ready.isOk() && ready->ready)
            << name << ": " << (ready.isOk() ? ready->reason : ready.status().toString());
      }
  }

  static protocol::InferRequest request(const std::string &model, const Tensor &x,
                                        const std::string &id) {
    protocol::InferRequest r;
    r.model_name = model;
    r.id = id;
    r.inputs.push_back({"x", x});
    return r;
  }

  /// Serves every program's golden input on both bundles of `m` and compares.
  void servesLikePerSizeFiles(const FixtureModel &m) {
    for (size_t v = 0; v < m.variants(); ++v)
      for (int64_t n : m.batch_sizes) {
        const std::string id = m.programStem(v, n);
        SCOPED_TRACE(m.stem + " " + id);
        auto g = bundle::SafetensorsFile::open(m.golden(v, n));
        ASSERT_TRUE(g.isOk()) << g.status().toString();
        const Tensor x = *g->tensor("x");
        auto poly = server_->inferGrpc(request(m.polyName(), x, id));
        auto sized = server_->inferGrpc(request(m.sizedName(), x, id));
        ASSERT_TRUE(poly.isOk()) << poly.status().toString();
        ASSERT_TRUE(sized.isOk()) << sized.status().toString();
        ASSERT_EQ(poly->outputs.size(), 1u);
        EXPECT_EQ(poly->outputs[0].tensor.shape(), g->tensor("y")->shape());
        EXPECT_EQ(bytesOf(poly->outputs[0].tensor), bytesOf(sized->outputs[0].tensor));
        multishape::GoldenDiff diff =
            multishape::compareToGolden(poly->outputs[0].tensor, *g->tensor("y"));
        EXPECT_EQ(diff.first_bad, "");
        auto http = server_->inferHttp(request(m.polyName(), x, id), /*binary=*/true);
        ASSERT_TRUE(http.isOk()) << http.status().toString();
        EXPECT_EQ(bytesOf(http->outputs[0].tensor), bytesOf(sized->outputs[0].tensor));
        if (n > 1) { // n - 1 rows run padded in the program of size n
          const Tensor part = rowsOf(x, 0, n - 1);
          auto poly_part = server_->inferGrpc(request(m.polyName(), part, id + "-part"));
          auto sized_part = server_->inferGrpc(request(m.sizedName(), part, id + "-part"));
          ASSERT_TRUE(poly_part.isOk()) << poly_part.status().toString();
          ASSERT_TRUE(sized_part.isOk()) << sized_part.status().toString();
          EXPECT_EQ(bytesOf(poly_part->outputs[0].tensor), bytesOf(sized_part->outputs[0].tensor));
        }
      }
  }

  static nlohmann::json evidenceModel(const std::string &name) {
    auto http = server_->httpClient();
    auto res = http->Get("/v2/evidence");
    if (!res || res->status != 200)
      return nullptr;
    return nlohmann::json::parse(res->body)["models"][name];
  }

  static rs::testing::TempDir *root_;
  static TestServer *server_;
};

rs::testing::TempDir *PolymorphicServing::root_ = nullptr;
TestServer *PolymorphicServing::server_ = nullptr;

TEST_F(PolymorphicServing, MlpServesThePerSizeBytesAtEveryBatchSize) {
  servesLikePerSizeFiles(kMlp);
}

TEST_F(PolymorphicServing, EncoderServesThePerSizeBytesAtEveryVariantAndBatchSize) {
  servesLikePerSizeFiles(kEncoder);
}

TEST_F(PolymorphicServing, MetadataReportsMinusOneOnTheSymbolicAxes) {
  auto http = server_->httpClient();
  for (const auto &[name, shape] : std::vector<std::pair<std::string, std::string>>{
           {kMlp.polyName(), "[-1, 8]"}, {kEncoder.polyName(), "[-1, -1, 8]"}}) {
    auto res = http->Get("/v2/models/" + name);
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    ASSERT_EQ(res->status, 200) << res->body;
    const nlohmann::json doc = nlohmann::json::parse(res->body);
    EXPECT_EQ(doc["inputs"][0]["shape"], nlohmann::json::parse(shape)) << name;
    EXPECT_EQ(doc["outputs"][0]["shape"],
              nlohmann::json::parse(shape == "[-1, 8]" ? "[-1, 4]" : shape))
        << name;
  }
}

TEST_F(PolymorphicServing, EvidenceListsTheFileAndEachRefinedModulesHash) {
  for (const FixtureModel *m : {&kMlp, &kEncoder}) {
    SCOPED_TRACE(m->stem);
    const nlohmann::json model = evidenceModel(m->polyName());
    ASSERT_TRUE(model.is_object());
    Result<std::string> file_sha = sha256OfFile(m->polyDir() + "/model.mlir");
    ASSERT_TRUE(file_sha.isOk());
    std::set<std::string> refined, cache_keys;
    ASSERT_EQ(model["programs"].size(), m->variants() * m->batch_sizes.size());
    for (size_t v = 0; v < m->variants(); ++v)
      for (int64_t n : m->batch_sizes) {
        const std::string key = m->seq_lengths.empty() ? std::to_string(n) : m->programStem(v, n);
        const nlohmann::json &p = model["programs"][key];
        EXPECT_EQ(p["file"], "model.mlir") << key;
        EXPECT_EQ(p["sha256"], *file_sha) << key;
        EXPECT_EQ(p["refined_sha256"].get<std::string>().size(), 64u) << key;
        refined.insert(p["refined_sha256"].get<std::string>());
        cache_keys.insert(p["cache_key"].get<std::string>());
      }
    EXPECT_EQ(refined.size(), model["programs"].size());
    EXPECT_EQ(cache_keys.size(), model["programs"].size());
    const nlohmann::json sized = evidenceModel(m->sizedName());
    for (auto it = sized["programs"].begin(); it != sized["programs"].end(); ++it)
      EXPECT_FALSE(it.value().contains("refined_sha256")) << it.key();
  }
}

TEST_F(PolymorphicServing, ShapeOutsideTheRefinedSignaturesIsInvalidArgument) {
  struct Case {
    std::string model;
    Tensor x;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {kEncoder.polyName(), Tensor::zeros(DType::kF32, {1, 6, 8}),
       "input 'x': shape [1,6,8] matches no shape variant of the model; variants served: "
       "[-1,4,8] {s=4}, [-1,8,8] {s=8}"},
      {kMlp.polyName(), Tensor::zeros(DType::kF32, {2, 7}),
       "input 'x': shape [2,7] does not match the model's [-1,8]"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.model);
    auto grpc_reply = server_->inferGrpc(request(c.model, c.x, "bad"));
    ASSERT_FALSE(grpc_reply.isOk());
    EXPECT_EQ(grpc_reply.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(grpc_reply.status().message(), "model '" + c.model + "', request 'bad': " + c.reason);
    auto http_reply = server_->inferHttp(request(c.model, c.x, "bad"), /*binary=*/false);
    ASSERT_FALSE(http_reply.isOk());
    EXPECT_EQ(http_reply.status().code(), StatusCode::kInvalidArgument); // HTTP 400
    EXPECT_NE(http_reply.status().message().find(c.reason), std::string::npos)
        << http_reply.status().message();
  }
  auto g = bundle::SafetensorsFile::open(kEncoder.golden(1, 1));
  ASSERT_TRUE(g.isOk());
  EXPECT_TRUE(server_->inferGrpc(request(kEncoder.polyName(), *g->tensor("x"), "after")).isOk());
}

TEST(PolymorphicRegulated, TheRegulatedProfileServesThePerSizeBytes) {
  rs::testing::TempDir root("rs_poly_regulated_");
  for (const FixtureModel *m : {&kMlp, &kEncoder})
    for (const std::string &dir : {m->polyDir(), m->sizedDir()})
      multishape::copyBundleDir(dir, root.path() / fs::path(dir).filename());
  auto server = TestServer::start(root.str(), "  runtime: {profile: regulated, numerics: f32}\n");
  ASSERT_TRUE(server.isOk()) << server.status().toString();
  for (const FixtureModel *m : {&kMlp, &kEncoder}) {
    // The profile loads the largest batch size only (of every variant).
    const nlohmann::json meta = nlohmann::json::parse(
        (*server)->httpClient()->Get("/v2/evidence")->body)["models"][m->polyName()];
    EXPECT_EQ(meta["batch_sizes"], nlohmann::json::array({m->batch_sizes.back()})) << m->stem;
    for (size_t v = 0; v < m->variants(); ++v) {
      const int64_t n = m->batch_sizes.back();
      SCOPED_TRACE(m->stem + " " + m->programStem(v, n));
      auto g = bundle::SafetensorsFile::open(m->golden(v, n));
      ASSERT_TRUE(g.isOk()) << g.status().toString();
      for (int64_t rows : {int64_t{1}, n}) {
        protocol::InferRequest poly, sized;
        poly.model_name = m->polyName();
        sized.model_name = m->sizedName();
        poly.inputs = sized.inputs = {{"x", rowsOf(*g->tensor("x"), 0, rows)}};
        auto a = (*server)->inferGrpc(poly);
        auto b = (*server)->inferGrpc(sized);
        ASSERT_TRUE(a.isOk()) << a.status().toString();
        ASSERT_TRUE(b.isOk()) << b.status().toString();
        EXPECT_EQ(bytesOf(a->outputs[0].tensor), bytesOf(b->outputs[0].tensor)) << rows;
      }
    }
  }
}

} // namespace
} // namespace rs::e2e
