//===- cpu/kernels/elementwise.cc - Unary and binary elementwise ops -------===//
//
// stablehlo.{abs, negate, sign, not, popcnt, count_leading_zeros, sqrt, rsqrt, cbrt,
// exponential, exponential_minus_one, log, log_plus_one, logistic, sine, cosine, tan,
// tanh, floor, ceil, round_nearest_even, round_nearest_afz, is_finite}, chlo.{erf, erfc,
// tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, lgamma, square, is_inf,
// is_pos_inf, is_neg_inf, next_after},
// and stablehlo.{add, subtract, multiply, divide, remainder, maximum, minimum, power,
// atan2, and, or, xor, shift_left, shift_right_logical, shift_right_arithmetic}
// (stablehlo.{real, imag, complex}: complex_parts.cc).
//
// Shapes: operands and result have one shape (StableHLO has no implicit broadcasting);
// the result has the operand element type (is_finite, is_*inf: i1). Dtypes per op as in
// element_ops.h (f32, f64, i1, i8..i64, ui8..ui64, complex<f32>, complex<f64>; f16 and
// bf16 computed in f32 and rounded once; abs of a complex gives its part type). The ops are
// verified (ir/verify_elementwise.cc); the plans pick the loops. Errors at plan time:
// InvalidArgument for a result element type that is not the op's, Unimplemented for an
// element type the op lacks. Large tensors are split into fixed-size tiles over the context's
// threads; each element is computed independently, so results do not depend on the thread count. A
// binary op may read one operand through a folded broadcast_in_dim (broadcast_folding.cc):
// element (i / repeat) % period of the broadcast's operand, the same value the broadcast would
// give. Spec: openxla/stablehlo docs/spec.md, sections of each op.
//
//===----------------------------------------------------------------------===//
#include "cpu/kernels/element_ops.h"
#include "cpu/kernels/kernel.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#endif

namespace rs::cpu {
namespace {

template <typename Op, typename T> void unaryLoop(const uint8_t *in, uint8_t *out, int64_t n) {
  using R = decltype(ops::applyUnary<Op>(T{}));
  const T *a = reinterpret_cast<const T *>(in);
  R *o = reinterpret_cast<R *>(out);
  for (int64_t i = 0; i < n; ++i)
    o[i] = ops::applyUnary<Op>(a[i]);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
/// unaryLoop compiled for AVX-512 with 512-bit vectors, for the f32 ops written as
/// straight-line double arithmetic (erfc, exp: 8 double lanes instead of AVX2's 4). Every
/// element gets the same IEEE operations as in unaryLoop, so the results are the same bits.
template <typename Op>
[[gnu::target("arch=x86-64-v4,prefer-vector-width=512")]] void
f32LoopAvx512(const uint8_t *in, uint8_t *out, int64_t n) {
  const float *a = reinterpret_cast<const float *>(in);
  float *o = reinterpret_cast<float *>(out);
  for (int64_t i = 0; i < n; ++i)
    o[i] = Op::apply(a[i]);
}

/// f32 erfc for AVX-512, chunk by chunk: the elements with |x| >= 1 (and NaNs) are gathered
/// with vector compresses, then ops::erfcF32Scattered runs every element through its own piece
/// only. Each element gets erfcF32's bits.
[[gnu::target("arch=x86-64-v4,prefer-vector-width=512")]] void
erfcLoopAvx512(const uint8_t *in, uint8_t *out, int64_t n) {
  constexpr int64_t kChunk = 512;
  // 16 lanes of slack: a compress stores a whole vector at the running count.
  alignas(64) int32_t index[kChunk + 16];
  alignas(64) float gathered[kChunk + 16];
  const float *a = reinterpret_cast<const float *>(in);
  float *o = reinterpret_cast<float *>(out);
  const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512 one = _mm512_set1_ps(1.0f), three = _mm512_set1_ps(3.0f);
  for (int64_t begin = 0; begin < n; begin += kChunk) {
    const int64_t len = std::min(kChunk, n - begin);
    const float *x = a + begin;
    int64_t m = 0, j = 0;
    __mmask16 far = 0;
    // Gathered before the output is written: it may be the input.
    for (; j + 16 <= len; j += 16) {
      const __m512 v = _mm512_loadu_ps(x + j);
      const __m512 abs_v = _mm512_abs_ps(v);
      const __mmask16 tail = _mm512_cmp_ps_mask(abs_v, one, _CMP_NLT_UQ); // !(|x| < 1)
      far |= _mm512_mask_cmp_ps_mask(tail, abs_v, three, _CMP_NLT_UQ);
      const __m512i pos = _mm512_add_epi32(lanes, _mm512_set1_epi32(static_cast<int>(j)));
      _mm512_storeu_si512(index + m, _mm512_maskz_compress_epi32(tail, pos));
      _mm512_storeu_ps(gathered + m, _mm512_maskz_compress_ps(tail, v));
      m += __builtin_popcount(tail);
    }
    bool has_far = far != 0;
    for (; j < len; ++j)
      if (!(std::fabs(x[j]) < 1.0f)) {
        has_far |= !(std::fabs(x[j]) < 3.0f);
        index[m] = static_cast<int32_t>(j);
        gathered[m++] = x[j];
      }
    ops::erfcF32Scattered(x, o + begin, len, index, gathered, m, has_far);
  }
}
#endif

/// The loop of unary Op over T: unaryLoop, or a wider build of it where the CPU has one.
template <typename Op, typename T>
auto unaryLoopFor() -> void (*)(const uint8_t *, uint8_t *, int64_t) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  if constexpr ((std::is_same_v<Op, ops::Erfc> ||
                 std::is_same_v<Op, ops::Exponential>)&&std::is_same_v<T, float>) {
    static const bool avx512 = __builtin_cpu_supports("x86-64-v4");
    if (avx512 && std::is_same_v<Op, ops::Erfc>)
      return &erfcLoopAvx512;
    if (avx512)
      return &f32LoopAvx512<Op>;
  }
#endif
  return &unaryLoop<Op, T>;
}

template <typename Op, typename T>
void binaryLoop(const uint8_t *lhs, const uint8_t *rhs, uint8_t *out, int64_t n) {
  const T *a = reinterpret_cast<const T *>(lhs);
  const T *b = reinterpret_cast<const T *>(rhs);
  T *o = reinterpret_cast<T *>(out);
  for (int64_t i = 0; i < n; ++i)
    o[i] = ops::applyBinary<Op>(a[i], b[i]);
}

struct UnaryPlan {
  void (*fn)(const uint8_t *, uint8_t *, int64_t) = nullptr;
  int64_t n = 0;
  int64_t in_size = 0, out_size = 0;
};

template <typename Op> Status planUnary(OpView &v, UnaryPlan &p) {
  const TensorType &in = v.operand(0), &out = v.result(0);
  bool to_bool = false; // predicates (is_finite, is_inf, ...) give i1
  bool to_part = false; // abs of a complex gives its part type
  visitNumericOrComplexType(in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (ops::kSupported<Op, T>) {
      using R = decltype(ops::applyUnary<Op>(T{}));
      p.fn = unaryLoopFor<Op, T>();
      to_bool = std::is_same_v<R, bool> && !std::is_same_v<T, bool>;
      to_part = ops::kComplex<T> && !std::is_same_v<R, T>;
    }
  });
  if (!p.fn)
    return v.unsupportedType(in.dtype);
  DType expected = to_bool ? DType::kBool : to_part ? complexPartType(in.dtype) : in.dtype;
  if (out.dtype != expected)
    return v.error() << "result type " << out.toString() << " does not match operand type "
                     << in.toString();
  p.n = in.numElements();
  p.in_size = dtypeSize(in.dtype);
  p.out_size = dtypeSize(out.dtype);
  return Status::ok();
}

void runUnary(const UnaryPlan &p, const KernelIo &io) {
  const uint8_t *a = io.in[0]->data();
  uint8_t *o = io.out[0].mutableData();
  if (p.n <= kElementwiseGrain) {
    p.fn(a, o, p.n);
    return;
  }
  io.rc.cpu->parallelFor((p.n + kElementwiseGrain - 1) / kElementwiseGrain, [&](int64_t t) {
    int64_t b = t * kElementwiseGrain, len = std::min(kElementwiseGrain, p.n - b);
    p.fn(a + b * p.in_size, o + b * p.out_size, len);
  });
}

/// o[i] = op(a[i], s) (kScalarLhs false) or op(s, a[i]) (true): binaryLoop with one operand
/// fixed, the same arithmetic per element.
template <typename Op, typename T, bool kScalarLhs>
void binaryScalarLoop(const uint8_t *x, const uint8_t *scalar, uint8_t *out, int64_t n) {
  const T *a = reinterpret_cast<const T *>(x);
  const T s = *reinterpret_cast<const T *>(scalar);
  T *o = reinterpret_cast<T *>(out);
  for (int64_t i = 0; i < n; ++i)
    o[i] = kScalarLhs ? ops::applyBinary<Op>(s, a[i]) : ops::applyBinary<Op>(a[i], s);
}

struct BinaryPlan {
  void (*fn)(const uint8_t *, const uint8_t *, uint8_t *, int64_t) = nullptr;
  // scalar_fn[k]: operand k is one element (binaryScalarLoop; x is the other operand).
  void (*scalar_fn[2])(const uint8_t *, const uint8_t *, uint8_t *, int64_t) = {nullptr, nullptr};
  int64_t n = 0;
  int64_t size = 0;
  // A folded broadcast_in_dim (Kernel::withBroadcastOperand): operand `bcast` (-1: none);
  // output element i reads its element index.at(i).
  int bcast = -1;
  BroadcastIndex index;
};

template <typename Op> Status planBinary(OpView &v, BinaryPlan &p) {
  const TensorType &a = v.operand(0);
  visitNumericOrComplexType(a.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (ops::kSupported<Op, T>) {
      p.fn = &binaryLoop<Op, T>;
      p.scalar_fn[0] = &binaryScalarLoop<Op, T, true>;
      p.scalar_fn[1] = &binaryScalarLoop<Op, T, false>;
    }
  });
  if (!p.fn)
    return v.unsupportedType(a.dtype);
  p.n = a.numElements();
  p.size = dtypeSize(a.dtype);
  return Status::ok();
}

/// Output elements [begin, end) of a binary op with a folded broadcast operand, in runs that
/// read either a contiguous stretch of the broadcast operand (repeat 1) or one element of it.
/// `full` and `o` point at element `begin` of the full-size operand and of the output; `src`
/// at the broadcast operand's first element. The runs after the first start at a period
/// (repeat 1) or repeat boundary, so their index into the operand advances without divisions.
void runBroadcastRange(const BinaryPlan &p, const uint8_t *full, const uint8_t *src, uint8_t *o,
                       int64_t begin, int64_t end) {
  const int64_t es = p.size;
  const BroadcastIndex &b = p.index;
  auto outer = [&](int64_t i) {
    return b.outer_period == 1 ? 0 : ((i / b.outer_repeat) % b.outer_period) * b.period;
  };
  if (b.repeat == 1) { // runs within one period (outer_repeat is a multiple of it)
    for (int64_t i = begin, j = begin % b.period; i < end; j = 0) {
      const int64_t at = (i - begin) * es, len = std::min(b.period - j, end - i);
      const uint8_t *s = src + (outer(i) + j) * es;
      if (p.bcast == 0)
        p.fn(s, full + at, o + at, len);
      else
        p.fn(full + at, s, o + at, len);
      i += len;
    }
    return;
  }
  const int64_t q = begin / b.repeat;
  for (int64_t i = begin, r = begin - q * b.repeat, k = q % b.period; i < end; r = 0) {
    const int64_t at = (i - begin) * es, len = std::min(b.repeat - r, end - i);
    p.scalar_fn[p.bcast](full + at, src + (outer(i) + k) * es, o + at, len);
    i += len;
    if (++k == b.period)
      k = 0;
  }
}

void runBinary(const BinaryPlan &p, const KernelIo &io) {
  const uint8_t *a = io.in[0]->data(), *b = io.in[1]->data();
  uint8_t *o = io.out[0].mutableData();
  if (p.bcast >= 0) {
    const uint8_t *src = p.bcast == 0 ? a : b, *full = p.bcast == 0 ? b : a;
    if (p.n <= kElementwiseGrain) {
      runBroadcastRange(p, full, src, o, 0, p.n);
      return;
    }
    io.rc.cpu->parallelFor((p.n + kElementwiseGrain - 1) / kElementwiseGrain, [&](int64_t t) {
      const int64_t off = t * kElementwiseGrain;
      runBroadcastRange(p, full + off * p.size, src, o + off * p.size, off,
                        std::min(p.n, off + kElementwiseGrain));
    });
    return;
  }
  if (p.n <= kElementwiseGrain) {
    p.fn(a, b, o, p.n);
    return;
  }
  io.rc.cpu->parallelFor((p.n + kElementwiseGrain - 1) / kElementwiseGrain, [&](int64_t t) {
    int64_t off = t * kElementwiseGrain, len = std::min(kElementwiseGrain, p.n - off);
    p.fn(a + off * p.size, b + off * p.size, o + off * p.size, len);
  });
}

/// A unary op's kernel (fusable: Kernel::elementwise).
class UnaryKernel final : public Kernel {
public:
  explicit UnaryKernel(UnaryPlan plan) : plan_(plan) {}
  void run(const KernelIo &io) const override { runUnary(plan_, io); }
  bool elementwise() const override { return true; }
  void runElements(const uint8_t *const *in, uint8_t *out, int64_t, int64_t len) const override {
    plan_.fn(in[0], out, len);
  }

private:
  UnaryPlan plan_;
};

template <typename Op> Result<std::unique_ptr<Kernel>> makeUnary(OpView &v) {
  UnaryPlan plan;
  RS_RETURN_IF_ERROR(planUnary<Op>(v, plan));
  return std::unique_ptr<Kernel>(std::make_unique<UnaryKernel>(plan));
}

template <typename Op> void addUnary(KernelRegistry &r, const char *name) {
  r.add(name, &makeUnary<Op>, OutputMode::kOverwritten);
}

/// A binary op's kernel; the compiler may fold a broadcast_in_dim operand into it.
class BinaryKernel final : public Kernel {
public:
  explicit BinaryKernel(BinaryPlan plan) : plan_(plan) {}
  void run(const KernelIo &io) const override { runBinary(plan_, io); }
  bool elementwise() const override { return true; }
  int broadcastOperand() const override { return plan_.bcast; }
  const BroadcastIndex *broadcastIndex() const override {
    return plan_.bcast >= 0 ? &plan_.index : nullptr;
  }
  void runElements(const uint8_t *const *in, uint8_t *out, int64_t begin,
                   int64_t len) const override {
    if (plan_.bcast >= 0)
      runBroadcastRange(plan_, in[1 - plan_.bcast], in[plan_.bcast], out, begin, begin + len);
    else
      plan_.fn(in[0], in[1], out, len);
  }
  std::unique_ptr<Kernel> withBroadcastOperand(int operand,
                                               const BroadcastIndex &index) const override {
    const int64_t inner = index.repeat * index.period;
    if (plan_.bcast >= 0 || (operand != 0 && operand != 1) || plan_.n == 0 || index.repeat < 1 ||
        index.period < 1 || inner > plan_.n || plan_.n % inner != 0 || index.outer_period < 1 ||
        (index.outer_period > 1 &&
         (index.outer_repeat % inner != 0 || plan_.n % (index.outer_repeat * index.outer_period))))
      return nullptr;
    BinaryPlan p = plan_;
    p.bcast = operand;
    p.index = index;
    if (index.period == 1 && index.outer_period == 1)
      p.index.repeat = p.n; // one element: a single run per tile
    if (index.outer_period == 1)
      p.index.outer_repeat = 1;
    return std::make_unique<BinaryKernel>(p);
  }

private:
  BinaryPlan plan_;
};

template <typename Op> Result<std::unique_ptr<Kernel>> makeBinary(OpView &v) {
  BinaryPlan plan;
  RS_RETURN_IF_ERROR(planBinary<Op>(v, plan));
  return std::unique_ptr<Kernel>(std::make_unique<BinaryKernel>(plan));
}

template <typename Op> void addBinary(KernelRegistry &r, const char *name) {
  r.add(name, &makeBinary<Op>, OutputMode::kOverwritten);
}

} // namespace

void registerElementwiseKernels(KernelRegistry &r) {
  addUnary<ops::Abs>(r, "stablehlo.abs");
  addUnary<ops::Negate>(r, "stablehlo.negate");
  addUnary<ops::Sign>(r, "stablehlo.sign");
  addUnary<ops::Not>(r, "stablehlo.not");
  addUnary<ops::PopulationCount>(r, "stablehlo.popcnt");
  addUnary<ops::CountLeadingZeros>(r, "stablehlo.count_leading_zeros");
  addUnary<ops::Sqrt>(r, "stablehlo.sqrt");
  addUnary<ops::Rsqrt>(r, "stablehlo.rsqrt");
  addUnary<ops::Cbrt>(r, "stablehlo.cbrt");
  addUnary<ops::Exponential>(r, "stablehlo.exponential");
  addUnary<ops::ExponentialMinusOne>(r, "stablehlo.exponential_minus_one");
  addUnary<ops::Log>(r, "stablehlo.log");
  addUnary<ops::LogPlusOne>(r, "stablehlo.log_plus_one");
  addUnary<ops::Logistic>(r, "stablehlo.logistic");
  addUnary<ops::Sine>(r, "stablehlo.sine");
  addUnary<ops::Cosine>(r, "stablehlo.cosine");
  addUnary<ops::Tan>(r, "stablehlo.tan");
  addUnary<ops::Tanh>(r, "stablehlo.tanh");
  addUnary<ops::Floor>(r, "stablehlo.floor");
  addUnary<ops::Ceil>(r, "stablehlo.ceil");
  addUnary<ops::RoundNearestAfz>(r, "stablehlo.round_nearest_afz");
  addUnary<ops::RoundNearestEven>(r, "stablehlo.round_nearest_even");
  addUnary<ops::IsFinite>(r, "stablehlo.is_finite");
  addUnary<ops::Erf>(r, "chlo.erf");
  addUnary<ops::Erfc>(r, "chlo.erfc");
  addUnary<ops::Tan>(r, "chlo.tan");
  addUnary<ops::Asin>(r, "chlo.asin");
  addUnary<ops::Acos>(r, "chlo.acos");
  addUnary<ops::Atan>(r, "chlo.atan");
  addUnary<ops::Sinh>(r, "chlo.sinh");
  addUnary<ops::Cosh>(r, "chlo.cosh");
  addUnary<ops::Asinh>(r, "chlo.asinh");
  addUnary<ops::Acosh>(r, "chlo.acosh");
  addUnary<ops::Atanh>(r, "chlo.atanh");
  addUnary<ops::Lgamma>(r, "chlo.lgamma");
  addUnary<ops::Square>(r, "chlo.square");
  addUnary<ops::IsInf>(r, "chlo.is_inf");
  addUnary<ops::IsPosInf>(r, "chlo.is_pos_inf");
  addUnary<ops::IsNegInf>(r, "chlo.is_neg_inf");

  addBinary<ops::Add>(r, "stablehlo.add");
  addBinary<ops::Subtract>(r, "stablehlo.subtract");
  addBinary<ops::Multiply>(r, "stablehlo.multiply");
  addBinary<ops::Divide>(r, "stablehlo.divide");
  addBinary<ops::Remainder>(r, "stablehlo.remainder");
  addBinary<ops::Maximum>(r, "stablehlo.maximum");
  addBinary<ops::Minimum>(r, "stablehlo.minimum");
  addBinary<ops::Power>(r, "stablehlo.power");
  addBinary<ops::Atan2>(r, "stablehlo.atan2");
  addBinary<ops::NextAfter>(r, "chlo.next_after");
  addBinary<ops::And>(r, "stablehlo.and");
  addBinary<ops::Or>(r, "stablehlo.or");
  addBinary<ops::Xor>(r, "stablehlo.xor");
  addBinary<ops::ShiftLeft>(r, "stablehlo.shift_left");
  addBinary<ops::ShiftRightLogical>(r, "stablehlo.shift_right_logical");
  addBinary<ops::ShiftRightArithmetic>(r, "stablehlo.shift_right_arithmetic");
}

} // namespace rs::cpu
