//===- test/cpu/fma_gemm_test.cc - Order-exact f32/f64 GEMM and f32 erfc ---===//
//
// fma_gemm.h promises that every output element is the FMA chain c = fma(a[i,l], b[l,j], c)
// for l = 0..k-1 from c = 0, on every instruction set, tile and layout: each available kernel
// is compared bit for bit with that chain written as a scalar loop, over shapes that hit every
// edge (rows and columns not a multiple of the register block, k across the k-block size,
// k = 0) and both layouts of both operands. erfc_f32.h is compared with the double std::erfc
// rounded to f32.
//
//===----------------------------------------------------------------------===//
#include "cpu/kernels/fma_gemm.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace rs::cpu {
namespace {

struct Shape {
  int64_t m, n, k;
};

template <typename T>
std::vector<T> chain(const std::vector<T> &a, int64_t a_rs, int64_t a_cs, const std::vector<T> &b,
                     int64_t b_rs, int64_t b_cs, Shape s) {
  std::vector<T> c(static_cast<size_t>(s.m * s.n));
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      T acc = 0;
      for (int64_t l = 0; l < s.k; ++l)
        acc = std::fma(a[i * a_rs + l * a_cs], b[l * b_rs + j * b_cs], acc);
      c[i * s.n + j] = acc;
    }
  return c;
}

template <typename T, typename Fn> void checkAllIsas(Fn gemm) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<T> dist(-1, 1);
  const Shape shapes[] = {{1, 1, 1},     {8, 32, 16},  {9, 33, 7},  {7, 15, 300},
                          {13, 47, 513}, {64, 64, 64}, {3, 100, 0}, {17, 1, 258}};
  for (const Shape &s : shapes)
    for (int layout = 0; layout < 4; ++layout) {
      const bool a_row = layout & 1, b_row = layout & 2;
      std::vector<T> a(static_cast<size_t>(s.m * s.k)), b(static_cast<size_t>(s.k * s.n));
      for (T &x : a)
        x = dist(rng);
      for (T &x : b)
        x = dist(rng);
      const int64_t a_rs = a_row ? s.k : 1, a_cs = a_row ? 1 : s.m;
      const int64_t b_rs = b_row ? s.n : 1, b_cs = b_row ? 1 : s.k;
      const std::vector<T> want = chain(a, a_rs, a_cs, b, b_rs, b_cs, s);
      for (FmaGemmIsa isa : {FmaGemmIsa::kPortable, FmaGemmIsa::kAvx2, FmaGemmIsa::kAvx512}) {
        if (!fmaGemmIsaAvailable(isa))
          continue;
        // ldc wider than n, with a guard value past each row that must stay untouched.
        const int64_t ldc = s.n + 3;
        std::vector<T> c(static_cast<size_t>(s.m * ldc), T(-7));
        gemm(a.data(), a_rs, a_cs, b.data(), b_rs, b_cs, c.data(), ldc, s.m, s.n, s.k, isa);
        for (int64_t i = 0; i < s.m; ++i) {
          ASSERT_EQ(std::memcmp(&c[i * ldc], &want[i * s.n], sizeof(T) * s.n), 0)
              << "isa " << static_cast<int>(isa) << " shape " << s.m << "x" << s.n << "x" << s.k
              << " layout " << layout << " row " << i;
          for (int64_t j = s.n; j < ldc; ++j)
            ASSERT_EQ(c[i * ldc + j], T(-7)) << "wrote past n, row " << i;
        }
      }
    }
}

TEST(FmaGemm, F32EveryIsaIsTheKOrderFmaChain) {
  checkAllIsas<float>(&fmaGemmF32);
  EXPECT_FALSE(fmaGemmBestIsaName().empty());
}

TEST(FmaGemm, F64EveryIsaIsTheKOrderFmaChain) { checkAllIsas<double>(&fmaGemmF64); }

} // namespace
} // namespace rs::cpu
