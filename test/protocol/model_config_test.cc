//===- test/protocol/model_config_test.cc - Triton's model configuration codec ===//
//
// protocol/model_config.h on its own: the config data type names, the message and JSON of
// a model that does not batch (max_batch_size 0, whole shapes, no dynamic batching) and of
// one on a GPU (KIND_GPU with its ordinal), and the version rule's messages. The batching
// case on a real bundle is test/e2e/triton_extensions_test.cc.
//
//===----------------------------------------------------------------------===//
#include "protocol/model_config.h"

#include "protocol/proto/model_config.pb.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace rs::protocol {
namespace {

TEST(ModelConfigTest, DataTypeNames) {
  EXPECT_EQ(configDataTypeName(DType::kF32), "TYPE_FP32");
  EXPECT_EQ(configDataTypeName(DType::kBF16), "TYPE_BF16");
  EXPECT_EQ(configDataTypeName(DType::kI64), "TYPE_INT64");
  EXPECT_EQ(configDataTypeName(DType::kU8), "TYPE_UINT8");
  EXPECT_EQ(configDataTypeName(DType::kBool), "TYPE_BOOL");
  EXPECT_EQ(configDataTypeName(DType::kComplex64), "TYPE_INVALID");
  EXPECT_EQ(configDataTypeName(DType::kInvalid), "TYPE_INVALID");
}

ModelConfiguration unbatchedOnGpu() {
  ModelConfiguration c;
  c.name = "m";
  c.platform = "reactant_stablehlo";
  c.backend = "reactant";
  c.inputs = {{"x", DType::kI64, {3, -1}}};
  c.outputs = {{"y", DType::kF16, {3}}};
  c.instance_kind = InstanceKind::kGpu;
  c.device_ordinal = 3;
  return c;
}

TEST(ModelConfigTest, UnbatchedModelOnAGpuMessage) {
  inference::ModelConfig m;
  encodeModelConfig(unbatchedOnGpu(), &m);
  EXPECT_EQ(m.max_batch_size(), 0);
  EXPECT_FALSE(m.has_dynamic_batching());
  ASSERT_EQ(m.input_size(), 1);
  EXPECT_EQ(m.input(0).data_type(), inference::TYPE_INT64);
  EXPECT_EQ(std::vector<int64_t>(m.input(0).dims().begin(), m.input(0).dims().end()),
            (std::vector<int64_t>{3, -1}));
  EXPECT_EQ(m.output(0).data_type(), inference::TYPE_FP16);
  ASSERT_EQ(m.instance_group_size(), 1);
  EXPECT_EQ(m.instance_group(0).kind(), inference::ModelInstanceGroup::KIND_GPU);
  EXPECT_EQ(
      std::vector<int32_t>(m.instance_group(0).gpus().begin(), m.instance_group(0).gpus().end()),
      (std::vector<int32_t>{3}));
}

TEST(ModelConfigTest, UnbatchedModelOnAGpuJson) {
  EXPECT_EQ(nlohmann::json::parse(modelConfigJson(unbatchedOnGpu())), nlohmann::json::parse(R"({
    "name": "m", "platform": "reactant_stablehlo", "backend": "reactant", "runtime": "",
    "version_policy": {"latest": {"num_versions": 1}}, "max_batch_size": 0,
    "input": [{"name": "x", "data_type": "TYPE_INT64", "format": "FORMAT_NONE", "dims": [3, -1],
               "is_shape_tensor": false, "allow_ragged_batch": false, "optional": false}],
    "output": [{"name": "y", "data_type": "TYPE_FP16", "dims": [3], "label_filename": "",
                "is_shape_tensor": false}],
    "instance_group": [{"name": "m_0", "kind": "KIND_GPU", "count": 1, "gpus": [3],
                        "passive": false, "host_policy": ""}],
    "default_model_filename": "", "model_transaction_policy": {"decoupled": false},
    "response_cache": {"enable": false}})"));
}

TEST(ModelConfigTest, DecodeReadsBackWhatEncodeWrote) {
  ModelConfiguration batched;
  batched.name = "b";
  batched.platform = "reactant_stablehlo";
  batched.backend = "reactant";
  batched.max_batch_size = 8;
  batched.inputs = {{"mask", DType::kBool, {-1}}, {"ids", DType::kI32, {4}}};
  batched.outputs = {{"probs", DType::kF32, {10}}};
  batched.dynamic_batching = true;
  batched.preferred_batch_sizes = {1, 4, 8};
  batched.max_queue_delay_us = 250;
  for (const ModelConfiguration &c : {unbatchedOnGpu(), batched}) {
    inference::ModelConfig m;
    encodeModelConfig(c, &m);
    const ModelConfiguration back = decodeModelConfig(m);
    inference::ModelConfig again;
    encodeModelConfig(back, &again);
    EXPECT_EQ(again.SerializeAsString(), m.SerializeAsString()) << c.name;
    EXPECT_EQ(modelConfigJson(back), modelConfigJson(c)) << c.name;
  }
  inference::ModelConfig m;
  encodeModelConfig(batched, &m);
  const ModelConfiguration back = decodeModelConfig(m);
  ASSERT_EQ(back.inputs.size(), 2u);
  EXPECT_EQ(back.inputs[0].dtype, DType::kBool);
  EXPECT_EQ(back.inputs[1].dtype, DType::kI32);
  EXPECT_EQ(back.preferred_batch_sizes, (std::vector<int64_t>{1, 4, 8}));
  EXPECT_EQ(back.max_queue_delay_us, 250);
  EXPECT_EQ(back.instance_kind, InstanceKind::kCpu);
  EXPECT_EQ(decodeModelConfig(inference::ModelConfig()).inputs.size(), 0u);
}

TEST(ModelConfigTest, VersionRule) {
  EXPECT_TRUE(checkModelVersion("m", "").isOk());
  EXPECT_TRUE(checkModelVersion("m", "1").isOk());
  Status s = checkModelVersion("m", "01");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(
      s.message(),
      "model 'm' has no version '01' (its one version is '1'; an empty version names it too)");
}

} // namespace
} // namespace rs::protocol
