//===- test/bundle/manifest_test.cc - manifest.yaml parsing and validation -===//
#include "bundle/manifest.h"

#include "test_util.h"

#include <gtest/gtest.h>

namespace rs::bundle {
namespace {

constexpr const char *kDigits = R"(format_version: "2.0"
name: whatever
description: "digits"
executable_inputs:
  - {name: "image", dtype: "f32", shape: "edcn", dims: {c: 8, d: 8, e: 1}}
executable_outputs:
  - {name: "logits", dtype: "f32", shape: "cn", dims: {c: 10}}
batching: {compiled_batch_sizes: [8, 1, 4]}
provenance: {exporter: "jax 0.11.2", nested: {a: 1, b: [x, y]}}
)";

TEST(Manifest, ParsesDigitsManifest) {
  auto m = parseManifest(kDigits, "manifest.yaml");
  ASSERT_TRUE(m.isOk()) << m.status().toString();
  EXPECT_EQ(m->format_version, "2.0");
  EXPECT_EQ(m->name, "whatever");
  EXPECT_EQ(m->description, "digits");
  EXPECT_EQ(m->kind, BundleKind::kModel);
  EXPECT_EQ(m->compiled_batch_sizes, (std::vector<int64_t>{1, 4, 8}));
  EXPECT_EQ(m->maxBatchSize(), 8);
  ASSERT_TRUE(m->batched());
  EXPECT_EQ(*m->input_batch_dim, 0);
  ASSERT_EQ(m->executable_inputs.size(), 1u);
  const TensorSpec &image = m->executable_inputs[0];
  EXPECT_EQ(image.name, "image");
  EXPECT_EQ(image.dtype, DType::kF32);
  EXPECT_EQ(image.letters, "edcn");
  EXPECT_EQ(image.rank(), 4);
  EXPECT_EQ(image.batch_axis, 0);
  EXPECT_EQ(image.axes[0].letter, 'n');
  EXPECT_EQ(image.axes[0].kind, DimKind::kBatch);
  EXPECT_EQ(image.axes[3].letter, 'e');
  EXPECT_EQ(image.wireShape(), (Shape{-1, 8, 8, 1}));
  EXPECT_EQ(image.shapeForBatch(4), (Shape{4, 8, 8, 1}));
  EXPECT_EQ(image.toString(), "f32[-1,8,8,1]");
  EXPECT_FALSE(image.hasVariableDims());
  EXPECT_EQ(m->executable_outputs[0].shapeForBatch(8), (Shape{8, 10}));
  EXPECT_EQ(m->provenance.at("exporter"), "jax 0.11.2");
  EXPECT_EQ(m->provenance.at("nested"), "{a: 1, b: [x, y]}");
}

TEST(Manifest, BatchAxisNotFirst) {
  // Column-major "nc" reversed is row-major [c, n]: batch axis 1.
  auto m = parseManifest(R"(format_version: 2
executable_inputs: [{name: x, dtype: i32, shape: "bc", dims: {c: 3}}]
executable_outputs: [{name: y, dtype: bool, shape: "cb", dims: {c: 2}}]
batching: {compiled_batch_sizes: [2]}
)",
                         "m.yaml");
  ASSERT_TRUE(m.isOk()) << m.status().toString();
  EXPECT_EQ(m->format_version, "2");
  EXPECT_EQ(*m->input_batch_dim, 1);
  EXPECT_EQ(m->executable_inputs[0].shapeForBatch(2), (Shape{3, 2}));
  EXPECT_EQ(m->executable_outputs[0].batch_axis, 0);
  EXPECT_EQ(m->executable_outputs[0].dtype, DType::kBool);
}

TEST(Manifest, UnbatchedScalarAndNoBatching) {
  auto m = parseManifest(R"(format_version: "2.0"
executable_inputs:
  - {name: "x", dtype: "f32", shape: "dc", dims: {c: 4, d: 8}}
  - {name: "idx", dtype: "i32", shape: "", dims: {}}
executable_outputs:
  - {name: "y", dtype: "u8", shape: "c", dims: {c: 4}}
)",
                         "m.yaml");
  ASSERT_TRUE(m.isOk()) << m.status().toString();
  EXPECT_FALSE(m->batched());
  EXPECT_TRUE(m->compiled_batch_sizes.empty());
  EXPECT_EQ(m->executable_inputs[0].shapeForBatch(1), (Shape{4, 8}));
  EXPECT_EQ(m->executable_inputs[1].shapeForBatch(1), Shape{});
  EXPECT_EQ(m->executable_inputs[1].rank(), 0);
}

TEST(Manifest, VariableAxesAndInputShapes) {
  auto m = parseManifest(R"(format_version: "2.0"
executable_inputs:
  - {name: ids, dtype: i32, shape: "sn", dims: {s: -1}}
  - {name: mask, dtype: i32, shape: "sn", dims: {s: -1}}
executable_outputs:
  - {name: out, dtype: f32, shape: "hsn", dims: {h: 64, s: -1}}
batching: {compiled_batch_sizes: [1, 4]}
input_shapes:
  - {s: 16}
  - {s: 128}
)",
                         "m.yaml");
  ASSERT_TRUE(m.isOk()) << m.status().toString();
  ASSERT_EQ(m->input_shapes.size(), 2u);
  EXPECT_EQ(m->input_shapes[1].at('s'), 128);
  const TensorSpec &ids = m->executable_inputs[0];
  EXPECT_TRUE(ids.hasVariableDims());
  EXPECT_EQ(ids.wireShape(), (Shape{-1, -1}));
  EXPECT_EQ(ids.shapeForBatch(4), (Shape{4, -1}));
  EXPECT_EQ(ids.shapeForBatch(4, m->input_shapes[0]), (Shape{4, 16}));
  EXPECT_EQ(m->executable_outputs[0].shapeForBatch(1, m->input_shapes[1]), (Shape{1, 128, 64}));
}

TEST(Manifest, MetaBundleParses) {
  auto m = parseManifest(R"(format_version: "2.0"
kind: meta
client_inputs: [{name: text, dtype: u8, shape: "ln", dims: {l: -1}}]
client_outputs: [{name: label, dtype: i32, shape: "n"}]
meta: {calls: [encoder, head]}
)",
                         "m.yaml", "pipeline");
  ASSERT_TRUE(m.isOk()) << m.status().toString();
  EXPECT_EQ(m->kind, BundleKind::kMeta);
  EXPECT_EQ(m->meta_calls, (std::vector<std::string>{"encoder", "head"}));
  EXPECT_TRUE(m->executable_inputs.empty());
  EXPECT_EQ(m->client_outputs[0].wireShape(), (Shape{-1}));
}

TEST(Manifest, ClientSpecsParseWithHooks) {
  auto m = parseManifest(R"(format_version: "2.0"
executable_inputs: [{name: image, dtype: f32, shape: "cn", dims: {c: 4}}]
executable_outputs: [{name: logits, dtype: f32, shape: "cn", dims: {c: 3}}]
client_inputs: [{name: text, dtype: bytes, shape: "n"}]
client_outputs: [{name: label, dtype: bytes, shape: "n"}, {name: score, dtype: f32, shape: "n"}]
)",
                         "m.yaml", "classifier", /*has_hooks=*/true);
  ASSERT_TRUE(m.isOk()) << m.status().toString();
  EXPECT_TRUE(m->client_inputs[0].bytes);
  EXPECT_EQ(m->client_inputs[0].dtype, DType::kInvalid);
  EXPECT_EQ(m->client_inputs[0].toString(), "bytes[-1]");
  EXPECT_EQ(m->wireInputs()[0].name, "text");
  EXPECT_EQ(m->wireOutputs()[1].toString(), "f32[-1]");
  EXPECT_FALSE(m->executable_inputs[0].bytes);
}

struct BadCase {
  const char *label;
  std::string yaml;
  const char *message; // the whole message after "m.yaml"
  StatusCode code = StatusCode::kInvalidArgument;
};

const std::string kInputs =
    "executable_inputs: [{name: x, dtype: f32, shape: \"cn\", dims: {c: 4}}]\n";
const std::string kOutputs =
    "executable_outputs: [{name: y, dtype: f32, shape: \"cn\", dims: {c: 3}}]\n";
const std::string kHead = "format_version: \"2.0\"\n";

std::vector<BadCase> badCases() {
  return {
      {"yaml syntax", kHead + "executable_inputs: [{name: x\n", ":3:1: invalid yaml: "},
      {"not a map", "- 1\n- 2\n", ":1:1: expected a map at the top level, got a list"},
      {"missing format_version", kInputs + kOutputs,
       ":1:1: missing required field 'format_version'"},
      {"bad format_version", "format_version: \"1.0\"\n" + kInputs + kOutputs,
       ":1:1: format_version: unsupported version '1.0' (expected \"2.0\")"},
      {"unknown top-level key", kHead + kInputs + kOutputs + "batchng: {}\n",
       ":4:1: unknown key 'batchng'"},
      {"duplicate top-level key", kHead + kInputs + kOutputs + "description: a\ndescription: b\n",
       ":5:1: duplicate key 'description'"},
      {"missing inputs", kHead + kOutputs, ":1:1: missing required field 'executable_inputs'"},
      {"missing outputs", kHead + kInputs, ":1:1: missing required field 'executable_outputs'"},
      {"bad kind", kHead + "kind: pipeline\n" + kInputs + kOutputs,
       ":2:1: kind: unknown kind 'pipeline' (expected model or meta)"},
      {"spec not a map", kHead + "executable_inputs: [x]\n" + kOutputs,
       ":2:21: executable_inputs[0]: expected a tensor spec map {name, dtype, shape, dims}, got a "
       "scalar"},
      {"spec missing dtype",
       kHead + "executable_inputs: [{name: x, shape: \"c\", dims: {c: 4}}]\n" + kOutputs,
       ":2:21: executable_inputs[0]: missing required field 'dtype'"},
      {"spec unknown key",
       kHead + "executable_inputs: [{name: x, dtype: f32, shape: \"c\", dims: {c: 4}, dim: 1}]\n" +
           kOutputs,
       ":2:69: unknown key 'executable_inputs[0].dim'"},
      {"unknown dtype",
       kHead + kInputs +
           "executable_outputs: [{name: y, dtype: float32, shape: \"c\", dims: {c: 3}}]\n",
       ":3:32: executable_outputs[0].dtype: unknown dtype 'float32' (expected one of f16 f32 f64 "
       "bf16 "
       "i8 i16 i32 i64 u8 u16 u32 u64 bool)"},
      {"fp8 dtype",
       kHead + kInputs +
           "executable_outputs: [{name: y, dtype: f8_e4m3, shape: \"c\", dims: {c: 3}}]\n",
       ":3:32: executable_outputs[0].dtype: dtype 'f8_e4m3' is not supported by this server",
       StatusCode::kUnimplemented},
      {"letter not in shape",
       kHead +
           "executable_inputs: [{name: x, dtype: f32, shape: \"edcn\", dims: {c: 8, d: 8, e: 1, q: "
           "2}}]\n" +
           kOutputs,
       ":2:58: executable_inputs[0].dims: letter 'q' is not in shape 'edcn'"},
      {"letter without size",
       kHead + "executable_inputs: [{name: x, dtype: f32, shape: \"dcn\", dims: {c: 8}}]\n" +
           kOutputs,
       ":2:57: executable_inputs[0].dims: letter 'd' of shape 'dcn' has no size"},
      {"batch letter in dims",
       kHead + "executable_inputs: [{name: x, dtype: f32, shape: \"cn\", dims: {c: 8, n: 4}}]\n" +
           kOutputs,
       ":2:56: executable_inputs[0].dims: letter 'n' is a batch marker and cannot have a size"},
      {"two batch markers",
       kHead + "executable_inputs: [{name: x, dtype: f32, shape: \"bn\"}]\n" + kOutputs,
       ":2:43: executable_inputs[0].shape: 'bn' has two batch markers 'b' and 'n'"},
      {"repeated letter",
       kHead + "executable_inputs: [{name: x, dtype: f32, shape: \"ccn\", dims: {c: 2}}]\n" +
           kOutputs,
       ":2:43: executable_inputs[0].shape: letter 'c' appears twice in 'ccn'"},
      {"non-letter",
       kHead + "executable_inputs: [{name: x, dtype: f32, shape: \"c1n\", dims: {c: 2}}]\n" +
           kOutputs,
       ":2:43: executable_inputs[0].shape: 'c1n' must be ASCII letters, one per axis"},
      {"zero dim",
       kHead + "executable_inputs: [{name: x, dtype: f32, shape: \"cn\", dims: {c: 0}}]\n" +
           kOutputs,
       ":2:63: executable_inputs[0].dims.c: size 0 must be > 0 or -1 (variable)"},
      {"non-integer dim",
       kHead + "executable_inputs: [{name: x, dtype: f32, shape: \"cn\", dims: {c: 2.5}}]\n" +
           kOutputs,
       ":2:63: executable_inputs[0].dims.c: expected an integer, got '2.5'"},
      {"duplicate names",
       kHead + kInputs +
           "executable_outputs: [{name: y, dtype: f32, shape: \"n\"}, {name: y, dtype: f32, shape: "
           "\"n\"}]\n",
       ":3:58: executable_outputs[1].name: duplicate name 'y' (also executable_outputs[0])"},
      {"empty name",
       kHead + "executable_inputs: [{name: \"\", dtype: f32, shape: \"n\"}]\n" + kOutputs,
       ":2:22: executable_inputs[0].name: must not be empty"},
      {"zero batch size", kHead + kInputs + kOutputs + "batching: {compiled_batch_sizes: [1, 0]}\n",
       ":4:38: batching.compiled_batch_sizes[1]: batch size 0 must be > 0"},
      {"duplicate batch size",
       kHead + kInputs + kOutputs + "batching: {compiled_batch_sizes: [4, 4]}\n",
       ":4:38: batching.compiled_batch_sizes[1]: duplicate batch size 4"},
      {"batching unknown key", kHead + kInputs + kOutputs + "batching: {sizes: [4]}\n",
       ":4:12: unknown key 'batching.sizes'"},
      {"mixed batchability",
       kHead +
           "executable_inputs: [{name: x, dtype: f32, shape: \"cn\", dims: {c: 4}}, "
           "{name: z, dtype: f32, shape: \"c\", dims: {c: 4}}]\n" +
           kOutputs,
       ":2:71: executable_inputs[1]: 'z' has no batch axis but executable_inputs[0] 'x' does "
       "(batchability is all-or-nothing)"},
      {"sizes without batch axis",
       kHead + "executable_inputs: [{name: x, dtype: f32, shape: \"c\", dims: {c: 4}}]\n" +
           kOutputs + "batching: {compiled_batch_sizes: [1, 8]}\n",
       ":4:12: batching.compiled_batch_sizes: 2 compiled batch sizes need a batch axis (n or b) on "
       "the "
       "executable inputs"},
      {"client specs on a model",
       kHead + kInputs + kOutputs + "client_inputs: [{name: t, dtype: u8, shape: \"n\"}]\n",
       ":4:1: client_inputs: only allowed with model.py pre/post-processing hooks (the bundle has "
       "no model.py; docs/hooks.md)"},
      {"bytes on an executable input",
       kHead + "executable_inputs: [{name: x, dtype: bytes, shape: \"n\"}]\n" + kOutputs,
       ":2:31: executable_inputs[0].dtype: dtype 'bytes' is only allowed in client_inputs and "
       "client_outputs (an executable takes numbers)"},
      {"input_shapes missing",
       kHead + "executable_inputs: [{name: x, dtype: f32, shape: \"sn\", dims: {s: -1}}]\n" +
           kOutputs,
       ":1:1: input_shapes: required: executable inputs have variable (-1) axes 's'"},
      {"input_shapes non-variable letter",
       kHead + "executable_inputs: [{name: x, dtype: f32, shape: \"csn\", dims: {s: -1, c: 2}}]\n" +
           kOutputs + "input_shapes: [{s: 4, c: 2}]\n",
       ":4:16: input_shapes[0]: letter 'c' is not a variable (-1) axis of the executable inputs"},
      {"input_shapes uncovered letter",
       kHead +
           "executable_inputs: [{name: x, dtype: f32, shape: \"tsn\", dims: {s: -1, t: -1}}]\n" +
           kOutputs + "input_shapes: [{s: 4}]\n",
       ":4:16: input_shapes[0]: variable letter 't' has no size"},
      {"input_shapes duplicate",
       kHead + "executable_inputs: [{name: x, dtype: f32, shape: \"sn\", dims: {s: -1}}]\n" +
           kOutputs + "input_shapes: [{s: 4}, {s: 8}, {s: 4}]\n",
       ":4:32: input_shapes[2]: duplicates input_shapes[0]"},
      {"input_shapes empty",
       kHead + "executable_inputs: [{name: x, dtype: f32, shape: \"sn\", dims: {s: -1}}]\n" +
           kOutputs + "input_shapes: []\n",
       ":4:1: input_shapes: must list at least one shape variant, got an empty list"},
      {"input_shapes without variables", kHead + kInputs + kOutputs + "input_shapes: [{s: 4}]\n",
       ":4:1: input_shapes: given but no executable input has a variable (-1) axis"},
      {"meta on a model", kHead + kInputs + kOutputs + "meta: {calls: [a]}\n",
       ":4:1: meta: only allowed with kind: meta"},
      {"meta without calls block",
       kHead + "kind: meta\nclient_inputs: [{name: t, dtype: u8, shape: \"n\"}]\n"
               "client_outputs: [{name: t, dtype: u8, shape: \"n\"}]\n",
       ":1:1: meta: required for kind: meta"},
      {"meta calls itself",
       kHead + "kind: meta\nclient_inputs: [{name: t, dtype: u8, shape: \"n\"}]\n"
               "client_outputs: [{name: t, dtype: u8, shape: \"n\"}]\nmeta: {calls: [a, self]}\n",
       ":5:19: meta.calls[1]: meta model 'self' cannot call itself"},
      {"meta duplicate call",
       kHead + "kind: meta\nclient_inputs: [{name: t, dtype: u8, shape: \"n\"}]\n"
               "client_outputs: [{name: t, dtype: u8, shape: \"n\"}]\nmeta: {calls: [a, a]}\n",
       ":5:19: meta.calls[1]: duplicate model 'a'"},
      {"meta without client outputs",
       kHead +
           "kind: meta\nclient_inputs: [{name: t, dtype: u8, shape: \"n\"}]\nmeta: {calls: []}\n",
       ":1:1: client_outputs: required and non-empty for kind: meta"},
      {"no outputs", kHead + kInputs + "executable_outputs:\n",
       ":3:1: executable_outputs: must list at least one output (the program's results), got none"},
      {"provenance not a map", kHead + kInputs + kOutputs + "provenance: [a]\n",
       ":4:1: provenance: expected a map, got a list"},
  };
}

TEST(Manifest, InvalidManifestsNameTheField) {
  for (const BadCase &c : badCases()) {
    SCOPED_TRACE(c.label);
    auto m = parseManifest(c.yaml, "m.yaml", "self");
    ASSERT_FALSE(m.isOk());
    EXPECT_EQ(m.status().code(), c.code) << m.status().toString();
    const std::string &msg = m.status().message();
    if (std::string_view(c.message).find("invalid yaml") != std::string_view::npos)
      EXPECT_EQ(msg.rfind(std::string("m.yaml") + c.message, 0), 0u) << msg;
    else
      EXPECT_EQ(msg, std::string("m.yaml") + c.message);
  }
}

TEST(Manifest, LoadsEveryFixtureManifest) {
  for (const char *model : {"digits_cnn", "iris_mlp", "tiny_bert", "resnet_mini", "op_zoo",
                            "tf32_algo", "bert_bench", "resnet_bench"}) {
    SCOPED_TRACE(model);
    auto m = loadManifest(testing::fixtureBundle(model) + "/manifest.yaml", model);
    ASSERT_TRUE(m.isOk()) << m.status().toString();
    EXPECT_FALSE(m->executable_inputs.empty());
    EXPECT_FALSE(m->executable_outputs.empty());
    EXPECT_FALSE(m->compiled_batch_sizes.empty());
  }
  auto bert = loadManifest(testing::fixtureBundle("tiny_bert") + "/manifest.yaml");
  ASSERT_TRUE(bert.isOk());
  EXPECT_EQ(bert->compiled_batch_sizes, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(bert->executable_inputs[1].name, "attention_mask");
  EXPECT_EQ(bert->executable_inputs[1].dtype, DType::kI32);
  EXPECT_EQ(bert->executable_inputs[1].shapeForBatch(4), (Shape{4, 16}));
  auto zoo = loadManifest(testing::fixtureBundle("op_zoo") + "/manifest.yaml");
  ASSERT_TRUE(zoo.isOk());
  EXPECT_FALSE(zoo->batched());
  EXPECT_EQ(zoo->executable_outputs.size(), 12u);
}

TEST(Manifest, MissingFileIsNotFound) {
  auto m = loadManifest("/nonexistent/manifest.yaml");
  ASSERT_FALSE(m.isOk());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(m.status().message(),
            "/nonexistent/manifest.yaml: cannot open: No such file or directory");
}

} // namespace
} // namespace rs::bundle
