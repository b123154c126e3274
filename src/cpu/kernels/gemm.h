//===- cpu/kernels/gemm.h - Single-tile matrix multiply ---------------------===//
//
// Private to cpu/. C[m, n] = A[m, k] * B[k, n] for one output tile, on the calling thread.
// A and B are strided views with one unit stride each (row-major or column-major); C is
// row-major with leading dimension ldc. Element types: float and double (each element one
// fused multiply-add chain in k order: fma_gemm.h), int32_t, int64_t and unsigned (Eigen's
// GEMM, wrapping arithmetic in that type), and complex<f32>/complex<f64> (a plain loop, k
// products summed in k order from 0).
//
// Determinism: the arithmetic of an output element depends on nothing but the operands: not
// on the tile it falls in, the thread count or the instruction set (AVX-512, AVX2 or
// portable), so callers may tile as they like.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/kernels/kernel.h"
#include "support/dtype.h"

#include <cstdint>
#include <memory>

namespace rs::cpu {

/// A type-erased gemm on raw bytes (element type fixed by gemmFor()).
using GemmFn = void (*)(const uint8_t *a, int64_t a_rs, int64_t a_cs, const uint8_t *b,
                        int64_t b_rs, int64_t b_cs, uint8_t *c, int64_t ldc, int64_t m, int64_t n,
                        int64_t k);

/// The gemm for element type `t`, or nullptr when unsupported (f32, f64, i32, i64, ui32,
/// ui64, complex<f32>, complex<f64>).
GemmFn gemmFor(DType t);

/// The type a product with result type `result` is computed in: the result type itself
/// for f32, f64, i32, i64 and the complex types; f32 for f16/bf16 (XLA:CPU accumulates them in
/// f32) and the minifloats; ui32 for narrower integers (sub-byte ones included) and ui32, ui64
/// for ui64 (wrapping arithmetic whose low bits are those of the result type); kInvalid
/// otherwise.
DType gemmComputeType(DType result);

/// The types of one product: operands are converted (stablehlo.convert semantics) to the
/// compute type when they differ from it, the result converted back at the end.
struct GemmTypes {
  DType compute = DType::kInvalid;
  int64_t elem_size = 0; // of the compute type
  GemmFn gemm = nullptr;
  ConvertFn lhs = nullptr, rhs = nullptr, out = nullptr; // nullptr: already that type
};

/// Plans the types of a product of `lhs` x `rhs` -> `out` element types (Unimplemented
/// naming the op for a type that has no compute type or conversion).
Status planGemmTypes(OpView &v, DType lhs, DType rhs, DType out, GemmTypes &t);

/// The bytes of `t` in the compute type: converted by `fn` into `buffer` (allocated here),
/// or t's own bytes when `fn` is nullptr.
const uint8_t *inComputeType(ConvertFn fn, const Tensor &t, int64_t elem_size,
                             std::unique_ptr<uint8_t[]> &buffer);

} // namespace rs::cpu
