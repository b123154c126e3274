//===- test/support/status_test.cc - Status, Result, dtype, Tensor ---------===//
#include "support/dtype.h"
#include "support/status.h"
#include "support/tensor.h"

#include <gtest/gtest.h>

namespace rs {
namespace {

Result<int> half(int x) {
  if (x % 2)
    return invalidArgument() << "odd value " << x;
  return x / 2;
}

Status useHalf(int x, int *out) {
  RS_ASSIGN_OR_RETURN(int h, half(x));
  *out = h;
  return Status::ok();
}

TEST(Status, CarriesCodeAndMessage) {
  Status s = notFound() << "model 'x' not found";
  EXPECT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.toString(), "NOT_FOUND: model 'x' not found");
  EXPECT_EQ(s.withPrefix("a").message(), "a: model 'x' not found");
}

TEST(Result, PropagatesErrors) {
  int out = 0;
  EXPECT_TRUE(useHalf(4, &out).isOk());
  EXPECT_EQ(out, 2);
  Status s = useHalf(3, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "odd value 3");
}

TEST(DType, NamesRoundTrip) {
  EXPECT_EQ(dtypeFromMlirName("f32"), DType::kF32);
  EXPECT_EQ(dtypeFromMlirName("ui8"), DType::kU8);
  EXPECT_EQ(dtypeFromMlirName("si32"), DType::kI32);
  EXPECT_EQ(dtypeFromManifestName("bool"), DType::kBool);
  EXPECT_EQ(dtypeFromWireName("FP32"), DType::kF32);
  EXPECT_EQ(dtypeFromSafetensorsName("I64"), DType::kI64);
  EXPECT_FALSE(dtypeFromWireName("FP8").has_value());
  EXPECT_EQ(dtypeSize(DType::kComplex128), 16);
}

TEST(DType, SubByteIntsAndMinifloatsLiveOnlyInPrograms) {
  EXPECT_EQ(dtypeFromMlirName("i4"), DType::kI4);
  EXPECT_EQ(dtypeFromMlirName("si2"), DType::kI2);
  EXPECT_EQ(dtypeFromMlirName("ui4"), DType::kU4);
  EXPECT_EQ(dtypeFromMlirName("f8E4M3FN"), DType::kF8E4M3FN);
  EXPECT_EQ(dtypeMlirName(DType::kF8E8M0FNU), "f8E8M0FNU");
  EXPECT_EQ(dtypeSize(DType::kI4), 1);
  EXPECT_EQ(dtypeBitWidth(DType::kI4), 4);
  EXPECT_EQ(dtypeBitWidth(DType::kF6E3M2FN), 6);
  EXPECT_EQ(dtypeBitWidth(DType::kF32), 32);
  EXPECT_EQ(dtypeBitWidth(DType::kBool), 1);
  EXPECT_TRUE(isSigned(DType::kI2));
  EXPECT_FALSE(isSigned(DType::kU4));
  EXPECT_TRUE(isInteger(DType::kU2));
  EXPECT_TRUE(isFloat(DType::kF4E2M1FN));
  EXPECT_TRUE(isMinifloat(DType::kF8E5M2FNUZ));
  EXPECT_FALSE(isMinifloat(DType::kBF16));
  // No wire, manifest or safetensors names: a bundle or request cannot declare them.
  EXPECT_EQ(dtypeWireName(DType::kF8E4M3FN), "");
  EXPECT_EQ(dtypeManifestName(DType::kI4), "");
  EXPECT_EQ(dtypeSafetensorsName(DType::kF8E5M2), "");
  EXPECT_FALSE(dtypeFromManifestName("").has_value());
  EXPECT_FALSE(dtypeFromManifestName("f8E4M3FN").has_value());
}

TEST(Tensor, CheckedElementCountRejectsOverflowAndNegatives) {
  EXPECT_EQ(*checkedElementCount(Shape{2, 3, 4}), 24);
  EXPECT_FALSE(checkedElementCount(Shape{-1, 3}).isOk());
  EXPECT_FALSE(checkedElementCount(Shape{INT64_MAX, 3}).isOk());
  Tensor t = Tensor::zeros(DType::kF32, {2, 2});
  EXPECT_EQ(t.byteSize(), 16);
  EXPECT_EQ(t.reshaped({4}).shape(), Shape{4});
}

} // namespace
} // namespace rs
