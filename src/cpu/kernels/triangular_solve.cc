//===- cpu/kernels/triangular_solve.cc - stablehlo.triangular_solve --------===//
//
// stablehlo.triangular_solve: a [..., M, M], b [..., M, K] (left_side) or [..., K, M]
// (right side), one float or complex element type (f16, bf16, f32, f64, complex<f32>,
// complex<f64>) -> x of b's type, with op(a) x = b (left_side) or x op(a) = b (right
// side) per batch. Only the triangle of a named by `lower` is read; unit_diagonal takes
// its diagonal as 1 (not read); transpose_a NO_TRANSPOSE, TRANSPOSE or ADJOINT (the
// conjugate transpose; the same as TRANSPOSE for real types) gives op(a). Substitution
// runs in f64 (complex<f64> for complex types, textbook products) in a fixed order
// (deterministic); each result is rounded once to the element type. The op is verified
// (ir/verify_elementwise.cc: triangular_solve_c1..c4). Errors at plan time: InvalidArgument
// for an unknown transpose_a; Unimplemented for other element types.
//
//===----------------------------------------------------------------------===//
#include "cpu/kernels/element_ops.h"
#include "cpu/kernels/kernel.h"

#include <algorithm>

namespace rs::cpu {
namespace {

struct TriangularSolvePlan {
  DType dtype = DType::kF32;
  int64_t batch = 1, m = 1, k = 1; // k: right-hand sides per batch
  bool left_side = true;
  bool lower = true; // of op(a), after transpose_a
  bool transpose = false;
  bool conjugate = false; // ADJOINT on a complex type
  bool unit_diagonal = false;
};

Status planTriangularSolve(OpView &v, TriangularSolvePlan &p) {
  const TensorType &a = v.operand(0), &b = v.operand(1);
  if (!isFloat(a.dtype) && !isComplex(a.dtype))
    return v.unsupportedType(a.dtype);
  const size_t r = static_cast<size_t>(a.rank());
  p.dtype = a.dtype;
  p.m = a.shape[r - 1];
  p.left_side = v.boolAttr("left_side", false);
  p.k = p.left_side ? b.shape[r - 1] : b.shape[r - 2];
  p.batch = elementCount(std::span(a.shape).first(r - 2));
  p.unit_diagonal = v.boolAttr("unit_diagonal", false);
  const ir::Attribute *t = v.attr("transpose_a");
  const std::string mode = t ? t->str : "NO_TRANSPOSE";
  if (mode != "NO_TRANSPOSE" && mode != "TRANSPOSE" && mode != "ADJOINT")
    return v.error() << "has unknown transpose_a '" << mode << "'";
  p.transpose = mode != "NO_TRANSPOSE";
  p.conjugate = mode == "ADJOINT" && isComplex(a.dtype);
  p.lower = v.boolAttr("lower", false) != p.transpose;
  return Status::ok();
}

/// The type substitution runs in: complex<f64> for complex elements, f64 otherwise.
template <typename T>
using Work = std::conditional_t<ops::kComplex<T>, std::complex<double>, double>;

template <typename T> Work<T> load(const T &x) {
  if constexpr (kIsHalf<T>)
    return x.toFloat();
  else if constexpr (ops::kComplex<T>)
    return {static_cast<double>(x.real()), static_cast<double>(x.imag())};
  else
    return static_cast<double>(x);
}

template <typename T> T store(Work<T> x) {
  if constexpr (kIsHalf<T>)
    return toHalf<T>(x);
  else if constexpr (ops::kComplex<T>)
    return T(static_cast<typename T::value_type>(x.real()),
             static_cast<typename T::value_type>(x.imag()));
  else
    return static_cast<T>(x);
}

template <typename W> W mul(W a, W b) {
  if constexpr (ops::kComplex<W>)
    return ops::complexMul(a, b);
  else
    return a * b;
}

template <typename T>
void solveBatches(const TriangularSolvePlan &p, const T *a, const T *b, T *x, int64_t begin,
                  int64_t end) {
  using W = Work<T>;
  const int64_t m = p.m, k = p.k;
  std::vector<W> e(static_cast<size_t>(m * m)); // op(a), the unread triangle zero
  std::vector<W> rhs(static_cast<size_t>(m));
  for (int64_t n = begin; n < end; ++n) {
    const T *an = a + n * m * m;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < m; ++j) {
        const bool kept = p.lower ? j <= i : j >= i; // in op(a)'s triangle
        const T &src = p.transpose ? an[j * m + i] : an[i * m + j];
        W v = !kept ? W(0.0) : (i == j && p.unit_diagonal) ? W(1.0) : load(src);
        if constexpr (ops::kComplex<W>)
          if (p.conjugate)
            v = std::conj(v);
        e[static_cast<size_t>(i * m + j)] = v;
      }
    const T *bn = b + n * m * k;
    T *xn = x + n * m * k;
    // Each right-hand side is a vector r of length m: left: op(a) y = r, r = b[:, c];
    // right: y op(a) = r, that is op(a)^T y = r, r = b[c, :].
    const bool lower = p.left_side ? p.lower : !p.lower; // of the system actually solved
    const int64_t elem_stride = p.left_side ? k : 1;
    const int64_t vec_stride = p.left_side ? 1 : m;
    auto coef = [&](int64_t i, int64_t j) {
      return p.left_side ? e[static_cast<size_t>(i * m + j)] : e[static_cast<size_t>(j * m + i)];
    };
    for (int64_t c = 0; c < k; ++c) {
      for (int64_t i = 0; i < m; ++i)
        rhs[static_cast<size_t>(i)] = load(bn[c * vec_stride + i * elem_stride]);
      for (int64_t step = 0; step < m; ++step) {
        const int64_t i = lower ? step : m - 1 - step;
        W s = rhs[static_cast<size_t>(i)];
        if (lower)
          for (int64_t j = 0; j < i; ++j)
            s -= mul(coef(i, j), rhs[static_cast<size_t>(j)]);
        else
          for (int64_t j = m - 1; j > i; --j)
            s -= mul(coef(i, j), rhs[static_cast<size_t>(j)]);
        rhs[static_cast<size_t>(i)] = s / coef(i, i);
      }
      for (int64_t i = 0; i < m; ++i)
        xn[c * vec_stride + i * elem_stride] = store<T>(rhs[static_cast<size_t>(i)]);
    }
  }
}

void runTriangularSolve(const TriangularSolvePlan &p, const KernelIo &io) {
  visitNumericOrComplexType(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsHalf<T> || std::is_floating_point_v<T> || ops::kComplex<T>) {
      const T *a = reinterpret_cast<const T *>(io.in[0]->data());
      const T *b = reinterpret_cast<const T *>(io.in[1]->data());
      T *x = reinterpret_cast<T *>(io.out[0].mutableData());
      io.rc.cpu->parallelFor(p.batch, [&](int64_t n) { solveBatches(p, a, b, x, n, n + 1); });
    }
  });
}

} // namespace

void registerTriangularSolveKernels(KernelRegistry &r) {
  r.add("stablehlo.triangular_solve",
        &makeKernel<TriangularSolvePlan, planTriangularSolve, runTriangularSolve>);
}

} // namespace rs::cpu
