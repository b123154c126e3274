//===- client/tensor_compare.h - Comparing two answers' tensors -------------===//
//
// The one element-wise comparison of tensors the clients and tools make: `validate` reports
// how far a tensor moved from its recorded value, `loadgen --verify` accepts an answer
// equal to the first answer to the same payload, bit for bit or within a relative
// tolerance. Elements are read as double from their row-major bytes (f16 and bf16 through
// ir/float_bits.h; a complex element is its real and imaginary parts, compared as two).
//
// Thread safety: pure functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/dtype.h"
#include "support/tensor.h"

#include <cstdint>
#include <string_view>

namespace rs::client {

/// Largest differences between two tensors of the same dtype and shape: elements that
/// differ bit for bit, and over them the max |a - b| and max |a - b| / |a| (a = recorded;
/// inf when a is 0 or one side is NaN and the other is not). All zero when the dtypes or
/// shapes differ.
struct TensorDifference {
  int64_t elements_differing = 0;
  double max_abs_diff = 0;
  double max_rel_diff = 0;
};
TensorDifference tensorDifference(const Tensor &recorded, const Tensor &current);

/// Whether the elements `a` and `b` (the bytes of two tensors of `dtype`) are the same:
/// equal bytes, or, with `rtol` > 0 and a floating-point dtype (F16, BF16, F32, F64), the
/// same size and every element pair within |x - y| <= rtol * max(|x|, |y|) or both NaN.
bool sameWithin(std::string_view a, std::string_view b, DType dtype, double rtol);

} // namespace rs::client
