//===- cpu/kernels/gemm.h - Single-tile matrix multiply on Eigen -----------===//
//
// Private to cpu/. C[m, n] = A[m, k] * B[k, n] for one output tile, on the calling thread,
// through Eigen's GEMM (Eigen::Map views, no copies). A and B are strided views with one
// unit stride each (row-major or column-major); C is row-major with leading dimension
// ldc. Element types: float, double, int32_t, int64_t (accumulation in that type).
//
// Determinism: the arithmetic of an output element depends only on (m, n, k) and the
// machine's cache sizes (which fix Eigen's blocking), never on pointer values or threads;
// callers choose tile shapes from the op's shape only.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/dtype.h"

#include <cstdint>

namespace rs::cpu {

/// A type-erased gemm on raw bytes (element type fixed by gemmFor()).
using GemmFn = void (*)(const uint8_t *a, int64_t a_rs, int64_t a_cs, const uint8_t *b,
                        int64_t b_rs, int64_t b_cs, uint8_t *c, int64_t ldc, int64_t m, int64_t n,
                        int64_t k);

/// The gemm for element type `t`, or nullptr when unsupported (only f32, f64, i32, i64).
GemmFn gemmFor(DType t);

} // namespace rs::cpu
