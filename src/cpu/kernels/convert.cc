//===- cpu/kernels/convert.cc - stablehlo.convert --------------------------===//
//
// Elementwise conversion between any two of f16, bf16, f32, f64, i1, i8..i64, ui8..ui64
// (same shape). Rules (openxla/stablehlo docs/spec.md "convert"; XLA where the spec leaves the
// choice):
//   - to i1: x != 0 (NaN -> true); from i1: 0 or 1;
//   - integer -> integer: two's complement truncation or extension;
//   - integer -> float, float -> float: round to nearest even (once: to f16/bf16 through
//     a round-to-odd f32);
//   - float -> integer: truncate toward zero, saturate at the type's range, NaN -> 0.
// Errors at plan time: InvalidArgument for a shape mismatch; Unimplemented for other
// element types.
//
//===----------------------------------------------------------------------===//
#include "cpu/kernels/element_ops.h"
#include "cpu/kernels/kernel.h"

namespace rs::cpu {
namespace {

template <typename From, typename To> To convertOne(From x) {
  if constexpr (kIsHalf<To>) {
    return toHalf<To>(x);
  } else if constexpr (kIsHalf<From>) {
    return convertOne<float, To>(x.toFloat());
  } else if constexpr (ops::kBool<To>) {
    return x != From(0);
  } else if constexpr (ops::kFloat<From> && ops::kInt<To>) {
    if (std::isnan(x))
      return 0;
    // The bounds are powers of two, exact in any float type.
    constexpr From half = static_cast<From>(uint64_t(1) << (sizeof(To) * 8 - 1));
    constexpr From lo = std::is_signed_v<To> ? -half : From(0);
    constexpr From hi = std::is_signed_v<To> ? half : half * From(2);
    if (x <= lo)
      return std::numeric_limits<To>::min();
    if (x >= hi)
      return std::numeric_limits<To>::max();
    return static_cast<To>(x); // truncates; in range
  } else {
    return static_cast<To>(x);
  }
}

template <typename From, typename To> void convertLoop(const uint8_t *in, uint8_t *out, int64_t n) {
  const From *a = reinterpret_cast<const From *>(in);
  To *o = reinterpret_cast<To *>(out);
  for (int64_t i = 0; i < n; ++i)
    o[i] = convertOne<From, To>(a[i]);
}

struct ConvertPlan {
  ConvertFn fn = nullptr;
  int64_t n = 0, in_size = 0, out_size = 0;
};

Status planConvert(OpView &v, ConvertPlan &p) {
  RS_RETURN_IF_ERROR(v.expectArity(1, 1));
  const TensorType &in = v.operand(0), &out = v.result(0);
  if (in.shape != out.shape)
    return v.error() << "result shape " << shapeToString(out.shape)
                     << " differs from operand shape " << shapeToString(in.shape);
  p.fn = convertFn(in.dtype, out.dtype);
  if (!p.fn)
    return v.unsupportedType(convertFn(in.dtype, in.dtype) ? out.dtype : in.dtype);
  p.n = in.numElements();
  p.in_size = dtypeSize(in.dtype);
  p.out_size = dtypeSize(out.dtype);
  return Status::ok();
}

void runConvert(const ConvertPlan &p, const KernelIo &io) {
  const uint8_t *a = io.in[0]->data();
  uint8_t *o = io.out[0].mutableData();
  io.rc.cpu->parallelFor((p.n + kElementwiseGrain - 1) / kElementwiseGrain, [&](int64_t t) {
    int64_t off = t * kElementwiseGrain, len = std::min(kElementwiseGrain, p.n - off);
    p.fn(a + off * p.in_size, o + off * p.out_size, len);
  });
}

} // namespace

ConvertFn convertFn(DType from, DType to) {
  ConvertFn fn = nullptr;
  visitNumericType(from, [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    visitNumericType(to, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      fn = &convertLoop<From, To>;
    });
  });
  return fn;
}

void registerConvertKernels(KernelRegistry &r) {
  r.add("stablehlo.convert", &makeKernel<ConvertPlan, planConvert, runConvert>);
}

} // namespace rs::cpu
