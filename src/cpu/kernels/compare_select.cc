//===- cpu/kernels/compare_select.cc - compare, select, clamp --------------===//
//
// stablehlo.compare: lhs, rhs of one type -> i1 of the same shape. comparison_direction
// EQ/NE/GE/GT/LE/LT; compare_type FLOAT (IEEE: any comparison with NaN is false except
// NE), TOTALORDER (floats ordered -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN),
// SIGNED, UNSIGNED (integers and i1 read with that signedness); when compare_type is
// absent it follows the element type. Complex (FLOAT or TOTALORDER): lexicographic on
// (real, imag), each part compared as the compare_type says.
// stablehlo.select: pred (i1, rank 0 or the shape of the branches), on_true, on_false ->
// result of the branches' type; any element type.
// stablehlo.clamp: min, operand, max -> operand's type; min and max are rank 0 or the
// operand's shape; min(max(operand, min), max) with NaN-propagating maximum/minimum.
// The ops are verified (ir/verify_elementwise.cc: compare_c1..c3, select_c1, c2,
// clamp_c1..c3); the plans pick the loops. Errors at plan time: Unimplemented for
// unsupported element types.
// Spec: openxla/stablehlo docs/spec.md "compare", "select", "clamp".
//
//===----------------------------------------------------------------------===//
#include "cpu/kernels/element_ops.h"
#include "cpu/kernels/kernel.h"

#include <bit>
#include <utility>

namespace rs::cpu {
namespace {

enum class Direction : uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };
enum class CompareKind : uint8_t { kFloat, kTotalOrder, kSigned, kUnsigned };

template <typename T, CompareKind K> auto compareKey(T x) {
  if constexpr (ops::kComplex<T>) {
    // Lexicographic on (real, imag): std::pair's <=> compares the first parts and, when
    // they are equal, the second; an unordered (NaN) pair of parts makes every direction
    // but NE false.
    using P = typename T::value_type;
    return std::pair(compareKey<P, K>(x.real()), compareKey<P, K>(x.imag()));
  } else if constexpr (kIsHalf<T>) {
    return compareKey<float, K>(x.toFloat()); // exact, order-preserving
  } else if constexpr (K == CompareKind::kFloat) {
    return x;
  } else if constexpr (K == CompareKind::kTotalOrder) {
    using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
    I i = std::bit_cast<I>(x);
    return i < 0 ? static_cast<I>(i ^ std::numeric_limits<I>::max()) : i;
  } else if constexpr (ops::kBool<T>) {
    // i1 as a one-bit integer: signed true is -1.
    return static_cast<int8_t>(x ? (K == CompareKind::kSigned ? -1 : 1) : 0);
  } else if constexpr (K == CompareKind::kSigned) {
    return static_cast<std::make_signed_t<T>>(x);
  } else {
    return static_cast<std::make_unsigned_t<T>>(x);
  }
}

template <typename T, CompareKind K>
void compareLoop(const uint8_t *lhs, const uint8_t *rhs, bool *out, int64_t n, Direction d) {
  const T *a = reinterpret_cast<const T *>(lhs);
  const T *b = reinterpret_cast<const T *>(rhs);
#define RS_COMPARE_LOOP(op)                                                                        \
  for (int64_t i = 0; i < n; ++i)                                                                  \
    out[i] = compareKey<T, K>(a[i]) op compareKey<T, K>(b[i]);                                     \
  break;
  switch (d) {
  case Direction::kEq: RS_COMPARE_LOOP(==)
  case Direction::kNe: RS_COMPARE_LOOP(!=)
  case Direction::kGe: RS_COMPARE_LOOP(>=)
  case Direction::kGt: RS_COMPARE_LOOP(>)
  case Direction::kLe: RS_COMPARE_LOOP(<=)
  case Direction::kLt: RS_COMPARE_LOOP(<)
  }
#undef RS_COMPARE_LOOP
}

struct ComparePlan {
  void (*fn)(const uint8_t *, const uint8_t *, bool *, int64_t, Direction) = nullptr;
  Direction direction = Direction::kEq;
  int64_t n = 0, size = 0;
};

Status planCompare(OpView &v, ComparePlan &p) {
  const TensorType &a = v.operand(0);
  const ir::Attribute *dir = v.attr("comparison_direction");
  if (!dir)
    return v.error() << "is missing attribute 'comparison_direction'";
  static const std::pair<const char *, Direction> kDirs[] = {
      {"EQ", Direction::kEq}, {"NE", Direction::kNe}, {"GE", Direction::kGe},
      {"GT", Direction::kGt}, {"LE", Direction::kLe}, {"LT", Direction::kLt}};
  bool found = false;
  for (const auto &[name, d] : kDirs)
    if (dir->str == name) {
      p.direction = d;
      found = true;
    }
  if (!found)
    return v.error() << "has unknown comparison_direction '" << dir->str << "'";

  const bool is_float = isFloat(a.dtype) || isComplex(a.dtype);
  CompareKind kind = is_float            ? CompareKind::kFloat
                     : isSigned(a.dtype) ? CompareKind::kSigned
                                         : CompareKind::kUnsigned;
  if (const ir::Attribute *ct = v.attr("compare_type"); ct && ct->str != "NOTYPE") {
    if (ct->str == "FLOAT" && is_float)
      kind = CompareKind::kFloat;
    else if (ct->str == "TOTALORDER" && is_float)
      kind = CompareKind::kTotalOrder;
    else if (ct->str == "SIGNED" && !is_float)
      kind = CompareKind::kSigned;
    else if (ct->str == "UNSIGNED" && !is_float)
      kind = CompareKind::kUnsigned;
    else
      return v.error() << "compare_type " << ct->str << " does not fit element type "
                       << dtypeMlirName(a.dtype);
  }
  visitNumericOrComplexType(a.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (ops::kFloat<T> || kIsHalf<T> || ops::kComplex<T>) {
      p.fn = kind == CompareKind::kFloat ? &compareLoop<T, CompareKind::kFloat>
                                         : &compareLoop<T, CompareKind::kTotalOrder>;
    } else {
      p.fn = kind == CompareKind::kSigned ? &compareLoop<T, CompareKind::kSigned>
                                          : &compareLoop<T, CompareKind::kUnsigned>;
    }
  });
  if (!p.fn)
    return v.unsupportedType(a.dtype);
  p.n = a.numElements();
  p.size = dtypeSize(a.dtype);
  return Status::ok();
}

void runCompare(const ComparePlan &p, const KernelIo &io) {
  const uint8_t *a = io.in[0]->data(), *b = io.in[1]->data();
  bool *o = io.out[0].mutableDataAs<bool>();
  io.rc.cpu->parallelFor((p.n + kElementwiseGrain - 1) / kElementwiseGrain, [&](int64_t t) {
    int64_t off = t * kElementwiseGrain, len = std::min(kElementwiseGrain, p.n - off);
    p.fn(a + off * p.size, b + off * p.size, o + off, len, p.direction);
  });
}

//===----------------------------------------------------------------------===//
// select
//===----------------------------------------------------------------------===//

template <typename E>
void selectLoop(const bool *pred, int64_t pred_stride, const uint8_t *on_true,
                const uint8_t *on_false, uint8_t *out, int64_t n) {
  const E *a = reinterpret_cast<const E *>(on_true);
  const E *b = reinterpret_cast<const E *>(on_false);
  E *o = reinterpret_cast<E *>(out);
  for (int64_t i = 0; i < n; ++i)
    o[i] = pred[i * pred_stride] ? a[i] : b[i];
}

struct SelectPlan {
  void (*fn)(const bool *, int64_t, const uint8_t *, const uint8_t *, uint8_t *, int64_t) = nullptr;
  bool scalar_pred = false;
  int64_t n = 0, size = 0;
};

Status planSelect(OpView &v, SelectPlan &p) {
  const TensorType &pred = v.operand(0), &a = v.operand(1);
  p.scalar_pred = pred.rank() == 0;
  p.n = a.numElements();
  p.size = dtypeSize(a.dtype);
  switch (p.size) {
  case 1: p.fn = &selectLoop<uint8_t>; break;
  case 2: p.fn = &selectLoop<uint16_t>; break;
  case 4: p.fn = &selectLoop<uint32_t>; break;
  case 8: p.fn = &selectLoop<uint64_t>; break;
  case 16: p.fn = &selectLoop<std::complex<double>>; break;
  default: return v.unsupportedType(a.dtype);
  }
  return Status::ok();
}

void runSelect(const SelectPlan &p, const KernelIo &io) {
  const bool *pred = io.in[0]->dataAs<bool>();
  const uint8_t *a = io.in[1]->data(), *b = io.in[2]->data();
  uint8_t *o = io.out[0].mutableData();
  io.rc.cpu->parallelFor((p.n + kElementwiseGrain - 1) / kElementwiseGrain, [&](int64_t t) {
    int64_t off = t * kElementwiseGrain, len = std::min(kElementwiseGrain, p.n - off);
    p.fn(p.scalar_pred ? pred : pred + off, p.scalar_pred ? 0 : 1, a + off * p.size,
         b + off * p.size, o + off * p.size, len);
  });
}

//===----------------------------------------------------------------------===//
// clamp
//===----------------------------------------------------------------------===//

template <typename T>
void clampLoop(const uint8_t *lo_bytes, int64_t lo_stride, const uint8_t *x_bytes,
               const uint8_t *hi_bytes, int64_t hi_stride, uint8_t *out, int64_t n) {
  const T *lo = reinterpret_cast<const T *>(lo_bytes);
  const T *x = reinterpret_cast<const T *>(x_bytes);
  const T *hi = reinterpret_cast<const T *>(hi_bytes);
  T *o = reinterpret_cast<T *>(out);
  for (int64_t i = 0; i < n; ++i)
    o[i] = ops::applyBinary<ops::Minimum>(ops::applyBinary<ops::Maximum>(x[i], lo[i * lo_stride]),
                                          hi[i * hi_stride]);
}

struct ClampPlan {
  void (*fn)(const uint8_t *, int64_t, const uint8_t *, const uint8_t *, int64_t, uint8_t *,
             int64_t) = nullptr;
  bool scalar_lo = false, scalar_hi = false;
  int64_t n = 0, size = 0;
};

Status planClamp(OpView &v, ClampPlan &p) {
  const TensorType &lo = v.operand(0), &x = v.operand(1), &hi = v.operand(2);
  visitNumericType(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (ops::kNumeric<T> || kIsHalf<T>)
      p.fn = &clampLoop<T>;
  });
  if (!p.fn)
    return v.unsupportedType(x.dtype);
  p.scalar_lo = lo.rank() == 0;
  p.scalar_hi = hi.rank() == 0;
  p.n = x.numElements();
  p.size = dtypeSize(x.dtype);
  return Status::ok();
}

void runClamp(const ClampPlan &p, const KernelIo &io) {
  const uint8_t *lo = io.in[0]->data(), *x = io.in[1]->data(), *hi = io.in[2]->data();
  uint8_t *o = io.out[0].mutableData();
  io.rc.cpu->parallelFor((p.n + kElementwiseGrain - 1) / kElementwiseGrain, [&](int64_t t) {
    int64_t off = t * kElementwiseGrain, len = std::min(kElementwiseGrain, p.n - off);
    p.fn(p.scalar_lo ? lo : lo + off * p.size, p.scalar_lo ? 0 : 1, x + off * p.size,
         p.scalar_hi ? hi : hi + off * p.size, p.scalar_hi ? 0 : 1, o + off * p.size, len);
  });
}

} // namespace

void registerCompareSelectKernels(KernelRegistry &r) {
  r.add("stablehlo.compare", &makeKernel<ComparePlan, planCompare, runCompare>,
        OutputMode::kOverwritten);
  r.add("stablehlo.select", &makeKernel<SelectPlan, planSelect, runSelect>,
        OutputMode::kOverwritten);
  r.add("stablehlo.clamp", &makeKernel<ClampPlan, planClamp, runClamp>, OutputMode::kOverwritten);
}

} // namespace rs::cpu
