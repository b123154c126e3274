//===- test/bundle/polymorphic_test.cc - Loading a shape-polymorphic model.mlir -===//
//
// loadBundle() on the polymorphic fixtures (polymorphic_fixture.h): one refined, static
// program per compiled batch size and shape variant, each with the manifest's shapes; and
// the load errors: a manifest size that violates the module's shape_assertion, a manifest
// that does not fit the declared static dims, a batched manifest without compiled sizes, a
// static model.mlir in a multi-shape bundle, model.mlir beside per-variant files, a main
// with a dimension argument.
//
//===----------------------------------------------------------------------===//
#include "bundle/bundle.h"

#include "common/files.h"
#include "common/temp_dir.h"
#include "multishape_fixture.h"
#include "polymorphic_fixture.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace rs::bundle {
namespace {

using polymorphic::kEncoder;
using polymorphic::kMlp;
using testing::readFile;
using testing::TempDir;
using testing::writeFile;

/// A writable copy of fixture bundle `from` in `tmp`, named as it.
std::string copyFixture(const TempDir &tmp, const std::string &from) {
  const std::string dir = tmp.file(std::filesystem::path(from).filename().string());
  multishape::copyBundleDir(from, dir);
  return dir;
}

/// Replaces the first `from` in `<dir>/manifest.yaml` by `to`.
void editManifest(const std::string &dir, const std::string &from, const std::string &to) {
  std::string text = readFile(dir + "/manifest.yaml");
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  writeFile(dir + "/manifest.yaml", text.replace(at, from.size(), to));
}

/// The message of loadBundle(dir)'s error, which must be InvalidArgument ("" when it loads).
std::string loadError(const std::string &dir) {
  Result<Bundle> b = loadBundle(dir);
  if (b.isOk())
    return "";
  EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument) << b.status().toString();
  return b.status().message();
}

std::string mainSignature(const Program &p) {
  return ir::functionType(*p.module.lookupFunction("main")).toString();
}

TEST(PolymorphicBundleTest, MlpIsRefinedPerCompiledBatchSize) {
  Result<Bundle> b = loadBundle(kMlp.polyDir());
  ASSERT_TRUE(b.isOk()) << b.status().toString();
  EXPECT_EQ(b->batchSizes(), kMlp.batch_sizes);
  ASSERT_EQ(b->programs.size(), kMlp.batch_sizes.size());
  ASSERT_EQ(b->dynamic_axes.size(), 1u);
  EXPECT_EQ(dynamicAxesText(b->dynamic_axes), "input 'x' axis 0 (n)");
  for (int64_t n : kMlp.batch_sizes) {
    const Program &p = b->programs.at({0, n});
    EXPECT_TRUE(p.refined);
    EXPECT_EQ(std::filesystem::path(p.path).filename(), "model.mlir");
    EXPECT_EQ(mainSignature(p), "(tensor<" + std::to_string(n) +
                                    "x8xf32>, tensor<8x16xf32>, tensor<16xf32>, "
                                    "tensor<16x4xf32>, tensor<4xf32>) -> tensor<" +
                                    std::to_string(n) + "x4xf32>")
        << n;
  }
}

TEST(PolymorphicBundleTest, EncoderIsRefinedPerVariantAndBatchSize) {
  Result<Bundle> b = loadBundle(kEncoder.polyDir());
  ASSERT_TRUE(b.isOk()) << b.status().toString();
  EXPECT_EQ(dynamicAxesText(b->dynamic_axes), "input 'x' axis 0 (n), input 'x' axis 1 (s)");
  ASSERT_EQ(b->programs.size(), 4u);
  for (size_t v = 0; v < 2; ++v)
    for (int64_t n : kEncoder.batch_sizes) {
      const Program &p = b->programs.at({v, n});
      EXPECT_TRUE(p.refined);
      const ir::Type &fn = ir::functionType(*p.module.lookupFunction("main"));
      EXPECT_EQ(fn.elements[0].shape, (Shape{n, kEncoder.seq_lengths[v], 8}));
      EXPECT_EQ(fn.results[0].shape, (Shape{n, kEncoder.seq_lengths[v], 8}));
    }
}

TEST(PolymorphicBundleTest, PerSizeFilesAreNotRefined) {
  Result<Bundle> b = loadBundle(kMlp.sizedDir());
  ASSERT_TRUE(b.isOk()) << b.status().toString();
  EXPECT_TRUE(b->dynamic_axes.empty());
  for (const auto &[key, p] : b->programs)
    EXPECT_FALSE(p.refined);
}

/// A manifest edit of a polymorphic fixture and the load error it gives: the message starts
/// with `<dir>/` + `prefix` and contains `detail`.
struct ManifestCase {
  std::string what;
  std::string fixture_dir;
  std::string from, to;
  std::string prefix, detail;
};

TEST(PolymorphicBundleTest, RefinementFailuresAreLoadErrorsNamingTheFile) {
  const std::vector<ManifestCase> cases = {
      {"a size that violates the shape_assertion", kEncoder.polyDir(),
       "input_shapes: [{s: 4}, {s: 8}]", "input_shapes: [{s: 4}, {s: 32}]",
       "model.mlir: refining for batch size 1 (shape variant 1 {s=32}): ",
       "'stablehlo.custom_call' op shape assertion failed: Input shapes do not match the symbolic "
       "shape constraint s <= 16. Expected '- s + 16' to be greater or equal to 0, but found -16."},
      {"a size that contradicts a static dim", kMlp.polyDir(), "dims: {f: 8}", "dims: {f: 9}",
       "model.mlir: refining for batch size 1: ",
       "argument 0 of @main: tensor<1x9xf32> does not refine tensor<?x8xf32>"},
      {"no compiled batch sizes", kMlp.polyDir(),
       "batching: {compiled_batch_sizes: [1, 2, 4, 8]}\n", "",
       "model.mlir: a shape-polymorphic program is refined once per "
       "batching.compiled_batch_sizes entry, but the manifest lists none",
       ""},
  };
  for (const ManifestCase &c : cases) {
    SCOPED_TRACE(c.what);
    TempDir tmp("rs_poly_");
    const std::string dir = copyFixture(tmp, c.fixture_dir);
    editManifest(dir, c.from, c.to);
    const std::string msg = loadError(dir);
    EXPECT_EQ(msg.rfind(dir + "/" + c.prefix, 0), 0u) << msg;
    EXPECT_NE(msg.find(c.detail), std::string::npos) << msg;
  }
}

TEST(PolymorphicBundleTest, StaticModelMlirInAMultiShapeBundleIsALoadError) {
  TempDir tmp("rs_poly_");
  const std::string dir = copyFixture(tmp, kEncoder.sizedDir());
  std::filesystem::rename(dir + "/model.v0.b1.mlir", dir + "/model.mlir");
  for (const char *f : {"model.v0.b3.mlir", "model.v1.b1.mlir", "model.v1.b3.mlir"})
    std::filesystem::remove(dir + "/" + f);
  EXPECT_EQ(loadError(dir),
            dir + "/model.mlir: the manifest has input_shapes (2 shape variants) but main takes "
                  "static inputs (a model.mlir for every variant must be shape-polymorphic; "
                  "otherwise use model.v{i}.b{N}.mlir or model.v{i}.mlir per variant)");
}

TEST(PolymorphicBundleTest, ModelMlirBesidePerVariantFilesIsALoadError) {
  TempDir tmp("rs_poly_");
  const std::string dir = copyFixture(tmp, kEncoder.sizedDir());
  std::filesystem::copy_file(kEncoder.polyDir() + "/model.mlir", dir + "/model.mlir");
  EXPECT_EQ(loadError(dir),
            dir + ": both model.mlir and model.v0.b1.mlir exist (use one shape-polymorphic "
                  "model.mlir or the model.v{i}.b{N}.mlir / model.v{i}.mlir files)");
}

TEST(PolymorphicBundleTest, DimensionArgumentsAreALoadError) {
  TempDir tmp("rs_poly_");
  const std::string dir = copyFixture(tmp, kMlp.polyDir());
  // Older jax.export: one i64 dimension argument before the inputs.
  writeFile(dir + "/model.mlir", R"(func.func public @main(%b: tensor<i64>, %x: tensor<?x8xf32>,
    %w1: tensor<8x16xf32>, %b1: tensor<16xf32>, %w2: tensor<16x4xf32>, %b2: tensor<4xf32>)
    -> tensor<?x4xf32> {
  %0 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0]
      : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  %1 = stablehlo.dot_general %0, %w2, contracting_dims = [1] x [0]
      : (tensor<?x16xf32>, tensor<16x4xf32>) -> tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}
)");
  EXPECT_EQ(loadError(dir), dir + "/model.mlir: main takes 6 arguments but the manifest has 1 "
                                  "input and the weights file 4 weights (5 expected; dimension "
                                  "arguments are not supported)");
}

TEST(PolymorphicBundleTest, RefinedProgramNames) {
  EXPECT_EQ(refinedProgramName({0, 8}, false), "model.mlir@b8");
  EXPECT_EQ(refinedProgramName({1, 8}, true), "model.mlir@v1.b8");
  EXPECT_EQ(refinedProgramName({1, 0}, true), "model.mlir@v1");
  EXPECT_EQ(refinedProgramName({0, 0}, false), "model.mlir");
}

} // namespace
} // namespace rs::bundle
