//===- test/runtime/polymorphic_test.cc - Polymorphic model.mlir in the repository ===//
//
// The polymorphic fixtures (test/bundle/polymorphic_fixture.h) through the ModelRepository
// on the CPU backend: one compiled program per refinement, each with its own executable
// cache entry (`model.mlir@v1.b3-<key>.rsexe`) and log line, loaded from the cache on a
// second start; `refined_from=model.mlir` on the `model loaded` line; the file hash of
// model.mlir and a distinct refined-module hash per program; a refinement failure fails the
// model's load with the file named.
//
//===----------------------------------------------------------------------===//
#include "runtime/model_repository.h"

#include "../bundle/multishape_fixture.h"
#include "../bundle/polymorphic_fixture.h"
#include "bundle/polymorphic.h"
#include "common/files.h"
#include "runtime/cpu_backend.h"
#include "runtime_test_util.h"
#include "support/digest.h"

#include <gtest/gtest.h>

#include <set>

namespace rs::runtime {
namespace {

namespace fs = std::filesystem;
using polymorphic::kEncoder;
using polymorphic::kMlp;
using testing::LogCapture;
using testing::TempDir;

/// A repository on a two-thread CPU backend, numerics f32, with a fixed server build (so
/// that the cache keys of two starts agree).
std::unique_ptr<ModelRepository> cpuRepository() {
  Result<std::unique_ptr<Backend>> backend = createCpuBackend({2});
  EXPECT_TRUE(backend.isOk());
  ModelRepositoryOptions o;
  o.numerics = passes::NumericsMode::kF32;
  o.server_build = "version=test";
  return std::make_unique<ModelRepository>(std::shared_ptr<Backend>(std::move(backend).value()), o);
}

TEST(PolymorphicRepository, CompilesAndCachesEachRefinedProgram) {
  TempDir tmp;
  const fs::path dir = tmp.path() / kEncoder.polyName();
  multishape::copyBundleDir(kEncoder.polyDir(), dir);
  for (int start = 0; start < 2; ++start) {
    SCOPED_TRACE(start == 0 ? "first start" : "second start");
    LogCapture log;
    std::unique_ptr<ModelRepository> owned = cpuRepository();
    ModelRepository &repo = *owned;
    ASSERT_TRUE(repo.loadModel(dir.string()).isOk()) << log.text();
    auto m = repo.state(kEncoder.polyName())->model;
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->batch_sizes, kEncoder.batch_sizes);
    EXPECT_EQ(m->programs.size(), 4u);
    EXPECT_EQ(start == 0 ? repo.executableCacheMisses() : repo.executableCacheHits(), 4);
    Result<std::string> file_sha = sha256OfFile((dir / "model.mlir").string());
    ASSERT_TRUE(file_sha.isOk());
    EXPECT_EQ(m->file_sha256.at("model.mlir"), *file_sha);
    std::set<std::string> refined;
    for (const auto &[key, outcome] : m->cache) {
      const std::string name = bundle::refinedProgramName(key, true);
      EXPECT_EQ(fs::path(outcome.entry).filename().string(), name + "-" + outcome.key + ".rsexe");
      EXPECT_EQ(m->program_files.at(key), "model.mlir");
      refined.insert(m->refined_sha256.at(key));
      const std::string line = start == 0 ? "executable cache: miss model=" + kEncoder.polyName() +
                                                " batch_size=" + std::to_string(key.batch_size) +
                                                " program=" + name + " reason=no entry"
                                          : "executable cache: hit model=" + kEncoder.polyName() +
                                                " batch_size=" + std::to_string(key.batch_size) +
                                                " program=" + name + " key=";
      EXPECT_EQ(log.count(line), 1u) << log.text();
    }
    EXPECT_EQ(refined.size(), 4u);
    EXPECT_EQ(log.count("model loaded name=encoder_poly source=startup inputs=[x: f32[-1,-1,8]] "
                        "outputs=[y: f32[-1,-1,8]] batch_sizes=[1, 3] shape_variants=[{s=4}, "
                        "{s=8}] refined_from=model.mlir weights=13 "),
              1u)
        << log.text();
  }
}

TEST(PolymorphicRepository, RefinementFailureFailsTheLoadNamingTheFile) {
  TempDir tmp;
  const fs::path dir = tmp.path() / kMlp.polyName();
  multishape::copyBundleDir(kMlp.polyDir(), dir);
  std::string manifest = rs::testing::readFile(dir / "manifest.yaml");
  manifest.replace(manifest.find("dims: {f: 8}"), 12, "dims: {f: 5}");
  rs::testing::writeFile(dir / "manifest.yaml", manifest);
  std::unique_ptr<ModelRepository> repo = cpuRepository();
  Status s = repo->loadModel(dir.string());
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().rfind((dir / "model.mlir").string() + ": refining for batch size 1: ", 0),
            0u)
      << s.message();
  // Readiness reports it relative to the bundle.
  const Status state = repo->state(kMlp.polyName())->status;
  EXPECT_EQ(state.message().rfind("model.mlir: refining for batch size 1: ", 0), 0u)
      << state.message();
}

} // namespace
} // namespace rs::runtime
