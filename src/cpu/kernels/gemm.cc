//===- cpu/kernels/gemm.cc - Single-tile matrix multiply ---------------------===//
//
// f32 and f64 tiles run the order-exact FMA chain of fma_gemm.h. Integer tiles (exact,
// wrapping arithmetic, so the order does not matter) go through Eigen, which picks GEMM, GEMV
// or a dot product from the tile's (m, n, k). The lazy coefficient-based product Eigen
// uses for tiny products is disabled (EIGEN_GEMM_TO_COEFFBASED_THRESHOLD 0), so every
// tile takes the blocked GEMM/GEMV paths. Complex tiles use a plain loop (complexGemm).
//
//===----------------------------------------------------------------------===//
#ifndef EIGEN_GEMM_TO_COEFFBASED_THRESHOLD
#define EIGEN_GEMM_TO_COEFFBASED_THRESHOLD 0
#endif
#include "cpu/kernels/gemm.h"

#include "cpu/kernels/element_ops.h"
#include "cpu/kernels/fma_gemm.h"

#include <Eigen/Core>

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace rs::cpu {
namespace {

using Eigen::Dynamic;
using Eigen::OuterStride;

template <typename T, int Order>
using ConstView = Eigen::Map<const Eigen::Matrix<T, Dynamic, Dynamic, Order>, 0, OuterStride<>>;
template <typename T>
using OutView = Eigen::Map<Eigen::Matrix<T, Dynamic, Dynamic, Eigen::RowMajor>, 0, OuterStride<>>;

template <typename T, int Order>
ConstView<T, Order> view(const T *p, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  // Row-major: the outer stride is the row stride; column-major: the column stride.
  int64_t outer = Order == Eigen::RowMajor ? rs : cs;
  int64_t inner_extent = Order == Eigen::RowMajor ? cols : rows;
  return ConstView<T, Order>(p, rows, cols, OuterStride<>(std::max(outer, inner_extent)));
}

template <typename T>
void gemm(const uint8_t *a_bytes, int64_t a_rs, int64_t a_cs, const uint8_t *b_bytes, int64_t b_rs,
          int64_t b_cs, uint8_t *c_bytes, int64_t ldc, int64_t m, int64_t n, int64_t k) {
  const T *a = reinterpret_cast<const T *>(a_bytes);
  const T *b = reinterpret_cast<const T *>(b_bytes);
  T *c = reinterpret_cast<T *>(c_bytes);
  if (m == 0 || n == 0)
    return;
  OutView<T> out(c, m, n, OuterStride<>(std::max(ldc, n)));
  if (k == 0) {
    out.setZero();
    return;
  }
  const bool a_row = a_cs == 1; // otherwise a_rs == 1: column-major
  const bool b_row = b_cs == 1;
  if (a_row && b_row)
    out.noalias() = view<T, Eigen::RowMajor>(a, m, k, a_rs, a_cs) *
                    view<T, Eigen::RowMajor>(b, k, n, b_rs, b_cs);
  else if (a_row)
    out.noalias() = view<T, Eigen::RowMajor>(a, m, k, a_rs, a_cs) *
                    view<T, Eigen::ColMajor>(b, k, n, b_rs, b_cs);
  else if (b_row)
    out.noalias() = view<T, Eigen::ColMajor>(a, m, k, a_rs, a_cs) *
                    view<T, Eigen::RowMajor>(b, k, n, b_rs, b_cs);
  else
    out.noalias() = view<T, Eigen::ColMajor>(a, m, k, a_rs, a_cs) *
                    view<T, Eigen::ColMajor>(b, k, n, b_rs, b_cs);
}

/// Complex tiles: each output element sums its k products in k order, starting from 0,
/// with the textbook complex multiply of element_ops.h (Eigen's complex kernels would
/// fuse and reorder the real products).
template <typename P>
void complexGemm(const uint8_t *a_bytes, int64_t a_rs, int64_t a_cs, const uint8_t *b_bytes,
                 int64_t b_rs, int64_t b_cs, uint8_t *c_bytes, int64_t ldc, int64_t m, int64_t n,
                 int64_t k) {
  using C = std::complex<P>;
  const C *a = reinterpret_cast<const C *>(a_bytes);
  const C *b = reinterpret_cast<const C *>(b_bytes);
  C *c = reinterpret_cast<C *>(c_bytes);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      C acc(0, 0);
      for (int64_t l = 0; l < k; ++l)
        acc = ops::Add::apply(acc, ops::complexMul(a[i * a_rs + l * a_cs], b[l * b_rs + j * b_cs]));
      c[i * std::max(ldc, n) + j] = acc;
    }
}

/// f32 and f64: the order-exact FMA chain of fma_gemm.h.
template <typename T>
void fmaChainGemm(const uint8_t *a, int64_t a_rs, int64_t a_cs, const uint8_t *b, int64_t b_rs,
                  int64_t b_cs, uint8_t *c, int64_t ldc, int64_t m, int64_t n, int64_t k) {
  const int64_t ld = std::max(ldc, n);
  if constexpr (std::is_same_v<T, float>)
    fmaGemmF32(reinterpret_cast<const float *>(a), a_rs, a_cs, reinterpret_cast<const float *>(b),
               b_rs, b_cs, reinterpret_cast<float *>(c), ld, m, n, k);
  else
    fmaGemmF64(reinterpret_cast<const double *>(a), a_rs, a_cs, reinterpret_cast<const double *>(b),
               b_rs, b_cs, reinterpret_cast<double *>(c), ld, m, n, k);
}

} // namespace

GemmFn gemmFor(DType t) {
  switch (t) {
  case DType::kComplex64: return &complexGemm<float>;
  case DType::kComplex128: return &complexGemm<double>;
  case DType::kF32: return &fmaChainGemm<float>;
  case DType::kF64: return &fmaChainGemm<double>;
  case DType::kI32: return &gemm<int32_t>;
  case DType::kI64: return &gemm<int64_t>;
  case DType::kU32: return &gemm<uint32_t>;
  case DType::kU64: return &gemm<uint64_t>;
  default: return nullptr;
  }
}

Status planGemmTypes(OpView &v, DType lhs, DType rhs, DType out, GemmTypes &t) {
  t.compute = gemmComputeType(out);
  t.gemm = gemmFor(t.compute);
  if (!t.gemm)
    return v.unsupportedType(out);
  t.elem_size = dtypeSize(t.compute);
  if (lhs != t.compute && !(t.lhs = convertFn(lhs, t.compute)))
    return v.unsupportedType(lhs);
  if (rhs != t.compute && !(t.rhs = convertFn(rhs, t.compute)))
    return v.unsupportedType(rhs);
  if (out != t.compute)
    t.out = convertFn(t.compute, out);
  return Status::ok();
}

const uint8_t *inComputeType(ConvertFn fn, const Tensor &t, int64_t elem_size,
                             std::unique_ptr<uint8_t[]> &buffer) {
  if (!fn)
    return t.data();
  buffer.reset(new uint8_t[static_cast<size_t>(t.numElements() * elem_size)]);
  fn(t.data(), buffer.get(), t.numElements());
  return buffer.get();
}

DType gemmComputeType(DType result) {
  switch (result) {
  case DType::kF32:
  case DType::kF64:
  case DType::kI32:
  case DType::kI64:
  case DType::kComplex64:
  case DType::kComplex128: return result;
  case DType::kF16:
  case DType::kBF16: return DType::kF32;
  case DType::kI2:
  case DType::kI4:
  case DType::kU2:
  case DType::kU4: // wrapped to the bit width after the conversion back (sub_byte.cc)
  case DType::kI8:
  case DType::kI16:
  case DType::kU8:
  case DType::kU16:
  case DType::kU32: return DType::kU32;
  case DType::kU64: return DType::kU64;
  default: return isMinifloat(result) ? DType::kF32 : DType::kInvalid;
  }
}

} // namespace rs::cpu
