//===- test/tools/bundle_inspect_test.cc - `reactant-server bundle inspect` ===//
//
// The real binary's exact output for iris_mlp as StableHLO text (the fixture) and as
// portable artifacts (a copy whose programs are portable/model.b{N}.mlirbc), for a single
// file, and for an artifact cut short (an error line in place of its block, exit 1, the
// other programs still described); the dynamic axes of a shape-polymorphic model.mlir;
// usage errors exit 2.
//
//===----------------------------------------------------------------------===//
#include "tools_test_util.h"

#include <gtest/gtest.h>

#include <fstream>

namespace rs::testing {
namespace {

const std::string kPortable =
    "portable artifact (VHLO 1.18.0, bytecode 6, producer StableHLO_v1.18.0)";

/// The manifest lines of iris_mlp's block.
std::string irisHead(const fs::path &dir) {
  return "bundle " + dir.string() +
         "\n"
         "  name: iris_mlp\n"
         "  inputs: features f32[-1,4]\n"
         "  outputs: logits f32[-1,3]\n"
         "  batch sizes: 1, 8, 32\n"
         "  weights: 4\n";
}

/// One program's block: iris_mlp's main at batch size `batch`.
std::string irisProgram(const std::string &indent, const std::string &label, int batch,
                        const std::string &format, int64_t bytes, int ops) {
  const std::string b = std::to_string(batch);
  return indent + "program " + label + "\n" + indent + "  format: " + format + "\n" + indent +
         "  size: " + std::to_string(bytes) + " bytes\n" + indent + "  main: (tensor<" + b +
         "x4xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16x3xf32>, tensor<3xf32>) -> "
         "(tensor<" +
         b + "x3xf32>)\n" + indent + "  functions: 1\n" + indent + "  ops: " + std::to_string(ops) +
         "\n";
}

TEST(BundleInspect, IrisMlpAsText) {
  const fs::path dir = kBundles / "iris_mlp";
  RunResult r = runServer({"bundle", "inspect", dir.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // ops: sdy.mesh, func.func, the body's 7 (b1) or 9 (b8, b32: a reshape more), return.
  EXPECT_EQ(r.out, irisHead(dir) + irisProgram("  ", "model.b1.mlir", 1, "text", 1302, 10) +
                       irisProgram("  ", "model.b32.mlir", 32, "text", 1502, 12) +
                       irisProgram("  ", "model.b8.mlir", 8, "text", 1490, 12));
}

TEST(BundleInspect, IrisMlpAsPortableArtifacts) {
  TempDir tmp;
  const fs::path dir = makePortableBundle("iris_mlp", tmp.path());
  // A trailing '/' names the same bundle.
  RunResult r = runServer({"bundle", "inspect", dir.string() + "/"});
  EXPECT_EQ(r.status, 0) << r.err;
  // jax.export writes no sdy.mesh: one op fewer than the text.
  EXPECT_EQ(r.out, irisHead(dir) + irisProgram("  ", "model.b1.mlir", 1, kPortable, 1054, 9) +
                       irisProgram("  ", "model.b32.mlir", 32, kPortable, 1109, 11) +
                       irisProgram("  ", "model.b8.mlir", 8, kPortable, 1109, 11));

  const fs::path bc = kBundles / "iris_mlp/portable/model.b8.mlirbc";
  const fs::path text = kBundles / "iris_mlp/model.b1.mlir";
  r = runServer({"bundle", "inspect", bc.string(), text.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, irisProgram("", bc.string(), 8, kPortable, 1109, 11) +
                       irisProgram("", text.string(), 1, "text", 1302, 10));
}

TEST(BundleInspect, ATruncatedArtifactIsAnErrorLineAndTheRestIsDescribed) {
  TempDir tmp;
  const fs::path dir = makePortableBundle("iris_mlp", tmp.path());
  const fs::path cut = dir / "model.b8.mlir";
  const std::string bytes = readFile(cut);
  ASSERT_EQ(bytes.size(), 1109u);
  std::ofstream(cut, std::ios::binary | std::ios::trunc) << bytes.substr(0, 554);
  const fs::path missing = tmp.path() / "missing.mlirbc";
  RunResult r = runServer({"bundle", "inspect", dir.string(), missing.string()});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, irisHead(dir) + irisProgram("  ", "model.b1.mlir", 1, kPortable, 1054, 9) +
                       irisProgram("  ", "model.b32.mlir", 32, kPortable, 1109, 11) + "error " +
                       cut.string() +
                       ": invalid portable artifact: byte 521 (section index section): section "
                       "IR of 113 bytes runs past the end of the file (33 bytes left)\n"
                       "error " +
                       missing.string() + ": cannot open: No such file or directory\n");
}

TEST(BundleInspect, ABrokenManifestOrWeightsFileIsAnErrorLine) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "iris_mlp";
  fs::create_directories(dir);
  fs::copy_file(kBundles / "iris_mlp/model.b1.mlir", dir / "model.b1.mlir");
  std::ofstream(dir / "manifest.yaml") << "format_version: \"2.0\"\nbogus: 1\n";
  std::ofstream(dir / "weights.safetensors") << "short";
  RunResult r = runServer({"bundle", "inspect", dir.string()});
  EXPECT_EQ(r.status, 1);
  const std::vector<std::string> out = lines(r.out);
  ASSERT_EQ(out.size(), 9u) << r.out;
  EXPECT_EQ(out[0], "bundle " + dir.string());
  EXPECT_TRUE(out[1].starts_with("error " + (dir / "manifest.yaml").string() + ": ")) << out[1];
  EXPECT_NE(out[1].find("'bogus'"), std::string::npos) << out[1];
  EXPECT_TRUE(out[2].starts_with("error " + (dir / "weights.safetensors").string() + ": "))
      << out[2];
  EXPECT_EQ(out[3], "  program model.b1.mlir");
  // A directory without programs.
  const fs::path empty = tmp.path() / "empty";
  fs::create_directories(empty);
  r = runServer({"bundle", "inspect", empty.string()});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(lines(r.out).back(), "error " + empty.string() + ": no program file (model*.mlir)");
}

TEST(BundleInspect, AMultiShapeBundleListsItsShapeVariants) {
  const fs::path dir = fs::path(RS_SOURCE_DIR) / "test/data/bundles/text_encoder_ms";
  RunResult r = runServer({"bundle", "inspect", dir.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> out = lines(r.out);
  ASSERT_GE(out.size(), 10u) << r.out;
  EXPECT_EQ(std::vector<std::string>(out.begin(), out.begin() + 10),
            (std::vector<std::string>{
                "bundle " + dir.string(),
                "  name: text_encoder_ms",
                "  inputs: input_ids i32[-1,-1], attention_mask i32[-1,-1]",
                "  outputs: hidden f32[-1,-1,16], pooled f32[-1,16], logits f32[-1,4]",
                "  batch sizes: 1, 4",
                "  shape variants: 2",
                "    v0 {s=8}: input_ids i32[-1,8], attention_mask i32[-1,8]",
                "    v1 {s=16}: input_ids i32[-1,16], attention_mask i32[-1,16]",
                "  weights: 10",
                "  program model.v0.b1.mlir",
            }));
}

TEST(BundleInspect, APolymorphicProgramListsItsDynamicAxes) {
  const fs::path dir = fs::path(RS_SOURCE_DIR) / "test/data/bundles/encoder_poly";
  RunResult r = runServer({"bundle", "inspect", dir.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> out = lines(r.out);
  ASSERT_GE(out.size(), 15u) << r.out;
  EXPECT_EQ(out[9], "  program model.mlir");
  EXPECT_EQ(out[13], "    dynamic axes: input 'x' axis 0 (n), input 'x' axis 1 (s) "
                     "(shape-polymorphic: refined per compiled batch size and shape variant at "
                     "load)");
  // A lone file has no manifest to name the inputs.
  RunResult file = runServer({"bundle", "inspect", (dir / "model.mlir").string()});
  EXPECT_EQ(file.status, 0) << file.err;
  EXPECT_NE(file.out.find("\n  dynamic axes: argument 0 axis 0, argument 0 axis 1 ("),
            std::string::npos)
      << file.out;
}

TEST(BundleInspect, HookedAndMetaBundlesShowTheirWireTensorsAndCalls) {
  const fs::path hooks = fs::path(RS_SOURCE_DIR) / "examples" / "hooks_repo";
  RunResult meta = runServer({"bundle", "inspect", (hooks / "digits_top3").string()});
  EXPECT_EQ(meta.status, 0) << meta.out << meta.err;
  EXPECT_EQ(meta.out, "bundle " + (hooks / "digits_top3").string() +
                          "\n"
                          "  name: digits_top3\n"
                          "  inputs: none\n"
                          "  outputs: none\n"
                          "  hooks: model.py (docs/hooks.md)\n"
                          "  client inputs: pixels u8[-1,8,8,1]\n"
                          "  client outputs: classes i64[-1,3], scores f32[-1,3]\n"
                          "  kind: meta, calls: [digits_probs]\n"
                          "  batch sizes: none\n"
                          "  weights: none\n");
  RunResult hooked = runServer({"bundle", "inspect", (hooks / "digits_softmax").string()});
  EXPECT_EQ(hooked.status, 0) << hooked.out << hooked.err;
  EXPECT_NE(hooked.out.find("  hooks: model.py (docs/hooks.md)\n"
                            "  client inputs: pixels u8[-1,8,8,1]\n"
                            "  client outputs: probs f32[-1,10], label i64[-1], label_name "
                            "bytes[-1]\n"
                            "  batch sizes: 1, 4, 8\n"),
            std::string::npos)
      << hooked.out;
  EXPECT_NE(hooked.out.find("  program model.b8.mlir\n"), std::string::npos);
}

TEST(BundleInspect, UsageErrorsExitTwo) {
  EXPECT_EQ(runServer({"bundle", "inspect"}).status, 2);
  EXPECT_EQ(runServer({"bundle", "inspect", "--bogus", "x"}).status, 2);
  EXPECT_EQ(runServer({"bundle"}).status, 2);
  EXPECT_EQ(runServer({"bundle", "inspect", "--help"}).status, 0);
}

} // namespace
} // namespace rs::testing
