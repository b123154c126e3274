//===- cpu/kernels/fma_gemm.h - Order-exact f32/f64 matrix multiply --------===//
//
// Private to cpu/. C[m, n] = A[m, k] * B[k, n] for f32 and f64, where every output element is
// one fused multiply-add chain in k order:
//
//   c = 0;  for l in 0..k-1:  c = fma(A[i, l], B[l, j], c)
//
// with one rounding per step (IEEE 754 fusedMultiplyAdd). The vector kernels (AVX-512, AVX2 +
// FMA) and the portable one (std::fma) compute exactly this chain for every element, whatever
// the tile, the blocking over k (a partial sum is stored to C as the f32/f64 value it is and
// reloaded), the lane an element lands in or the instruction set. So a product's bits do not
// depend on how it is cut into tiles, on the thread count, or on which of these CPUs runs it;
// callers may tile freely.
//
// Operands are strided views with one unit stride each (row-major: col stride 1; column-major:
// row stride 1); C is row-major with leading dimension ldc >= n. B is packed into panels of the
// kernel's width per thread (no heap allocation after a thread's first call at that size).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string_view>

namespace rs::cpu {

/// The instruction sets of the kernels. kBest resolves to the widest the running CPU has.
enum class FmaGemmIsa { kBest, kPortable, kAvx2, kAvx512 };

/// Whether the running CPU can execute `isa` (kPortable and kBest: always).
bool fmaGemmIsaAvailable(FmaGemmIsa isa);

/// The instruction set kBest resolves to on this CPU: "avx512", "avx2" or "portable".
std::string_view fmaGemmBestIsaName();

/// C = A * B as above, element type float. `isa` must be available (fmaGemmIsaAvailable).
void fmaGemmF32(const float *a, int64_t a_rs, int64_t a_cs, const float *b, int64_t b_rs,
                int64_t b_cs, float *c, int64_t ldc, int64_t m, int64_t n, int64_t k,
                FmaGemmIsa isa = FmaGemmIsa::kBest);

/// The same for double.
void fmaGemmF64(const double *a, int64_t a_rs, int64_t a_cs, const double *b, int64_t b_rs,
                int64_t b_cs, double *c, int64_t ldc, int64_t m, int64_t n, int64_t k,
                FmaGemmIsa isa = FmaGemmIsa::kBest);

} // namespace rs::cpu
