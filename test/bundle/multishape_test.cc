//===- test/bundle/multishape_test.cc - Multi-shape bundles: files, routing ===//
//
// The checked-in multi-shape fixture (test/bundle/multishape_fixture.h) loads with one
// program per shape variant and batch size, each signature checked with its variant's sizes;
// broken copies of it fail naming the file; program file names parse; tensors route to the
// variant their variable axes match.
//
//===----------------------------------------------------------------------===//
#include "bundle/bundle.h"
#include "bundle/program_files.h"
#include "bundle/shape_variant.h"

#include "multishape_fixture.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace rs::bundle {
namespace {

namespace fs = std::filesystem;
using multishape::copyBundleDir;
using multishape::multiShapeBundle;
using testing::expectError;
using testing::readFile;
using testing::replaceInFile;
using testing::TempDir;
using testing::writeFile;

/// A writable copy of the text fixture in `tmp`, named text_encoder_ms.
std::string copyFixture(const TempDir &tmp) {
  const std::string dir = tmp.file(multishape::kMultiShapeModel);
  copyBundleDir(multiShapeBundle(), dir);
  return dir;
}

/// The row-major shape of `main`'s argument `i` of program `key`.
ir::Type argumentType(const Bundle &b, const ProgramKey &key, size_t i) {
  const ir::Operation *main = b.programs.at(key).module.lookupFunction("main");
  EXPECT_NE(main, nullptr);
  return main ? ir::functionType(*main).elements.at(i) : ir::Type{};
}

TEST(MultiShapeBundle, LoadsOneProgramPerVariantAndBatchSize) {
  const std::string dir = multiShapeBundle();
  auto b = loadBundle(dir);
  ASSERT_TRUE(b.isOk()) << b.status().toString();
  EXPECT_TRUE(b->multiShape());
  EXPECT_FALSE(b->unbatched());
  EXPECT_TRUE(b->warnings.empty());
  EXPECT_EQ(b->batchSizes(), (std::vector<int64_t>{1, 4}));
  ASSERT_EQ(b->manifest.input_shapes.size(), 2u);
  EXPECT_EQ(b->manifest.input_shapes[1], (ShapeVariant{{'s', 16}}));
  std::vector<ProgramKey> keys;
  for (const auto &[key, program] : b->programs) {
    keys.push_back(key);
    EXPECT_EQ(program.variant, key.variant);
    EXPECT_EQ(program.batch_size, key.batch_size);
    EXPECT_EQ(program.path, dir + "/model.v" + std::to_string(key.variant) + ".b" +
                                std::to_string(key.batch_size) + ".mlir");
  }
  EXPECT_EQ(keys, (std::vector<ProgramKey>{{0, 1}, {0, 4}, {1, 1}, {1, 4}}));
  // input_ids at each program's variant and batch size; 2 inputs + 10 weights.
  EXPECT_EQ(argumentType(*b, {0, 4}, 0).toString(), "tensor<4x8xi32>");
  EXPECT_EQ(argumentType(*b, {1, 1}, 1).toString(), "tensor<1x16xi32>");
  EXPECT_EQ(b->weights.size(), 10u);
  // ModelMetadata's shapes: -1 on the batch and the variable axis.
  EXPECT_EQ(b->manifest.executable_inputs[0].wireShape(), (Shape{-1, -1}));
  EXPECT_EQ(b->manifest.executable_outputs[0].wireShape(), (Shape{-1, -1, 16}));
}

TEST(MultiShapeBundle, MissingVariantProgramIsNamed) {
  TempDir tmp;
  const std::string dir = copyFixture(tmp);
  fs::remove(dir + "/model.v1.b4.mlir");
  expectError(loadBundle(dir), StatusCode::kNotFound,
              dir + "/model.v1.b4.mlir: missing (shape variant 1 {s=16}, batch size 4 is listed "
                    "in batching.compiled_batch_sizes [1, 4])");
}

TEST(MultiShapeBundle, SignatureIsCheckedWithEachVariantsSizes) {
  TempDir tmp;
  const std::string dir = copyFixture(tmp);
  // The s=8 program where the s=16 one belongs.
  writeFile(dir + "/model.v1.b4.mlir", readFile(dir + "/model.v0.b4.mlir"));
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/model.v1.b4.mlir: argument 0 (input 'input_ids'): type tensor<4x8xi32> "
                    "does not match manifest i32[4,16] (shape variant 1 {s=16})");

  // Variants listed in the other order: the first program checked is already wrong.
  writeFile(dir + "/model.v1.b4.mlir", readFile(multiShapeBundle() + "/model.v1.b4.mlir"));
  replaceInFile(dir + "/manifest.yaml", "input_shapes: [{s: 8}, {s: 16}]",
                "input_shapes: [{s: 16}, {s: 8}]");
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/model.v0.b1.mlir: argument 0 (input 'input_ids'): type tensor<1x8xi32> "
                    "does not match manifest i32[1,16] (shape variant 0 {s=16})");

  // Outputs take the variant's sizes too: `hidden` fixed at s=8 fits variant 0 only.
  replaceInFile(dir + "/manifest.yaml", "input_shapes: [{s: 16}, {s: 8}]",
                "input_shapes: [{s: 8}, {s: 16}]");
  replaceInFile(dir + "/manifest.yaml", "dims: {d: 16, s: -1}", "dims: {d: 16, s: 8}");
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/model.v1.b1.mlir: result 0 (output 'hidden'): type tensor<1x16x16xf32> "
                    "does not match manifest f32[1,8,16] (shape variant 1 {s=16})");
}

TEST(MultiShapeBundle, ProgramFilesOfTheOtherNamingAreRefused) {
  TempDir tmp;
  const std::string dir = copyFixture(tmp);
  writeFile(dir + "/model.b4.mlir", readFile(dir + "/model.v0.b4.mlir"));
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/model.b4.mlir: the manifest has input_shapes (2 shape variants), so its "
                    "programs are model.v{i}.b{N}.mlir or model.v{i}.mlir");

  // A single-shape bundle with a variant program.
  TempDir single;
  const std::string iris = single.file("iris_mlp");
  copyBundleDir(testing::fixtureBundle("iris_mlp"), iris);
  writeFile(iris + "/model.v0.b8.mlir", readFile(iris + "/model.b8.mlir"));
  expectError(loadBundle(iris), StatusCode::kInvalidArgument,
              iris + "/model.v0.b8.mlir: a shape-variant program, but the manifest has no "
                     "input_shapes (programs are model.b{N}.mlir or model.mlir)");
}

TEST(MultiShapeBundle, StrayVariantAndBatchSizeAreReported) {
  TempDir tmp;
  const std::string dir = copyFixture(tmp);
  writeFile(dir + "/model.v2.b1.mlir", "not even mlir");
  writeFile(dir + "/model.v0.b2.mlir", "not even mlir");
  // A second name for model.v0.b1.mlir's program is no program name.
  writeFile(dir + "/model.v00.b1.mlir", readFile(dir + "/model.v0.b1.mlir"));
  auto b = loadBundle(dir);
  ASSERT_TRUE(b.isOk()) << b.status().toString();
  EXPECT_EQ(b->programs.size(), 4u);
  EXPECT_EQ(b->programs.at({0, 1}).path, dir + "/model.v0.b1.mlir");
  EXPECT_EQ(b->warnings,
            (std::vector<std::string>{
                dir + "/model.v00.b1.mlir: not a program file name (model.v{i}.b{N}.mlir or "
                      "model.v{i}.mlir, numbers in decimal without leading zeros); not loaded",
                dir + "/model.v2.b1.mlir: shape variant 2 is not in input_shapes [{s=8}, "
                      "{s=16}]; not loaded",
                dir + "/model.v0.b2.mlir: batch size 2 is not in batching.compiled_batch_sizes "
                      "[1, 4]; not loaded"}));
}

TEST(MultiShapeBundle, UnbatchedProgramPerVariant) {
  TempDir tmp;
  const std::string dir = copyFixture(tmp);
  fs::rename(dir + "/model.v0.b1.mlir", dir + "/model.v0.mlir");
  fs::rename(dir + "/model.v1.b1.mlir", dir + "/model.v1.mlir");
  fs::remove(dir + "/model.v0.b4.mlir");
  fs::remove(dir + "/model.v1.b4.mlir");
  // The fixture's inputs have a batch axis: static unbatched programs cannot serve it.
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/model.v0.mlir: main takes static inputs, but the manifest's inputs have a "
                    "batch axis (letter n; batching.compiled_batch_sizes [1, 4]): export it with "
                    "a symbolic batch axis (a shape-polymorphic model.v0.mlir) or as one "
                    "model.v{i}.b{N}.mlir per compiled batch size");

  fs::remove(dir + "/model.v1.mlir");
  expectError(loadBundle(dir), StatusCode::kNotFound,
              dir + "/model.v1.mlir: missing (shape variant 1 {s=16}, the bundle's other "
                    "variants have model.v{i}.mlir programs)");
  writeFile(dir + "/model.v1.b1.mlir", readFile(multiShapeBundle() + "/model.v1.b1.mlir"));
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + ": both model.v0.mlir and model.v1.b1.mlir exist (use one model.v{i}.mlir "
                    "or one model.v{i}.b{N}.mlir per compiled batch size)");
}

TEST(MultiShapeBundle, PortableCopyLoadsLikeTheText) {
  auto b = loadBundle(multiShapeBundle(true));
  ASSERT_TRUE(b.isOk()) << b.status().toString();
  EXPECT_EQ(b->programs.size(), 4u);
  EXPECT_EQ(argumentType(*b, {1, 4}, 0).toString(), "tensor<4x16xi32>");
}

TEST(ProgramFiles, NamesParseAndPrint) {
  struct Case {
    const char *name;
    std::optional<size_t> variant;
    int64_t batch_size;
  };
  for (const Case &c : {Case{"model.mlir", std::nullopt, 0}, Case{"model.b8.mlir", std::nullopt, 8},
                        Case{"model.v0.mlir", 0, 0}, Case{"model.v12.b4.mlir", 12, 4}}) {
    SCOPED_TRACE(c.name);
    std::optional<ProgramFileName> parsed = parseProgramFileName(c.name);
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(parsed->variant, c.variant);
    EXPECT_EQ(parsed->batch_size, c.batch_size);
    EXPECT_EQ(programFileName({c.variant.value_or(0), c.batch_size}, c.variant.has_value()),
              c.name);
  }
  for (const char *name :
       {"model.v1.x.mlir", "model.b0.mlir", "model.v.b1.mlir", "model.b-1.mlir", "model.b08.mlir",
        "model.v00.b1.mlir", "model.v01.mlir", "model.b00.mlir", "model.v1.b1.mlirbc",
        "model.bx.mlir", "weights.safetensors", "model.v1.b1.b2.mlir"})
    EXPECT_FALSE(parseProgramFileName(name).has_value()) << name;
}

TEST(ShapeVariant, RoutesTensorsToTheVariantOfTheirVariableAxes) {
  auto b = loadBundle(multiShapeBundle());
  ASSERT_TRUE(b.isOk()) << b.status().toString();
  const Manifest &m = b->manifest;
  auto ids = [](int64_t n, int64_t s) { return Tensor::zeros(DType::kI32, {n, s}); };
  const std::vector<Tensor> s8{ids(3, 8), ids(3, 8)}, s16{ids(1, 16), ids(1, 16)};
  const std::vector<Tensor> s12{ids(1, 12), ids(1, 12)}, mixed{ids(1, 8), ids(1, 16)};
  EXPECT_EQ(findVariant(m, s8), std::optional<size_t>(0));
  EXPECT_EQ(findVariant(m, s16), std::optional<size_t>(1));
  EXPECT_EQ(findVariant(m, s12), std::nullopt);
  EXPECT_EQ(findVariant(m, mixed), std::nullopt);
  EXPECT_EQ(findVariant(m, std::span(mixed).first(1)), std::optional<size_t>(0));
  EXPECT_TRUE(variantMatches(m.executable_inputs[0], m.input_shapes[1], Shape{4, 16}));
  EXPECT_FALSE(variantMatches(m.executable_inputs[0], m.input_shapes[1], Shape{4, 8}));
  EXPECT_EQ(variantText({{'s', 16}, {'t', 4}}), "s=16, t=4");
  EXPECT_EQ(variantsText(m.input_shapes), "[{s=8}, {s=16}]");

  // A single-shape manifest routes everything to variant 0.
  auto iris = loadBundle(testing::fixtureBundle("iris_mlp"));
  ASSERT_TRUE(iris.isOk()) << iris.status().toString();
  EXPECT_EQ(findVariant(iris->manifest, s12), std::optional<size_t>(0));
}

} // namespace
} // namespace rs::bundle
