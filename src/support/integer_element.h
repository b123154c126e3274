//===- support/integer_element.h - One integer element read as int64 -------===//
//
// The element read that index operands (gather, scatter, dynamic_slice start indices) and
// integer attributes (dense integer tensors) share: any integer or bool dtype, as int64.
// Thread safety: a pure function.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/dtype.h"

#include <cstdint>

namespace rs {

/// Reads one element of an integer (or bool) dtype at `p` as int64; unsigned values above
/// INT64_MAX saturate, and any other dtype reads as 0.
int64_t readIntegerElement(DType t, const uint8_t *p);

} // namespace rs
