//===- test/bundle/bundle_test.cc - bundle loading and signature checks
//----===//
#include "bundle/bundle.h"

#include "bundle/safetensors.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

namespace rs::bundle {
namespace {

namespace fs = std::filesystem;
using testing::expectError;
using testing::fixtureBundle;
using testing::readFile;
using testing::replaceInFile;
using testing::TempDir;
using testing::writeFile;

struct FixtureCase {
  const char *model;
  std::vector<int64_t> sizes;
  size_t inputs;
  size_t outputs;
  size_t weights;
  const char *first_weight; // argument_order[0]
  Shape first_weight_shape;
  Shape first_input_at_max; // row-major shape of input 0 at the largest size
};

std::vector<FixtureCase> fixtureCases() {
  return {
      {"bert_bench", {1, 8, 32}, 2, 2, 52, "embed.tokens", {8192, 256}, {32, 128}},
      {"digits_cnn", {1, 4, 8}, 1, 2, 6, "conv1.weight", {3, 3, 1, 16}, {8, 8, 8, 1}},
      {"iris_mlp", {1, 8, 32}, 1, 1, 4, "fc1.weight", {4, 16}, {32, 4}},
      {"op_zoo", {1}, 2, 12, 1, "w", {8, 8}, {4, 8}},
      {"resnet_bench", {1, 8, 32}, 1, 1, 38, "stem.w", {3, 3, 3, 32}, {32, 64, 64, 3}},
      {"resnet_mini", {1, 8}, 1, 1, 20, "stem.w", {3, 3, 3, 16}, {8, 32, 32, 3}},
      {"tf32_algo", {1, 4}, 1, 2, 1, "w", {64, 64}, {4, 64}},
      {"tiny_bert", {1, 4}, 2, 2, 28, "embed.tokens", {512, 64}, {4, 16}},
  };
}

TEST(Bundle, EveryFixtureBundleLoads) {
  for (const FixtureCase &c : fixtureCases()) {
    SCOPED_TRACE(c.model);
    auto b = loadBundle(fixtureBundle(c.model));
    ASSERT_TRUE(b.isOk()) << b.status().toString();
    EXPECT_EQ(b->name, c.model);
    EXPECT_EQ(b->batchSizes(), c.sizes);
    EXPECT_FALSE(b->unbatched());
    EXPECT_TRUE(b->warnings.empty());
    EXPECT_EQ(b->manifest.executable_inputs.size(), c.inputs);
    EXPECT_EQ(b->manifest.executable_outputs.size(), c.outputs);
    ASSERT_EQ(b->weights.size(), c.weights);
    ASSERT_EQ(b->weight_names.size(), c.weights);
    EXPECT_EQ(b->weight_names[0], c.first_weight);
    EXPECT_EQ(b->weights[0].shape(), c.first_weight_shape);
    EXPECT_EQ(b->manifest.executable_inputs[0].shapeForBatch(b->manifest.maxBatchSize()),
              c.first_input_at_max);
    for (const auto &[key, program] : b->programs) {
      EXPECT_EQ(program.batch_size, key.batch_size);
      EXPECT_EQ(program.path,
                fixtureBundle(c.model) + "/model.b" + std::to_string(key.batch_size) + ".mlir");
      const ir::Operation *main = program.module.lookupFunction("main");
      ASSERT_NE(main, nullptr);
      EXPECT_EQ(ir::functionType(*main).elements.size(), c.inputs + c.weights);
      EXPECT_EQ(ir::functionType(*main).results.size(), c.outputs);
    }
  }
}

TEST(Bundle, WeightsAreZeroCopyViewsInArgumentOrder) {
  auto b = loadBundle(fixtureBundle("digits_cnn"));
  ASSERT_TRUE(b.isOk()) << b.status().toString();
  EXPECT_EQ(b->weight_names, (std::vector<std::string>{"conv1.weight", "conv1.bias", "conv2.weight",
                                                       "conv2.bias", "fc.weight", "fc.bias"}));
  auto file = SafetensorsFile::open(fixtureBundle("digits_cnn") + "/weights.safetensors");
  ASSERT_TRUE(file.isOk());
  auto bias = file->tensor("conv1.bias");
  ASSERT_TRUE(bias.isOk());
  EXPECT_EQ(b->weights[1].shape(), (Shape{16}));
  EXPECT_EQ(std::memcmp(b->weights[1].data(), bias->data(), 64), 0);
  // Views into one mapping: the file stores conv1.bias at [0,64) and
  // conv1.weight at [64,640).
  EXPECT_EQ(b->weights[0].data(), b->weights[1].data() + 64);
}

TEST(Bundle, DiscoverBundlesListsManifestDirectoriesSorted) {
  const std::string repo = testing::sharedDir() + "/fixtures/bundles";
  std::vector<std::string> expected;
  for (const char *m : {"bert_bench", "digits_cnn", "iris_mlp", "op_zoo", "resnet_bench",
                        "resnet_mini", "tf32_algo", "tiny_bert"})
    expected.push_back(repo + "/" + m);
  EXPECT_EQ(discoverBundles(repo), expected);

  TempDir dir;
  fs::create_directories(dir.file("zeta"));
  fs::create_directories(dir.file("alpha/portable"));
  fs::create_directories(dir.file("no_manifest"));
  fs::create_directories(dir.file(".hidden"));
  writeFile(dir.file("zeta/manifest.yaml"), "x");
  writeFile(dir.file("alpha/manifest.yaml"), "x");
  writeFile(dir.file(".hidden/manifest.yaml"), "x");
  writeFile(dir.file("manifest.yaml"), "x");
  writeFile(dir.file("stray.txt"), "x");
  EXPECT_EQ(discoverBundles(dir.path()),
            (std::vector<std::string>{dir.file("alpha"), dir.file("zeta")}));
  EXPECT_TRUE(discoverBundles(dir.file("missing")).empty());
}

/// Copies the top-level files of a fixture bundle into `parent/<name>`
/// (writable copies; the portable/ and generic/ folders are left out) and
/// returns the new directory.
std::string copyBundle(const std::string &model, const TempDir &parent,
                       const std::string &name = "") {
  const std::string dst = parent.file(name.empty() ? model : name);
  fs::create_directories(dst);
  for (const auto &entry : fs::directory_iterator(fixtureBundle(model)))
    if (entry.is_regular_file())
      writeFile(dst + "/" + entry.path().filename().string(), readFile(entry.path().string()));
  return dst;
}

/// Rewrites the bundle's weights.safetensors with `order` as argument_order,
/// keeping the tensors named in `keep` (all when empty) and replacing those in
/// `replace`.
void rewriteWeights(const std::string &dir, const std::string &order,
                    const std::vector<std::string> &drop = {},
                    const std::map<std::string, Tensor> &replace = {}) {
  auto file = SafetensorsFile::open(dir + "/weights.safetensors");
  ASSERT_TRUE(file.isOk());
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const std::string &name : file->names()) {
    if (std::find(drop.begin(), drop.end(), name) != drop.end())
      continue;
    auto it = replace.find(name);
    tensors.emplace_back(name, it != replace.end() ? it->second : *file->tensor(name));
  }
  std::map<std::string, std::string> meta;
  if (!order.empty())
    meta["argument_order"] = order;
  ASSERT_TRUE(writeSafetensors(dir + "/weights.safetensors", tensors, meta).isOk());
}

const char *kIrisOrder = R"(["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"])";

TEST(Bundle, CopiedFixtureLoadsUnderAnotherName) {
  TempDir tmp;
  const std::string dir = copyBundle("iris_mlp", tmp, "flowers");
  auto b = loadBundle(dir + "/");
  ASSERT_TRUE(b.isOk()) << b.status().toString();
  EXPECT_EQ(b->name, "flowers");
  EXPECT_EQ(b->batchSizes(), (std::vector<int64_t>{1, 8, 32}));
}

TEST(Bundle, CorruptManifestYaml) {
  TempDir tmp;
  const std::string dir = copyBundle("iris_mlp", tmp);
  writeFile(dir + "/manifest.yaml", "format_version: \"2.0\"\nexecutable_inputs: [{name: x\n");
  auto b = loadBundle(dir);
  ASSERT_FALSE(b.isOk());
  EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(b.status().message().rfind(dir + "/manifest.yaml:3:1: invalid yaml: ", 0), 0u)
      << b.status().message();
}

TEST(Bundle, ManifestMissingField) {
  TempDir tmp;
  const std::string dir = copyBundle("iris_mlp", tmp);
  replaceInFile(dir + "/manifest.yaml",
                "executable_outputs:\n  - {name: \"logits\", dtype: \"f32\", "
                "shape: \"cn\", dims: "
                "{c: 3}}\n",
                "");
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/manifest.yaml:1:1: missing required field 'executable_outputs'");
}

TEST(Bundle, ManifestUnknownDtype) {
  TempDir tmp;
  const std::string dir = copyBundle("iris_mlp", tmp);
  replaceInFile(dir + "/manifest.yaml", "dtype: \"f32\", shape: \"cn\", dims: {c: 4}",
                "dtype: \"float\", shape: \"cn\", dims: {c: 4}");
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/manifest.yaml:5:24: executable_inputs[0].dtype: unknown dtype 'float' "
                    "(expected "
                    "one of f16 f32 f64 bf16 i8 i16 i32 i64 u8 u16 u32 u64 bool)");
}

TEST(Bundle, TruncatedWeights) {
  TempDir tmp;
  const std::string dir = copyBundle("iris_mlp", tmp);
  std::string bytes = readFile(dir + "/weights.safetensors");
  writeFile(dir + "/weights.safetensors", bytes.substr(0, bytes.size() - 10));
  auto b = loadBundle(dir);
  ASSERT_FALSE(b.isOk());
  EXPECT_EQ(b.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(b.status().message().rfind(dir + "/weights.safetensors: tensor '", 0), 0u)
      << b.status().message();
  EXPECT_NE(b.status().message().find("exceed the data buffer"), std::string::npos);
}

TEST(Bundle, ArgumentOrderNamesMissingTensor) {
  TempDir tmp;
  const std::string dir = copyBundle("iris_mlp", tmp);
  rewriteWeights(dir, R"(["fc1.weight", "fc1.bias", "fc3.weight", "fc2.bias"])");
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/weights.safetensors: __metadata__.argument_order[2] "
                    "names 'fc3.weight', "
                    "which is not a tensor in the file");
}

TEST(Bundle, ArgumentOrderMissingOrMalformed) {
  TempDir tmp;
  const std::string dir = copyBundle("iris_mlp", tmp);
  rewriteWeights(dir, "");
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/weights.safetensors: __metadata__.argument_order is "
                    "missing (required when "
                    "the file holds tensors; it has 4 tensors)");
  rewriteWeights(dir, "fc1.weight,fc1.bias");
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/weights.safetensors: __metadata__.argument_order is not "
                    "a JSON list of "
                    "names: fc1.weight,fc1.bias");
  rewriteWeights(dir, R"(["fc1.weight", "fc1.weight"])");
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/weights.safetensors: __metadata__.argument_order[1]: "
                    "'fc1.weight' is "
                    "listed twice");
}

TEST(Bundle, ProgramWithExtraArgument) {
  TempDir tmp;
  const std::string dir = copyBundle("iris_mlp", tmp);
  replaceInFile(dir + "/model.b8.mlir", "%arg4: tensor<3xf32>",
                "%arg4: tensor<3xf32>, %arg5: tensor<3xf32>");
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/model.b8.mlir: main takes 6 arguments but the manifest "
                    "has 1 input and the "
                    "weights file has 4 weights (5 expected)");
}

TEST(Bundle, ProgramWithAMinifloatInputIsRefused) {
  // The executor computes in f8E4M3FN, but a bundle's inputs and outputs can only be the
  // manifest's dtypes, which have no minifloat.
  TempDir tmp;
  const std::string dir = copyBundle("iris_mlp", tmp);
  replaceInFile(dir + "/model.b8.mlir", "%arg0: tensor<8x4xf32>", "%arg0: tensor<8x4xf8E4M3FN>");
  replaceInFile(dir + "/model.b8.mlir", "%0 = stablehlo.dot_general %arg0,",
                "%x = stablehlo.convert %arg0 : (tensor<8x4xf8E4M3FN>) -> tensor<8x4xf32>\n"
                "    %0 = stablehlo.dot_general %x,");
  expectError(
      loadBundle(dir), StatusCode::kInvalidArgument,
      dir + "/model.b8.mlir: argument 0 (input 'features'): type tensor<8x4xf8E4M3FN> does not "
            "match manifest f32[8,4]");
}

TEST(Bundle, WeightsFileMissingAWeight) {
  TempDir tmp;
  const std::string dir = copyBundle("iris_mlp", tmp);
  rewriteWeights(dir, R"(["fc1.weight", "fc1.bias", "fc2.weight"])", {"fc2.bias"});
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/model.b1.mlir: main takes 5 arguments but the manifest "
                    "has 1 input and the "
                    "weights file has 3 weights (4 expected)");
  fs::remove(dir + "/weights.safetensors");
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/model.b1.mlir: main takes 5 arguments but the manifest "
                    "has 1 input and the "
                    "bundle has no weights.safetensors (1 expected)");
}

TEST(Bundle, InputShapeMismatch) {
  TempDir tmp;
  const std::string dir = copyBundle("iris_mlp", tmp);
  replaceInFile(dir + "/manifest.yaml", "dims: {c: 4}", "dims: {c: 5}");
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/model.b1.mlir: argument 0 (input 'features'): type "
                    "tensor<1x4xf32> does not "
                    "match manifest f32[1,5]");
}

TEST(Bundle, InputDtypeMismatch) {
  TempDir tmp;
  const std::string dir = copyBundle("iris_mlp", tmp);
  replaceInFile(dir + "/manifest.yaml", "dtype: \"f32\", shape: \"cn\", dims: {c: 4}",
                "dtype: \"i32\", shape: \"cn\", dims: {c: 4}");
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/model.b1.mlir: argument 0 (input 'features'): type "
                    "tensor<1x4xf32> does not "
                    "match manifest i32[1,4]");
}

TEST(Bundle, WeightShapeMismatch) {
  TempDir tmp;
  const std::string dir = copyBundle("iris_mlp", tmp);
  rewriteWeights(dir, kIrisOrder, {}, {{"fc1.bias", Tensor::zeros(DType::kF32, {17})}});
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/model.b1.mlir: argument 2 (weight 'fc1.bias'): type "
                    "tensor<16xf32> does not "
                    "match weights file f32[17]");
}

TEST(Bundle, OutputMismatch) {
  TempDir tmp;
  const std::string dir = copyBundle("iris_mlp", tmp);
  replaceInFile(dir + "/manifest.yaml", "dims: {c: 3}", "dims: {c: 2}");
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/model.b1.mlir: result 0 (output 'logits'): type "
                    "tensor<1x3xf32> does not "
                    "match manifest f32[1,2]");
  replaceInFile(dir + "/manifest.yaml", "dims: {c: 2}}",
                "dims: {c: 3}}\n  - {name: \"extra\", dtype: \"f32\", shape: \"n\"}");
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/model.b1.mlir: main returns 1 result but the manifest "
                    "has 2 executable "
                    "outputs");
}

TEST(Bundle, MissingProgramFile) {
  TempDir tmp;
  const std::string dir = copyBundle("iris_mlp", tmp);
  fs::remove(dir + "/model.b8.mlir");
  expectError(loadBundle(dir), StatusCode::kNotFound,
              dir + "/model.b8.mlir: missing (batch size 8 is listed in "
                    "batching.compiled_batch_sizes [1, 8, 32])");
}

TEST(Bundle, StrayProgramFileIsReported) {
  TempDir tmp;
  const std::string dir = copyBundle("iris_mlp", tmp);
  writeFile(dir + "/model.b2.mlir", "not even mlir");
  auto b = loadBundle(dir);
  ASSERT_TRUE(b.isOk()) << b.status().toString();
  EXPECT_EQ(b->batchSizes(), (std::vector<int64_t>{1, 8, 32}));
  EXPECT_EQ(b->warnings, (std::vector<std::string>{
                             dir + "/model.b2.mlir: batch size 2 is not in "
                                   "batching.compiled_batch_sizes [1, 8, 32]; not loaded"}));
}

TEST(Bundle, ProgramNameWithLeadingZerosIsNotAProgram) {
  TempDir tmp;
  const std::string dir = copyBundle("iris_mlp", tmp);
  // model.b08.mlir would be a second name for model.b8.mlir's program.
  writeFile(dir + "/model.b08.mlir", readFile(dir + "/model.b8.mlir"));
  writeFile(dir + "/model.b0.mlir", "");
  auto b = loadBundle(dir);
  ASSERT_TRUE(b.isOk()) << b.status().toString();
  EXPECT_EQ(b->programs.at({0, 8}).path, dir + "/model.b8.mlir");
  const std::string forms =
      ": not a program file name (model.b{N}.mlir or model.mlir, numbers in decimal without "
      "leading zeros); not loaded";
  EXPECT_EQ(b->warnings, (std::vector<std::string>{dir + "/model.b0.mlir" + forms,
                                                   dir + "/model.b08.mlir" + forms}));
  // Alone it does not stand for batch size 8.
  fs::remove(dir + "/model.b8.mlir");
  expectError(loadBundle(dir), StatusCode::kNotFound,
              dir + "/model.b8.mlir: missing (batch size 8 is listed in "
                    "batching.compiled_batch_sizes [1, 8, 32])");
}

TEST(Bundle, ProgramThatIsNoRegularFileOrEmptyIsNamedSo) {
  TempDir tmp;
  const std::string dir = copyBundle("iris_mlp", tmp);
  fs::remove(dir + "/model.b8.mlir");
  fs::create_directory(dir + "/model.b8.mlir");
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/model.b8.mlir: is a directory, not a file");
  fs::remove(dir + "/model.b8.mlir");
  fs::create_symlink("/dev/zero", dir + "/model.b8.mlir");
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/model.b8.mlir: is not a regular file");
  fs::remove(dir + "/model.b8.mlir");
  writeFile(dir + "/model.b8.mlir", "");
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/model.b8.mlir: is empty (expected StableHLO text or a portable artifact)");
}

TEST(Bundle, AStaticModelMlirUnderABatchAxisIsRefused) {
  // digits_cnn's inputs have a batch axis (n) and compiled sizes [1, 4, 8]: a static
  // model.mlir could only run one batch size, and the scheduler would have none to split to.
  TempDir tmp;
  const std::string dir = copyBundle("digits_cnn", tmp);
  fs::rename(dir + "/model.b4.mlir", dir + "/model.mlir");
  fs::remove(dir + "/model.b1.mlir");
  fs::remove(dir + "/model.b8.mlir");
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/model.mlir: main takes static inputs, but the manifest's inputs have a "
                    "batch axis (letter n; batching.compiled_batch_sizes [1, 4, 8]): export it "
                    "with a symbolic batch axis (a shape-polymorphic model.mlir) or as one "
                    "model.b{N}.mlir per compiled batch size");
}

TEST(Bundle, UnbatchedSingleProgram) {
  TempDir tmp;
  const std::string dir = copyBundle("op_zoo", tmp);
  fs::rename(dir + "/model.b1.mlir", dir + "/model.mlir");
  auto b = loadBundle(dir);
  ASSERT_TRUE(b.isOk()) << b.status().toString();
  EXPECT_TRUE(b->unbatched());
  EXPECT_EQ(b->batchSizes(), (std::vector<int64_t>{0}));
  EXPECT_EQ(b->programs.at({0, 0}).path, dir + "/model.mlir");

  writeFile(dir + "/model.b1.mlir", readFile(dir + "/model.mlir"));
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + ": both model.mlir and model.b1.mlir exist (use one "
                    "model.mlir or one "
                    "model.b{N}.mlir per compiled batch size)");
}

TEST(Bundle, NoProgramAtAll) {
  TempDir tmp;
  const std::string dir = copyBundle("tf32_algo", tmp);
  fs::remove(dir + "/model.b1.mlir");
  fs::remove(dir + "/model.b4.mlir");
  expectError(loadBundle(dir), StatusCode::kNotFound,
              dir + ": no program: expected model.mlir or model.b{N}.mlir for "
                    "batching.compiled_batch_sizes [1, 4]");
}

TEST(Bundle, UnsupportedFeaturesAreRefused) {
  TempDir tmp;
  const std::string dir = copyBundle("iris_mlp", tmp);
  writeFile(dir + "/model.jl", "register_model(\"iris_mlp\")\n");
  expectError(loadBundle(dir), StatusCode::kUnimplemented,
              dir + "/model.jl: Julia pre/post-processing hooks are not run by this server; "
                    "port them to model.py (docs/hooks.md) or remove model.jl to serve the "
                    "program as exported");
  fs::remove(dir + "/model.jl");
  writeFile(dir + "/manifest.yaml", R"(format_version: "2.0"
kind: meta
client_inputs: [{name: t, dtype: u8, shape: "n"}]
client_outputs: [{name: t, dtype: u8, shape: "n"}]
meta: {calls: [other]}
)");
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/manifest.yaml: kind: meta needs a model.py that calls register_meta_model "
                    "(docs/hooks.md)");
  writeFile(dir + "/model.py", "register_meta_model('m', run=lambda inputs, call: inputs)\n");
  expectError(loadBundle(dir), StatusCode::kInvalidArgument,
              dir + "/weights.safetensors: a meta bundle has no weights of its own");
  fs::remove(dir + "/weights.safetensors");
  Result<Bundle> meta = loadBundle(dir);
  ASSERT_TRUE(meta.isOk()) << meta.status().toString();
  EXPECT_TRUE(meta->programs.empty());
  EXPECT_EQ(meta->manifest.meta_calls, (std::vector<std::string>{"other"}));
}

TEST(Bundle, MissingDirectoryOrManifest) {
  TempDir tmp;
  expectError(loadBundle(tmp.file("nope")), StatusCode::kNotFound,
              tmp.file("nope") + ": not a bundle directory");
  fs::create_directories(tmp.file("empty"));
  expectError(loadBundle(tmp.file("empty")), StatusCode::kNotFound,
              tmp.file("empty") + "/manifest.yaml: cannot open: No such file or directory");
  // A directory where the manifest should be: an error naming it, not an exception.
  fs::create_directories(tmp.file("dir_manifest") + "/manifest.yaml");
  expectError(loadBundle(tmp.file("dir_manifest")), StatusCode::kInvalidArgument,
              tmp.file("dir_manifest") + "/manifest.yaml: is a directory, not a file");
}

} // namespace
} // namespace rs::bundle
