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

TEST(Tensor, SubviewSharesTheBytesAndKeepsThemAlive) {
  Tensor sub;
  const uint8_t *base = nullptr;
  {
    Tensor t = Tensor::zeros(DType::kI32, {3, 2});
    for (int i = 0; i < 6; ++i)
      t.mutableDataAs<int32_t>()[i] = 10 + i;
    base = t.data();
    sub = t.subview(2 * 4, {2, 2}); // rows 1 and 2
  }
  // The source is gone; the view still holds its bytes.
  EXPECT_EQ(sub.data(), base + 8);
  EXPECT_EQ(sub.shape(), (Shape{2, 2}));
  const int32_t *v = sub.dataAs<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(v, v + 4), (std::vector<int32_t>{12, 13, 14, 15}));
}

} // namespace
} // namespace rs
