//===- test/server/tensor_compare_test.cc - loadgen's answer comparison -----===//
//
// client::sameWithin, the check `loadgen --verify --rtol` makes of every answer against the
// first one for its payload: equal bytes always pass; with a tolerance, F32, F64, FP16 and
// BF16 elements within rtol * max(|x|, |y|) (both NaN counts as equal) pass; integers and
// a size mismatch never do.
//
//===----------------------------------------------------------------------===//
#include "client/tensor_compare.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace rs::client {
namespace {

template <class T> std::string bytesOf(const std::vector<T> &v) {
  std::string out(v.size() * sizeof(T), '\0');
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

TEST(SameWithin, EqualBytesPassWhateverTheTolerance) {
  const std::string a = bytesOf<int32_t>({1, 2, 3});
  EXPECT_TRUE(sameWithin(a, a, DType::kI32, 0));
  EXPECT_TRUE(sameWithin(a, a, DType::kI32, 0.5));
  EXPECT_FALSE(sameWithin(a, bytesOf<int32_t>({1, 2, 4}), DType::kI32, 0.5));
}

TEST(SameWithin, F32AndF64WithinRtol) {
  const std::string a = bytesOf<float>({1.0f, -2.0f}), b = bytesOf<float>({1.0001f, -2.0f});
  EXPECT_FALSE(sameWithin(a, b, DType::kF32, 0));
  EXPECT_FALSE(sameWithin(a, b, DType::kF32, 1e-5));
  EXPECT_TRUE(sameWithin(a, b, DType::kF32, 1e-3));
  EXPECT_TRUE(sameWithin(bytesOf<double>({4.0}), bytesOf<double>({4.002}), DType::kF64, 1e-3));
  EXPECT_FALSE(sameWithin(bytesOf<double>({4.0}), bytesOf<double>({4.01}), DType::kF64, 1e-3));
  EXPECT_FALSE(sameWithin(a, bytesOf<float>({1.0001f}), DType::kF32, 1e-3)); // sizes differ
}

TEST(SameWithin, Fp16AndBf16WithinRtol) {
  // FP16 1.0 is 0x3C00; the next value, 0x3C01, is 1.0009765625.
  const std::string h1 = bytesOf<uint16_t>({0x3C00}), h2 = bytesOf<uint16_t>({0x3C01});
  EXPECT_TRUE(sameWithin(h1, h2, DType::kF16, 1e-3));
  EXPECT_FALSE(sameWithin(h1, h2, DType::kF16, 5e-4));
  // BF16 1.0 is 0x3F80; the next value, 0x3F81, is 1.0078125.
  const std::string b1 = bytesOf<uint16_t>({0x3F80}), b2 = bytesOf<uint16_t>({0x3F81});
  EXPECT_TRUE(sameWithin(b1, b2, DType::kBF16, 1e-2));
  EXPECT_FALSE(sameWithin(b1, b2, DType::kBF16, 1e-3));
}

TEST(SameWithin, NanPayloadsAreEqualUnderATolerance) {
  const std::string a = bytesOf<uint32_t>({0x7fc00000u}), b = bytesOf<uint32_t>({0x7fc00001u});
  EXPECT_FALSE(sameWithin(a, b, DType::kF32, 0));
  EXPECT_TRUE(sameWithin(a, b, DType::kF32, 1e-6));
  EXPECT_FALSE(sameWithin(a, bytesOf<float>({1.0f}), DType::kF32, 1e-6));
}

} // namespace
} // namespace rs::client
