//===- cpu/kernels/convert.cc - convert, bitcast_convert, reduce_precision -===//
//
// stablehlo.bitcast_convert (the same bits under another type; i1 elements are bits)
// and stablehlo.reduce_precision (round to a narrower float format and back) are below.
//
// Elementwise conversion between any two of f16, bf16, f32, f64, i1, i8..i64, ui8..ui64
// (same shape). Rules (openxla/stablehlo docs/spec.md "convert"; XLA where the spec leaves the
// choice):
//   - to i1: x != 0 (NaN -> true); from i1: 0 or 1;
//   - integer -> integer: two's complement truncation or extension;
//   - integer -> float, float -> float: round to nearest even (once: to f16/bf16 through
//     a round-to-odd f32);
//   - float -> integer: truncate toward zero, saturate at the type's range, NaN -> 0;
//   - complex<f32> / complex<f64>: to complex, each part as float -> float; a real
//     operand gives a zero imaginary part; complex -> real, integer or i1 converts the
//     real part and drops the imaginary one (XLA and the reference interpreter's tests).
// The ops are verified (ir/verify_elementwise.cc: convert_c1, bitcast_convert_c1, c2,
// reduce_precision_c1..c3). Errors at plan time: Unimplemented for other element types.
//
//===----------------------------------------------------------------------===//
#include "cpu/kernels/element_ops.h"
#include "cpu/kernels/kernel.h"

#include <bit>

namespace rs::cpu {
namespace {

template <typename From, typename To> To convertOne(From x) {
  if constexpr (ops::kComplex<To>) {
    using P = typename To::value_type;
    if constexpr (ops::kComplex<From>) {
      using Q = typename From::value_type;
      return To(convertOne<Q, P>(x.real()), convertOne<Q, P>(x.imag()));
    } else {
      return To(convertOne<From, P>(x), P(0));
    }
  } else if constexpr (ops::kComplex<From>) {
    return convertOne<typename From::value_type, To>(x.real());
  } else if constexpr (kIsHalf<To>) {
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
  const TensorType &in = v.operand(0), &out = v.result(0);
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

//===----------------------------------------------------------------------===//
// bitcast_convert
//===----------------------------------------------------------------------===//

// The same bits under another type. Element sizes may differ: the narrower side has an
// extra last dim holding (wide size / narrow size) elements, little-endian (the first
// element is the lowest part). i1 elements are single bits, packed the same way.
struct BitcastPlan {
  enum class Mode : uint8_t { kBytes, kPackBits, kUnpackBits } mode = Mode::kBytes;
  int64_t bytes = 0; // kBytes
  int64_t words = 0; // kPack/kUnpack: wide elements
  int64_t wide_size = 0, bits_per_word = 0;
};

Status planBitcast(OpView &v, BitcastPlan &p) {
  const TensorType &in = v.operand(0), &out = v.result(0);
  // A sub-byte integer or a 4/6-bit float does not fill its storage byte: its bits are not
  // the bytes the copy below moves.
  for (DType t : {in.dtype, out.dtype})
    if (t != DType::kBool && dtypeBitWidth(t) != dtypeSize(t) * 8)
      return v.unsupportedType(t);
  const bool in_bits = in.dtype == DType::kBool, out_bits = out.dtype == DType::kBool;
  const int64_t in_width = in_bits ? 1 : dtypeSize(in.dtype) * 8;
  const int64_t out_width = out_bits ? 1 : dtypeSize(out.dtype) * 8;
  if (in_width == 0 || out_width == 0)
    return v.unsupportedType(in_width == 0 ? in.dtype : out.dtype);
  if (in_bits == out_bits) {
    p.mode = BitcastPlan::Mode::kBytes;
    p.bytes = in.byteSize();
  } else if (in_bits) {
    p.mode = BitcastPlan::Mode::kPackBits;
    p.words = out.numElements();
    p.wide_size = dtypeSize(out.dtype);
    p.bits_per_word = out_width;
  } else {
    p.mode = BitcastPlan::Mode::kUnpackBits;
    p.words = in.numElements();
    p.wide_size = dtypeSize(in.dtype);
    p.bits_per_word = in_width;
  }
  return Status::ok();
}

void runBitcast(const BitcastPlan &p, const KernelIo &io) {
  const uint8_t *in = io.in[0]->data();
  uint8_t *out = io.out[0].mutableData();
  switch (p.mode) {
  case BitcastPlan::Mode::kBytes: std::memcpy(out, in, static_cast<size_t>(p.bytes)); break;
  case BitcastPlan::Mode::kPackBits:
    for (int64_t w = 0; w < p.words; ++w)
      for (int64_t b = 0; b < p.bits_per_word; ++b)
        if (in[w * p.bits_per_word + b])
          out[w * p.wide_size + b / 8] |= static_cast<uint8_t>(1u << (b % 8));
    break;
  case BitcastPlan::Mode::kUnpackBits:
    for (int64_t w = 0; w < p.words; ++w)
      for (int64_t b = 0; b < p.bits_per_word; ++b)
        out[w * p.bits_per_word + b] = (in[w * p.wide_size + b / 8] >> (b % 8)) & 1u;
    break;
  }
}

//===----------------------------------------------------------------------===//
// reduce_precision
//===----------------------------------------------------------------------===//

// Rounds to a float format with `exponent_bits` and `mantissa_bits` and back (XLA's
// ReducePrecision): mantissa rounded to nearest even, then exponents above the format's
// range become infinity and those at or below its smallest normal become zero (denormals
// flushed). NaN stays NaN when the format keeps a mantissa bit, else becomes infinity.
template <typename U, int kMant, int kExp> U reducePrecisionBits(U bits, int e, int m) {
  const U sign_mask = U(1) << (kMant + kExp);
  const U exp_mask = ((U(1) << kExp) - 1) << kMant;
  const U mant_mask = (U(1) << kMant) - 1;
  const bool nan = (bits & exp_mask) == exp_mask && (bits & mant_mask) != 0;
  U out = bits;
  if (m < kMant) {
    const U last = U(1) << (kMant - m);
    out += ((last >> 1) - 1) + ((out >> (kMant - m)) & 1);
    out &= ~(last - 1);
  }
  if (e < kExp) {
    const int64_t bias = (int64_t{1} << (kExp - 1)) - 1;
    const int64_t reduced = (int64_t{1} << (e - 1)) - 1;
    const U x_exp = out & exp_mask;
    if (x_exp > (static_cast<U>(bias + reduced) << kMant))
      out = (out & sign_mask) | exp_mask;
    else if (x_exp <= (static_cast<U>(bias - reduced) << kMant))
      out &= sign_mask;
  }
  if (nan) // a format without mantissa bits has no NaN: it becomes infinity
    return m > 0 ? bits : (bits & sign_mask) | exp_mask;
  return out;
}

template <typename T>
void reducePrecisionLoop(const uint8_t *in, uint8_t *out, int64_t n, int e, int m) {
  const T *a = reinterpret_cast<const T *>(in);
  T *o = reinterpret_cast<T *>(out);
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, double>) {
      o[i] = std::bit_cast<double>(
          reducePrecisionBits<uint64_t, 52, 11>(std::bit_cast<uint64_t>(a[i]), e, m));
    } else {
      float f;
      if constexpr (kIsHalf<T>)
        f = a[i].toFloat();
      else
        f = a[i];
      f = std::bit_cast<float>(reducePrecisionBits<uint32_t, 23, 8>(
          std::bit_cast<uint32_t>(f), std::min(e, 8), std::min(m, 23)));
      if constexpr (kIsHalf<T>)
        o[i] = T::fromFloat(f);
      else
        o[i] = f;
    }
  }
}

struct ReducePrecisionPlan {
  void (*fn)(const uint8_t *, uint8_t *, int64_t, int, int) = nullptr;
  int64_t n = 0;
  int exponent_bits = 8, mantissa_bits = 23;
};

Status planReducePrecision(OpView &v, ReducePrecisionPlan &p) {
  const TensorType &in = v.operand(0);
  RS_ASSIGN_OR_RETURN(int64_t e, v.intAttr("exponent_bits"));
  RS_ASSIGN_OR_RETURN(int64_t m, v.intAttr("mantissa_bits"));
  p.exponent_bits = static_cast<int>(e);
  p.mantissa_bits = static_cast<int>(m);
  switch (in.dtype) {
  case DType::kF16: p.fn = &reducePrecisionLoop<F16>; break;
  case DType::kBF16: p.fn = &reducePrecisionLoop<BF16>; break;
  case DType::kF32: p.fn = &reducePrecisionLoop<float>; break;
  case DType::kF64:
    p.fn = &reducePrecisionLoop<double>;
    p.exponent_bits = std::min(p.exponent_bits, 11);
    p.mantissa_bits = std::min(p.mantissa_bits, 52);
    break;
  default: return v.unsupportedType(in.dtype);
  }
  p.n = in.numElements();
  return Status::ok();
}

void runReducePrecision(const ReducePrecisionPlan &p, const KernelIo &io) {
  p.fn(io.in[0]->data(), io.out[0].mutableData(), p.n, p.exponent_bits, p.mantissa_bits);
}

} // namespace

ConvertFn convertFn(DType from, DType to) {
  ConvertFn fn = nullptr;
  visitNumericOrComplexType(from, [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    visitNumericOrComplexType(to, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      fn = &convertLoop<From, To>;
    });
  });
  return fn;
}

void registerConvertKernels(KernelRegistry &r) {
  r.add("stablehlo.convert", &makeKernel<ConvertPlan, planConvert, runConvert>,
        OutputMode::kOverwritten);
  r.add("stablehlo.bitcast_convert", &makeKernel<BitcastPlan, planBitcast, runBitcast>);
  r.add("stablehlo.reduce_precision",
        &makeKernel<ReducePrecisionPlan, planReducePrecision, runReducePrecision>);
}

} // namespace rs::cpu
