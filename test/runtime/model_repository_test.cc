//===- test/runtime/model_repository_test.cc - Passes, cache and batch sizes -===//
//
// The repository runs the numerics pass on every program with the backend's TF32
// capability (none on the CPU), loads only the largest program under
// `runtime.batch_sizes: largest`, goes through the executable cache, counts its hits and
// misses, and logs `executable cache: hit|miss` and `model loaded ... numerics=...`.
//
//===----------------------------------------------------------------------===//
#include "runtime/model_repository.h"

#include "runtime/cpu_backend.h"
#include "runtime_test_util.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <sstream>

namespace rs::runtime {
namespace {

using testing::bytesOf;
using testing::copyBundle;
using testing::goldenTensor;
using testing::LogCapture;
using testing::TempDir;
namespace fs = std::filesystem;

std::shared_ptr<Backend> cpuBackend() {
  auto b = createCpuBackend({2});
  EXPECT_TRUE(b.isOk());
  return std::shared_ptr<Backend>(std::move(b).value());
}

ModelRepositoryOptions options(passes::NumericsMode numerics, bool largest) {
  ModelRepositoryOptions o;
  o.numerics = numerics;
  o.largest_batch_only = largest;
  o.compile_settings = "xla_flags=[] autotune=true";
  o.server_build = "version=test";
  return o;
}

TEST(ModelRepositoryTest, LargestLoadsOnlyTheLargestProgram) {
  TempDir tmp;
  const fs::path dir = copyBundle(tmp, "digits_cnn");
  LogCapture log;
  ModelRepository repo(cpuBackend(), options(passes::NumericsMode::kF32, true));
  ASSERT_TRUE(repo.loadModel(dir.string()).isOk());
  auto m = repo.state("digits_cnn")->model;
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->batch_sizes, (std::vector<int64_t>{8}));
  EXPECT_EQ(m->programs.size(), 1u);
  EXPECT_EQ(m->programs.count({0, 8}), 1u);
  EXPECT_EQ(m->numerics.outcome(), "f32 (pinned 1 dot_general, pinned 2 convolution)");
  EXPECT_EQ(repo.executableCacheMisses(), 1);
  EXPECT_EQ(log.count("executable cache: miss model=digits_cnn batch_size=8 "
                      "program=model.b8.mlir reason=no entry key="),
            1u)
      << log.text();
  EXPECT_EQ(log.count("executable cache:"), 1u);
  EXPECT_EQ(log.count("batch_sizes=[8] "), 1u) << log.text();
  EXPECT_EQ(log.count("numerics=f32 (pinned 1 dot_general, pinned 2 convolution)\n"), 1u)
      << log.text();
  // A request of 1 row runs the batch-8 program padded (the scheduler pads; here the
  // repository refuses a size it did not load).
  EXPECT_EQ(m->run(1, {}).status().code(), StatusCode::kNotFound);
}

TEST(ModelRepositoryTest, CompileErrorNamesTheFileOnceWithTheLine) {
  TempDir tmp;
  const fs::path dir = copyBundle(tmp, "iris_mlp");
  // A call of a function the module does not define, as line 4 of model.b1.mlir.
  std::ifstream in(dir / "model.b1.mlir");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const size_t body = text.find('\n', text.find("func.func public @main")) + 1;
  text.insert(body, "    %zz = func.call @absent(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32>\n");
  fs::permissions(dir / "model.b1.mlir", fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(dir / "model.b1.mlir") << text;
  ModelRepository repo(cpuBackend(), options(passes::NumericsMode::kAuto, false));
  Status s = repo.loadModel(dir.string());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), (dir / "model.b1.mlir").string() +
                             ":4:5: 'func.call' op calls @absent, which the module does not "
                             "define (in function @main)");
  // The recorded state reaches clients: its paths are relative to the bundle.
  EXPECT_EQ(repo.state("iris_mlp")->status.message(),
            "model.b1.mlir:4:5: 'func.call' op calls @absent, which the module does not define "
            "(in function @main)");
}

TEST(ModelRepositoryTest, AllLoadsEverySizeAndSumsTheNumericsCounts) {
  TempDir tmp;
  const fs::path dir = copyBundle(tmp, "digits_cnn");
  ModelRepository repo(cpuBackend(), options(passes::NumericsMode::kF32, false));
  ASSERT_TRUE(repo.loadModel(dir.string()).isOk());
  auto m = repo.state("digits_cnn")->model;
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->batch_sizes, (std::vector<int64_t>{1, 4, 8}));
  EXPECT_EQ(m->numerics.outcome(), "f32 (pinned 3 dot_general, pinned 6 convolution)");
  EXPECT_EQ(m->cache.size(), 3u);
}

TEST(ModelRepositoryTest, NumericsOfTheTf32Fixture) {
  TempDir tmp;
  const fs::path dir = copyBundle(tmp, "tf32_algo");
  {
    ModelRepository repo(cpuBackend(), options(passes::NumericsMode::kAuto, false));
    ASSERT_TRUE(repo.loadModel(dir.string()).isOk());
    EXPECT_EQ(repo.state("tf32_algo")->model->numerics.outcome(),
              "auto (stripped 2 tf32 algorithm(s): target lacks TF32)");
  }
  {
    ModelRepository repo(cpuBackend(), options(passes::NumericsMode::kF32, false));
    ASSERT_TRUE(repo.loadModel(dir.string()).isOk());
    auto m = repo.state("tf32_algo")->model;
    EXPECT_EQ(m->numerics.outcome(), "f32 (rewrote 2 tf32 algorithm(s), pinned 2 dot_general)");
    // Both outputs are the exact f32 product on the CPU: the CPU golden.
    auto out = m->run(1, {goldenTensor("tf32_algo", "b1.safetensors", "x")});
    ASSERT_TRUE(out.isOk()) << out.status().toString();
    EXPECT_EQ(bytesOf((*out)[0]), bytesOf((*out)[1]));
  }
  {
    ModelRepository repo(cpuBackend(), options(passes::NumericsMode::kTf32, false));
    Status s = repo.loadModel(dir.string());
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(s.message().find("numerics tf32: the compile target has no TF32"), std::string::npos)
        << s.message();
  }
}

TEST(ModelRepositoryTest, SecondRepositoryHitsEveryProgram) {
  TempDir tmp;
  const fs::path dir = copyBundle(tmp, "iris_mlp");
  std::string want;
  {
    ModelRepository repo(cpuBackend(), options(passes::NumericsMode::kF32, false));
    ASSERT_TRUE(repo.loadModel(dir.string()).isOk());
    EXPECT_EQ(repo.executableCacheMisses(), 3);
    EXPECT_EQ(repo.executableCacheHits(), 0);
    auto out = repo.state("iris_mlp")
                   ->model->run(8, {goldenTensor("iris_mlp", "b8.safetensors", "features")});
    ASSERT_TRUE(out.isOk());
    want = bytesOf((*out)[0]);
  }
  LogCapture log;
  ModelRepository repo(cpuBackend(), options(passes::NumericsMode::kF32, false));
  ASSERT_TRUE(repo.loadModel(dir.string()).isOk());
  EXPECT_EQ(repo.executableCacheMisses(), 0);
  EXPECT_EQ(repo.executableCacheHits(), 3);
  for (int b : {1, 8, 32})
    EXPECT_EQ(log.count("executable cache: hit model=iris_mlp batch_size=" + std::to_string(b) +
                        " program=model.b" + std::to_string(b) + ".mlir key="),
              1u)
        << log.text();
  auto out = repo.state("iris_mlp")
                 ->model->run(8, {goldenTensor("iris_mlp", "b8.safetensors", "features")});
  ASSERT_TRUE(out.isOk());
  EXPECT_EQ(bytesOf((*out)[0]), want);

  // Another numerics mode changes the module, hence every key: three misses.
  ModelRepository other(cpuBackend(), options(passes::NumericsMode::kAuto, false));
  ASSERT_TRUE(other.loadModel(dir.string()).isOk());
  EXPECT_EQ(other.executableCacheMisses(), 3);
}

TEST(ModelRepositoryTest, ReadOnlyBundleWarnsOncePerModel) {
  // A copy of the fixture whose directory has no write permission bit (the cache decides by
  // the bit, so this holds when the test runs as root too): nothing may be written there.
  testing::TempDir tmp;
  const fs::path bundle = copyBundle(tmp, "iris_mlp");
  fs::permissions(bundle, fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  LogCapture log;
  ModelRepository repo(cpuBackend(), options(passes::NumericsMode::kAuto, false));
  ASSERT_TRUE(repo.loadModel(bundle.string()).isOk());
  EXPECT_EQ(log.count("executable cache: entry not written model=iris_mlp program=model.b1.mlir "
                      "reason=directory "),
            1u)
      << log.text();
  EXPECT_EQ(log.count("executable cache: entry not written"), 1u);
  EXPECT_EQ(log.count("executable cache: miss"), 3u);
  EXPECT_FALSE(fs::exists(bundle / ".cache"));
}

} // namespace
} // namespace rs::runtime
