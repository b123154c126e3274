//===- cpu/kernels/special_functions.cc - chlo special functions -----------===//
//
// chlo.erf_inv, chlo.digamma, chlo.bessel_i1e: x -> f(x) elementwise, one float element
// type (f16, bf16, f32, f64) for operand and result, same shape. Each element is
// computed in f64 and rounded once to the element type (deterministic, no reordering).
//   erf_inv(x): the y with erf(y) = x; +-inf at +-1, NaN outside [-1, 1].
//   digamma(x): d/dx ln Gamma(x); NaN at the poles (0, -1, -2, ...) and at -inf.
//   bessel_i1e(x): exp(-|x|) I1(x) (odd, -> 0 at +-inf).
// The ops are verified (ir/verify_elementwise.cc: result type of the operand's). Errors at
// plan time: Unimplemented for non-float element types.
//
//===----------------------------------------------------------------------===//
#include "cpu/kernels/kernel.h"

#include <cmath>
#include <limits>
#include <numbers>

namespace rs::cpu {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

double erfInv(double x) {
  if (std::isnan(x) || x < -1.0 || x > 1.0)
    return kNaN;
  if (x == 1.0 || x == -1.0)
    return x * kInf;
  if (x == 0.0)
    return x; // keeps the sign of zero
  // Initial guess from a logarithmic approximation, refined by Newton steps on
  // erf(y) - x (erfc for accuracy near +-1).
  const double a = 0.147;
  const double ln = std::log1p(-x * x);
  const double t = 2.0 / (std::numbers::pi * a) + ln / 2.0;
  double y = std::copysign(std::sqrt(std::sqrt(t * t - ln / a) - t), x);
  for (int i = 0; i < 4; ++i) {
    // erf(y) - x; near +-1 as s ((1 - |x|) - erfc(|y|)), where 1 - |x| is exact.
    const double s = std::copysign(1.0, x);
    const double err =
        std::fabs(x) > 0.5 ? s * ((1.0 - std::fabs(x)) - std::erfc(std::fabs(y))) : std::erf(y) - x;
    const double d = 2.0 / std::sqrt(std::numbers::pi) * std::exp(-y * y);
    if (d == 0.0)
      break;
    y -= err / d;
  }
  return y;
}

double digamma(double x) {
  if (std::isnan(x) || x == -kInf)
    return kNaN;
  if (x == kInf)
    return kInf;
  if (x <= 0.0 && std::floor(x) == x)
    return kNaN;
  double result = 0.0;
  if (x < 0.5) { // reflection: psi(x) = psi(1 - x) - pi / tan(pi x)
    result -= std::numbers::pi / std::tan(std::numbers::pi * x);
    x = 1.0 - x;
  }
  while (x < 10.0) { // recurrence: psi(x) = psi(x + 1) - 1 / x
    result -= 1.0 / x;
    x += 1.0;
  }
  // Asymptotic series: ln x - 1/(2x) - sum B_2k / (2k x^2k).
  const double inv2 = 1.0 / (x * x);
  const double series =
      inv2 * (1.0 / 12 -
              inv2 * (1.0 / 120 -
                      inv2 * (1.0 / 252 -
                              inv2 * (1.0 / 240 - inv2 * (1.0 / 132 - inv2 * (691.0 / 32760))))));
  return result + std::log(x) - 0.5 / x - series;
}

double besselI1e(double x) {
  if (std::isnan(x))
    return kNaN;
  const double ax = std::fabs(x);
  if (std::isinf(ax))
    return std::copysign(0.0, x);
  double r = 0.0;
  if (ax <= 50.0) {
    // I1(x) = sum_k (x/2)^(2k+1) / (k! (k+1)!), all terms positive.
    const double h = ax / 2.0, h2 = h * h;
    double term = h, sum = h;
    for (int k = 1; k < 500 && term > sum * 1e-18; ++k) {
      term *= h2 / (static_cast<double>(k) * static_cast<double>(k + 1));
      sum += term;
    }
    r = sum * std::exp(-ax);
  } else {
    // exp(-x) I1(x) ~ 1/sqrt(2 pi x) sum_k (-1)^k a_k / x^k,
    // a_k = prod_{j=1..k} (4 - (2j-1)^2) / (k! 8^k).
    double term = 1.0, sum = 1.0;
    for (int k = 1; k < 60; ++k) {
      const double odd = 2.0 * k - 1.0;
      const double next = -term * (4.0 - odd * odd) / (8.0 * k * ax);
      if (std::fabs(next) >= std::fabs(term))
        break;
      term = next;
      sum += term;
      if (std::fabs(term) < 1e-18 * std::fabs(sum))
        break;
    }
    r = sum / std::sqrt(2.0 * std::numbers::pi * ax);
  }
  return std::copysign(r, x);
}

struct SpecialPlan {
  double (*fn)(double) = nullptr;
  DType dtype = DType::kF32;
  int64_t n = 0;
};

template <double (*Fn)(double)> Status planSpecial(OpView &v, SpecialPlan &p) {
  const TensorType &in = v.operand(0);
  if (!isFloat(in.dtype))
    return v.unsupportedType(in.dtype);
  p.fn = Fn;
  p.dtype = in.dtype;
  p.n = in.numElements();
  return Status::ok();
}

template <typename T> void specialLoop(double (*fn)(double), const T *in, T *out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (kIsHalf<T>)
      out[i] = toHalf<T>(fn(in[i].toFloat()));
    else
      out[i] = static_cast<T>(fn(static_cast<double>(in[i])));
  }
}

void runSpecial(const SpecialPlan &p, const KernelIo &io) {
  visitNumericType(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsHalf<T> || std::is_floating_point_v<T>) {
      const T *in = reinterpret_cast<const T *>(io.in[0]->data());
      T *out = reinterpret_cast<T *>(io.out[0].mutableData());
      const int64_t tiles = (p.n + kElementwiseGrain - 1) / kElementwiseGrain;
      io.rc.cpu->parallelFor(tiles, [&](int64_t t) {
        const int64_t b = t * kElementwiseGrain;
        specialLoop(p.fn, in + b, out + b, std::min(kElementwiseGrain, p.n - b));
      });
    }
  });
}

} // namespace

void registerSpecialFunctionKernels(KernelRegistry &r) {
  r.add("chlo.erf_inv", &makeKernel<SpecialPlan, planSpecial<&erfInv>, runSpecial>);
  r.add("chlo.digamma", &makeKernel<SpecialPlan, planSpecial<&digamma>, runSpecial>);
  r.add("chlo.bessel_i1e", &makeKernel<SpecialPlan, planSpecial<&besselI1e>, runSpecial>);
}

} // namespace rs::cpu
