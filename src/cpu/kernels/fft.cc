//===- cpu/kernels/fft.cc - stablehlo.fft ----------------------------------===//
//
// stablehlo.fft (openxla/stablehlo docs/spec.md "fft"): fft_type FFT, IFFT, RFFT or IRFFT
// over the last N = size(fft_length) (1 to 3) dims of the operand:
//   - FFT: complex -> complex, the forward DFT X[k] = sum_j x[j] exp(-2 pi i jk / n)
//     along each of those dims; IFFT: the inverse, exp(+2 pi i jk / n) divided by n;
//   - RFFT: real -> complex; the forward DFT of the real operand, of which the innermost
//     dim keeps its first fft_length[-1] / 2 + 1 entries;
//   - IRFFT: complex -> real; the inverse of RFFT: the outer fft dims get the inverse DFT,
//     then the innermost dim (fft_length[-1] / 2 + 1 entries) is extended by Hermitian
//     symmetry X[L - k] = conj(X[k]) to L = fft_length[-1] entries, inverse-transformed,
//     and its real part kept.
// fft_length must equal the transformed dims (for RFFT the operand's, for IRFFT the
// result's). Element types: f32/complex<f32> and f64/complex<f64>, both computed in
// complex<f64> and rounded once at the end.
// Each 1-D transform is the direct sum over its line, in index order, with twiddles
// exp(-+2 pi i m / n) for m = jk mod n (one table per dim, exact at quarter turns); lines are
// transformed one after another, so results do not depend on the thread count. Cost: O(N sum(n_d)),
// the direct DFT applied one dim at a time. Errors at plan time: InvalidArgument for shapes or
// fft_length that break fft_c1..c5, Unimplemented for other element types.
//
//===----------------------------------------------------------------------===//
#include "cpu/kernels/element_ops.h"
#include "cpu/kernels/kernel.h"

#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

namespace rs::cpu {
namespace {

using C = std::complex<double>;

enum class FftType : uint8_t { kFft, kIfft, kRfft, kIrfft };

struct FftPlan {
  FftType type = FftType::kFft;
  DType in_type = DType::kComplex64, out_type = DType::kComplex64;
  Shape in_shape, out_shape;
  std::vector<int64_t> lengths; // fft_length
};

Status planFft(OpView &v, FftPlan &p) {
  RS_RETURN_IF_ERROR(v.expectArity(1, 1));
  const TensorType &in = v.operand(0), &out = v.result(0);
  const ir::Attribute *t = v.attr("fft_type");
  if (!t)
    return v.error() << "is missing attribute 'fft_type'";
  if (t->str == "FFT")
    p.type = FftType::kFft;
  else if (t->str == "IFFT")
    p.type = FftType::kIfft;
  else if (t->str == "RFFT")
    p.type = FftType::kRfft;
  else if (t->str == "IRFFT")
    p.type = FftType::kIrfft;
  else
    return v.error() << "has unknown fft_type '" << t->str << "'";
  RS_ASSIGN_OR_RETURN(p.lengths, v.intList("fft_length"));
  const size_t n = p.lengths.size();
  if (n < 1 || n > 3) // fft_c1
    return v.error() << "fft_length must have 1 to 3 entries, got " << n;
  const bool real_in = p.type == FftType::kRfft, real_out = p.type == FftType::kIrfft;
  auto fits = [](DType real, DType complex) {
    return (real == DType::kF32 && complex == DType::kComplex64) ||
           (real == DType::kF64 && complex == DType::kComplex128);
  };
  const DType complex_type = real_in ? out.dtype : in.dtype;
  if (complex_type != DType::kComplex64 && complex_type != DType::kComplex128)
    return v.unsupportedType(complex_type);
  const bool types_ok = real_in    ? fits(in.dtype, out.dtype)
                        : real_out ? fits(out.dtype, in.dtype)
                                   : in.dtype == out.dtype;
  if (!types_ok) // fft_c2..c3
    return v.error() << "operand type " << in.toString() << " and result type " << out.toString()
                     << " do not fit fft_type " << t->str;
  if (in.rank() < static_cast<int64_t>(n) || out.rank() != in.rank())
    return v.error() << "operand and result must have one rank of at least " << n;
  // fft_c4, c5: the transformed dims; the innermost one halves for RFFT/IRFFT.
  const Shape &full = real_out ? out.shape : in.shape;
  const Shape &half = real_out ? in.shape : out.shape;
  const size_t rank = static_cast<size_t>(in.rank());
  for (size_t d = 0; d < rank; ++d) {
    const bool fft_dim = d >= rank - n;
    const int64_t len = fft_dim ? p.lengths[d - (rank - n)] : full[d];
    if (full[d] != len)
      return v.error() << "fft_length " << shapeToString(p.lengths) << " does not fit "
                       << (real_out ? "result" : "operand") << " shape " << shapeToString(full);
    const bool halved = (real_in || real_out) && d == rank - 1;
    if (half[d] != (halved ? len / 2 + 1 : len))
      return v.error() << (real_out ? "operand" : "result") << " shape " << shapeToString(half)
                       << " does not fit fft_length " << shapeToString(p.lengths)
                       << " and fft_type " << t->str;
  }
  p.in_type = in.dtype;
  p.out_type = out.dtype;
  p.in_shape = in.shape;
  p.out_shape = out.shape;
  return Status::ok();
}

/// The 1-D DFT along dim `d` of `x` (row-major `shape`): `len_in` entries per line are
/// read (the rest are 0), `len_out` written to `y` (shape with dim d = len_out); `n` is
/// the transform length; inverse divides by n.
void dftAlong(const std::vector<C> &x, const Shape &shape, size_t d, int64_t n, int64_t len_in,
              int64_t len_out, bool inverse, std::vector<C> &y) {
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < d; ++i)
    outer *= shape[i];
  for (size_t i = d + 1; i < shape.size(); ++i)
    inner *= shape[i];
  // Twiddles exp(-+2 pi i m / n): quarter turns q = 4m / n are exact rotations, so the
  // remaining angle pi r / (2n) lies in [0, pi / 2) and multiples of n / 4 are exact.
  std::vector<C> tw(static_cast<size_t>(n));
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t m = 0; m < n; ++m) {
    const int64_t q = 4 * m / n, r = 4 * m - q * n;
    const double a = std::numbers::pi * static_cast<double>(r) / (2.0 * static_cast<double>(n));
    const double c = r == 0 ? 1.0 : std::cos(a), s = r == 0 ? 0.0 : std::sin(a);
    const C z = q == 0 ? C(c, s) : q == 1 ? C(-s, c) : q == 2 ? C(-c, -s) : C(s, -c);
    tw[static_cast<size_t>(m)] = C(z.real(), sign * z.imag());
  }
  const int64_t in_dim = shape[d];
  y.assign(static_cast<size_t>(outer * len_out * inner), C(0, 0));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const C *line = x.data() + o * in_dim * inner + i;
      C *dst = y.data() + o * len_out * inner + i;
      for (int64_t k = 0; k < len_out; ++k) {
        C acc(0, 0);
        for (int64_t j = 0; j < len_in; ++j)
          acc = ops::Add::apply(
              acc, ops::complexMul(line[j * inner], tw[static_cast<size_t>((j * k) % n)]));
        dst[k * inner] =
            inverse ? C(acc.real() / static_cast<double>(n), acc.imag() / static_cast<double>(n))
                    : acc;
      }
    }
}

template <typename P> void load(const Tensor &t, bool is_complex, std::vector<C> &x) {
  const P *p = reinterpret_cast<const P *>(t.data());
  x.resize(static_cast<size_t>(t.numElements()));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = is_complex ? C(p[2 * i], p[2 * i + 1]) : C(p[i], 0);
}

template <typename P> void store(const std::vector<C> &y, bool is_complex, Tensor &t) {
  P *p = reinterpret_cast<P *>(t.mutableData());
  for (size_t i = 0; i < y.size(); ++i) {
    if (is_complex) {
      p[2 * i] = static_cast<P>(y[i].real());
      p[2 * i + 1] = static_cast<P>(y[i].imag());
    } else {
      p[i] = static_cast<P>(y[i].real());
    }
  }
}

void runFft(const FftPlan &p, const KernelIo &io) {
  const bool single = p.in_type == DType::kF32 || p.in_type == DType::kComplex64;
  const bool in_complex = isComplex(p.in_type), out_complex = isComplex(p.out_type);
  std::vector<C> x, y;
  if (single)
    load<float>(*io.in[0], in_complex, x);
  else
    load<double>(*io.in[0], in_complex, x);
  const size_t rank = p.in_shape.size(), n = p.lengths.size();
  Shape shape = p.in_shape;
  auto along = [&](size_t d, int64_t len, int64_t len_in, int64_t len_out, bool inverse) {
    dftAlong(x, shape, d, len, len_in, len_out, inverse, y);
    shape[d] = len_out;
    x.swap(y);
  };
  switch (p.type) {
  case FftType::kFft:
  case FftType::kIfft:
    for (size_t i = n; i-- > 0;) // innermost first
      along(rank - n + i, p.lengths[i], p.lengths[i], p.lengths[i], p.type == FftType::kIfft);
    break;
  case FftType::kRfft:
    along(rank - 1, p.lengths[n - 1], p.lengths[n - 1], p.lengths[n - 1] / 2 + 1, false);
    for (size_t i = n - 1; i-- > 0;)
      along(rank - n + i, p.lengths[i], p.lengths[i], p.lengths[i], false);
    break;
  case FftType::kIrfft: {
    for (size_t i = 0; i + 1 < n; ++i)
      along(rank - n + i, p.lengths[i], p.lengths[i], p.lengths[i], true);
    // Extend the innermost dim by Hermitian symmetry to L entries, then invert it.
    const int64_t len = p.lengths[n - 1], half = shape[rank - 1];
    const int64_t lines = static_cast<int64_t>(x.size()) / std::max<int64_t>(half, 1);
    y.assign(static_cast<size_t>(lines * len), C(0, 0));
    for (int64_t l = 0; l < lines; ++l)
      for (int64_t k = 0; k < len; ++k) {
        const int64_t src = k < half ? k : len - k;
        if (src < half) {
          const C v = x[static_cast<size_t>(l * half + src)];
          y[static_cast<size_t>(l * len + k)] = k < half ? v : std::conj(v);
        }
      }
    x.swap(y);
    shape[rank - 1] = len;
    along(rank - 1, len, len, len, true);
    break;
  }
  }
  if (p.out_type == DType::kF32 || p.out_type == DType::kComplex64)
    store<float>(x, out_complex, io.out[0]);
  else
    store<double>(x, out_complex, io.out[0]);
}

} // namespace

void registerFftKernels(KernelRegistry &r) {
  r.add("stablehlo.fft", &makeKernel<FftPlan, planFft, runFft>);
}

} // namespace rs::cpu
