//===- test/server/multishape_request_test.cc - Multi-shape requests --------===//
//
// The multi-shape fixture (test/bundle/multishape_fixture.h) as the wire sees it: metadata
// -1 on the batch and variable axes, and request validation routing a request to its
// variant or refusing it with the variants served.
//
//===----------------------------------------------------------------------===//
#include "server/request_validation.h"

#include "../bundle/multishape_fixture.h"
#include "server/model_metadata.h"

#include <gtest/gtest.h>

namespace rs::server {
namespace {

TEST(MultiShapeMetadata, MinusOneOnTheBatchAndVariableAxes) {
  auto manifest = bundle::loadManifest(multishape::multiShapeBundle() + "/manifest.yaml");
  ASSERT_TRUE(manifest.isOk()) << manifest.status().toString();
  runtime::LoadedModel m;
  m.name = multishape::kMultiShapeModel;
  m.manifest = *manifest;
  const protocol::ModelMetadata md = modelMetadataOf(m);
  // ModelMetadata: -1 for the batch axis and the variable axis.
  ASSERT_EQ(md.inputs.size(), 2u);
  EXPECT_EQ(md.inputs[0].shape, (Shape{-1, -1}));
  EXPECT_EQ(md.inputs[0].batch_axis, 0);
  EXPECT_EQ(md.outputs[0].shape, (Shape{-1, -1, 16}));
  EXPECT_EQ(md.outputs[2].shape, (Shape{-1, 4}));
}

/// A request of `ids` and `mask` tensors of the given shapes.
protocol::InferRequest request(const Shape &ids, const Shape &mask) {
  protocol::InferRequest r;
  r.model_name = "text_encoder_ms";
  r.inputs = {{"input_ids", Tensor::zeros(DType::kI32, ids)},
              {"attention_mask", Tensor::zeros(DType::kI32, mask)}};
  return r;
}

TEST(MultiShapeValidation, RoutesToTheVariantOrNamesTheVariantsServed) {
  auto b = bundle::loadManifest(multishape::multiShapeBundle() + "/manifest.yaml");
  ASSERT_TRUE(b.isOk()) << b.status().toString();
  auto s8 = validateRequest(*b, request({3, 8}, {3, 8}));
  ASSERT_TRUE(s8.isOk()) << s8.status().toString();
  EXPECT_EQ(s8->variant, 0u);
  EXPECT_EQ(s8->rows, 3);
  auto s16 = validateRequest(*b, request({1, 16}, {1, 16}));
  ASSERT_TRUE(s16.isOk()) << s16.status().toString();
  EXPECT_EQ(s16->variant, 1u);

  auto s12 = validateRequest(*b, request({1, 12}, {1, 12}));
  EXPECT_EQ(s12.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s12.status().message(),
            "input 'input_ids': shape [1,12] matches no shape variant of the model; variants "
            "served: [-1,8] {s=8}, [-1,16] {s=16}");
  auto mixed = validateRequest(*b, request({2, 8}, {2, 16}));
  EXPECT_EQ(mixed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(mixed.status().message(),
            "input 'attention_mask': shape [2,16] together with the inputs before it matches no "
            "shape variant of the model; variants served: [-1,8] {s=8}, [-1,16] {s=16}");
  // A wrong rank is still the plain shape error.
  auto rank = validateRequest(*b, request({8}, {1, 8}));
  EXPECT_EQ(rank.status().message(),
            "input 'input_ids': shape [8] does not match the model's [-1,-1]");
}

TEST(MultiShapeValidation, ABytesInputToANumericInputIsRefused) {
  auto b = bundle::loadManifest(multishape::multiShapeBundle() + "/manifest.yaml");
  ASSERT_TRUE(b.isOk()) << b.status().toString();
  protocol::InferRequest r = request({1, 8}, {1, 8});
  const std::vector<std::string_view> text = {"a", "b", "c", "d", "e", "f", "g", "h"};
  r.inputs[0] = protocol::NamedTensor::ofBytes("input_ids",
                                               protocol::BytesTensor::fromElements({1, 8}, text));
  auto v = validateRequest(*b, r);
  EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(v.status().message(),
            "input 'input_ids': datatype BYTES does not match the model's INT32");
}

} // namespace
} // namespace rs::server
