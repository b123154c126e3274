//===- client/tensor_compare.cc - Comparing two answers' tensors ------------===//
#include "client/tensor_compare.h"

#include "ir/float_bits.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace rs::client {
namespace {

/// Bytes of one compared element: a complex element's part, else the element.
int64_t partWidth(DType t) { return dtypeSize(t) / (isComplex(t) ? 2 : 1); }

template <class T> double load(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return static_cast<double>(v);
}

/// The element (or complex part) at `p` as a double; 0 for a dtype without a value here.
double elementValue(DType t, const uint8_t *p) {
  switch (t) {
  case DType::kBool: return *p ? 1 : 0;
  case DType::kI8: return load<int8_t>(p);
  case DType::kU8: return *p;
  case DType::kI16: return load<int16_t>(p);
  case DType::kU16: return load<uint16_t>(p);
  case DType::kI32: return load<int32_t>(p);
  case DType::kU32: return load<uint32_t>(p);
  case DType::kI64: return load<int64_t>(p);
  case DType::kU64: return load<uint64_t>(p);
  case DType::kF16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return ir::halfBitsToDouble(v);
  }
  case DType::kBF16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return ir::bf16BitsToDouble(v);
  }
  case DType::kF32:
  case DType::kComplex64: return load<float>(p);
  case DType::kF64:
  case DType::kComplex128: return load<double>(p);
  default: return 0;
  }
}

} // namespace

TensorDifference tensorDifference(const Tensor &a, const Tensor &b) {
  TensorDifference d;
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return d;
  const DType t = a.dtype();
  const int64_t width = partWidth(t);
  const int64_t n = a.byteSize() / std::max<int64_t>(width, 1);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t *pa = a.data() + i * width, *pb = b.data() + i * width;
    if (std::memcmp(pa, pb, static_cast<size_t>(width)) == 0)
      continue;
    ++d.elements_differing;
    const double x = elementValue(t, pa), y = elementValue(t, pb);
    double abs_diff, rel_diff;
    if (std::isnan(x) || std::isnan(y)) {
      abs_diff = rel_diff = (std::isnan(x) && std::isnan(y)) ? 0 : kInf; // NaN payloads
    } else if (x == y) {
      abs_diff = rel_diff = 0; // +0 vs -0
    } else {
      abs_diff = std::fabs(x - y);
      rel_diff = x == 0 ? kInf : abs_diff / std::fabs(x);
    }
    d.max_abs_diff = std::max(d.max_abs_diff, abs_diff);
    d.max_rel_diff = std::max(d.max_rel_diff, rel_diff);
  }
  return d;
}

bool sameWithin(std::string_view a, std::string_view b, DType dtype, double rtol) {
  if (a == b)
    return true;
  const bool floating =
      dtype == DType::kF16 || dtype == DType::kBF16 || dtype == DType::kF32 || dtype == DType::kF64;
  if (rtol <= 0 || a.size() != b.size() || !floating)
    return false;
  const size_t width = static_cast<size_t>(dtypeSize(dtype));
  for (size_t i = 0; i + width <= a.size(); i += width) {
    const double x = elementValue(dtype, reinterpret_cast<const uint8_t *>(a.data() + i));
    const double y = elementValue(dtype, reinterpret_cast<const uint8_t *>(b.data() + i));
    const bool close = std::fabs(x - y) <= rtol * std::max(std::fabs(x), std::fabs(y)) ||
                       (std::isnan(x) && std::isnan(y));
    if (!close)
      return false;
  }
  return true;
}

} // namespace rs::client
