//===- test/support/tensor_test.cc - Tensor construction ---------------------===//
#include "support/tensor.h"

#include <gtest/gtest.h>

namespace rs {
namespace {

TEST(Tensor, CopyOfHoldsTheBytes) {
  const std::vector<uint8_t> bytes{1, 2, 3, 4, 5, 6, 7, 8};
  const Tensor t = Tensor::copyOf(DType::kI32, {2}, bytes);
  ASSERT_EQ(t.byteSize(), 8);
  EXPECT_EQ(std::vector<uint8_t>(t.bytes().begin(), t.bytes().end()), bytes);
}

// Found by fuzz_mlir_parser: an empty span carries a null pointer, which went to memcpy.
TEST(Tensor, CopyOfAnEmptySpanGivesAnEmptyTensor) {
  const Tensor t = Tensor::copyOf(DType::kF32, {0, 3}, std::span<const uint8_t>());
  EXPECT_EQ(t.numElements(), 0);
  EXPECT_EQ(t.byteSize(), 0);
}

} // namespace
} // namespace rs
