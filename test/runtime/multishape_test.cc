//===- test/runtime/multishape_test.cc - Multi-shape models in the repository ===//
//
// The multi-shape fixture (test/bundle/multishape_fixture.h) through the ModelRepository on
// the CPU backend: every variant's programs compiled and cached under distinct keys, the
// `model loaded` line naming the variants, run() routed by the inputs' shapes and within
// tolerance of JAX. The metadata and request validation of the same bundle:
// test/server/multishape_request_test.cc.
//
//===----------------------------------------------------------------------===//
#include "runtime/model_repository.h"

#include "../bundle/multishape_fixture.h"
#include "bundle/safetensors.h"
#include "runtime/cpu_backend.h"
#include "runtime_test_util.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

namespace rs::runtime {
namespace {

namespace fs = std::filesystem;
using multishape::kSeqLengths;
using testing::LogCapture;
using testing::TempDir;

std::shared_ptr<Backend> cpuBackend() {
  auto b = createCpuBackend({2});
  EXPECT_TRUE(b.isOk());
  return std::shared_ptr<Backend>(std::move(b).value());
}

ModelRepositoryOptions options(bool largest = false) {
  ModelRepositoryOptions o;
  o.numerics = passes::NumericsMode::kF32;
  o.largest_batch_only = largest;
  o.server_build = "version=test";
  return o;
}

/// A writable copy of the text fixture under `tmp`.
fs::path copyFixture(const TempDir &tmp) {
  const fs::path dir = tmp.path() / multishape::kMultiShapeModel;
  multishape::copyBundleDir(multishape::multiShapeBundle(), dir);
  return dir;
}

/// The golden file of (variant, batch) opened.
bundle::SafetensorsFile golden(size_t variant, int64_t batch) {
  auto f = bundle::SafetensorsFile::open(multishape::multiShapeGolden(variant, batch));
  EXPECT_TRUE(f.isOk()) << f.status().toString();
  return f.isOk() ? std::move(f).value() : bundle::SafetensorsFile{};
}

Tensor tensorOf(const bundle::SafetensorsFile &f, const std::string &name) {
  auto t = f.tensor(name);
  EXPECT_TRUE(t.isOk()) << t.status().toString();
  return t.isOk() ? *t : Tensor{};
}

TEST(MultiShapeRepository, CompilesAndCachesEveryVariantsPrograms) {
  TempDir tmp;
  const fs::path dir = copyFixture(tmp);
  LogCapture log;
  ModelRepository repo(cpuBackend(), options());
  ASSERT_TRUE(repo.loadModel(dir.string()).isOk());
  auto m = repo.state("text_encoder_ms")->model;
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->batch_sizes, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(m->programs.size(), 4u);
  EXPECT_EQ(repo.executableCacheMisses(), 4);
  // One cache key and one entry per program, all distinct.
  std::set<std::string> keys;
  for (const auto &[key, outcome] : m->cache) {
    const std::string file = bundle::programFileName(key, true);
    keys.insert(outcome.key);
    EXPECT_EQ(fs::path(outcome.entry).filename().string(),
              file.substr(0, file.size() - 5) + "-" + outcome.key + ".rsexe");
    EXPECT_TRUE(fs::exists(outcome.entry)) << outcome.entry;
    EXPECT_EQ(log.count("executable cache: miss model=text_encoder_ms batch_size=" +
                        std::to_string(key.batch_size) + " program=" + file + " reason=no entry"),
              1u)
        << log.text();
    EXPECT_EQ(m->file_sha256.count(file), 1u) << file;
  }
  EXPECT_EQ(keys.size(), 4u);
  EXPECT_EQ(log.count("model loaded name=text_encoder_ms source=startup inputs=[input_ids: "
                      "i32[-1,-1], attention_mask: i32[-1,-1]] outputs=[hidden: f32[-1,-1,16], "
                      "pooled: f32[-1,16], logits: f32[-1,4]] batch_sizes=[1, 4] "
                      "shape_variants=[{s=8}, {s=16}] weights=10 "),
            1u)
      << log.text();
  // A second repository loads every program from the cache.
  ModelRepository again(cpuBackend(), options());
  ASSERT_TRUE(again.loadModel(dir.string()).isOk());
  EXPECT_EQ(again.executableCacheHits(), 4);
  EXPECT_EQ(again.executableCacheMisses(), 0);
}

TEST(MultiShapeRepository, BundleWarningsAreLoggedAndKept) {
  TempDir tmp;
  const fs::path dir = copyFixture(tmp);
  std::ofstream((dir / "model.v2.b1.mlir").string()) << "not loaded";
  std::ofstream((dir / "model.v0.b2.mlir").string()) << "not loaded";
  LogCapture log;
  ModelRepository repo(cpuBackend(), options());
  ASSERT_TRUE(repo.loadModel(dir.string()).isOk());
  const std::vector<std::string> warnings{
      dir.string() + "/model.v2.b1.mlir: shape variant 2 is not in input_shapes [{s=8}, {s=16}]; "
                     "not loaded",
      dir.string() + "/model.v0.b2.mlir: batch size 2 is not in batching.compiled_batch_sizes "
                     "[1, 4]; not loaded"};
  EXPECT_EQ(repo.state("text_encoder_ms")->model->warnings, warnings);
  for (const std::string &w : warnings)
    EXPECT_EQ(log.count("[warning] model bundle warning name=text_encoder_ms warning=" + w), 1u)
        << log.text();
}

TEST(MultiShapeRepository, LargestLoadsTheLargestProgramOfEachVariant) {
  TempDir tmp;
  const fs::path dir = copyFixture(tmp);
  ModelRepository repo(cpuBackend(), options(true));
  ASSERT_TRUE(repo.loadModel(dir.string()).isOk());
  auto m = repo.state("text_encoder_ms")->model;
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->batch_sizes, (std::vector<int64_t>{4}));
  std::vector<bundle::ProgramKey> loaded;
  for (const auto &[key, exe] : m->programs)
    loaded.push_back(key);
  EXPECT_EQ(loaded, (std::vector<bundle::ProgramKey>{{0, 4}, {1, 4}}));
}

TEST(MultiShapeRepository, RunRoutesByShapeAndMatchesJax) {
  TempDir tmp;
  const fs::path dir = copyFixture(tmp);
  ModelRepository repo(cpuBackend(), options());
  ASSERT_TRUE(repo.loadModel(dir.string()).isOk());
  auto m = repo.state("text_encoder_ms")->model;
  ASSERT_NE(m, nullptr);
  for (size_t v = 0; v < 2; ++v)
    for (int64_t batch : multishape::kMultiShapeBatchSizes) {
      SCOPED_TRACE("v" + std::to_string(v) + ".b" + std::to_string(batch));
      bundle::SafetensorsFile g = golden(v, batch);
      auto out = m->run(batch, {tensorOf(g, "input_ids"), tensorOf(g, "attention_mask")});
      ASSERT_TRUE(out.isOk()) << out.status().toString();
      ASSERT_EQ(out->size(), 3u);
      EXPECT_EQ((*out)[0].shape(), (Shape{batch, kSeqLengths[v], 16}));
      for (size_t o = 0; o < 3; ++o) {
        const std::string name = m->manifest.executable_outputs[o].name;
        multishape::GoldenDiff diff = multishape::compareToGolden((*out)[o], tensorOf(g, name));
        EXPECT_EQ(diff.first_bad, "") << name;
      }
    }
  // Inputs of no variant (a changed bundle could leave a queued request so) are refused.
  Tensor s12 = Tensor::zeros(DType::kI32, {1, 12});
  auto bad = m->run(1, {s12, s12});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "model 'text_encoder_ms': the inputs match none of its shape variants [{s=8}, {s=16}]");
}

} // namespace
} // namespace rs::runtime
