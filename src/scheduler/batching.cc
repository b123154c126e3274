//===- scheduler/batching.cc - Batch forming: sizes, padding, slicing ------===//
#include "scheduler/batching.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace rs::scheduler {
namespace {

/// Bytes of one row slab: product of the dims after `axis` times the element size.
int64_t innerBytes(const Tensor &t, int64_t axis) {
  int64_t n = dtypeSize(t.dtype());
  for (int64_t d = axis + 1; d < t.rank(); ++d)
    n *= t.shape()[static_cast<size_t>(d)];
  return n;
}

/// Number of slabs before `axis`: product of the dims before it.
int64_t outerCount(const Tensor &t, int64_t axis) {
  int64_t n = 1;
  for (int64_t d = 0; d < axis; ++d)
    n *= t.shape()[static_cast<size_t>(d)];
  return n;
}

} // namespace

int64_t chooseBatchSize(std::span<const int64_t> sizes, int64_t rows, BatchSizePolicy policy) {
  assert(!sizes.empty() && rows >= 1 && rows <= sizes.back());
  if (policy == BatchSizePolicy::kLargest)
    return sizes.back();
  return *std::lower_bound(sizes.begin(), sizes.end(), rows);
}

std::vector<RowRange> splitRows(int64_t rows, int64_t largest) {
  assert(largest > 0);
  std::vector<RowRange> pieces;
  for (int64_t begin = 0; begin < rows; begin += largest)
    pieces.push_back({begin, std::min(largest, rows - begin)});
  return pieces;
}

bool sameRowShape(const Tensor &a, const Tensor &b, int64_t axis) {
  if (a.rank() != b.rank())
    return false;
  for (int64_t d = 0; d < a.rank(); ++d)
    if (d != axis && a.shape()[static_cast<size_t>(d)] != b.shape()[static_cast<size_t>(d)])
      return false;
  return true;
}

Tensor gatherRows(std::span<const BatchPart> parts, int64_t axis, int64_t batch_rows) {
  assert(!parts.empty());
  const Tensor &first = *parts.front().tensor;
  Shape shape = first.shape();
  shape[static_cast<size_t>(axis)] = batch_rows;
  Tensor out = Tensor::zeros(first.dtype(), shape);
  const int64_t inner = innerBytes(first, axis);
  const int64_t outer = outerCount(first, axis);
  uint8_t *dst = out.mutableData();
  for (int64_t o = 0; o < outer; ++o) {
    int64_t row = 0;
    for (const BatchPart &part : parts) {
      const Tensor &src = *part.tensor;
      const int64_t src_rows = src.shape()[static_cast<size_t>(axis)];
      const uint8_t *from = src.data() + (o * src_rows + part.rows.begin) * inner;
      std::memcpy(dst + (o * batch_rows + row) * inner, from,
                  static_cast<size_t>(part.rows.count * inner));
      row += part.rows.count;
    }
  }
  return out;
}

Tensor sliceRows(const Tensor &t, int64_t axis, RowRange range) {
  Shape shape = t.shape();
  const int64_t src_rows = shape[static_cast<size_t>(axis)];
  shape[static_cast<size_t>(axis)] = range.count;
  const int64_t inner = innerBytes(t, axis);
  const int64_t outer = outerCount(t, axis);
  // The rows are one contiguous run of bytes: a view of them, no copy.
  if (outer == 1)
    return t.subview(range.begin * inner, std::move(shape));
  Tensor out = Tensor::zeros(t.dtype(), shape);
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out.mutableData() + o * range.count * inner,
                t.data() + (o * src_rows + range.begin) * inner,
                static_cast<size_t>(range.count * inner));
  return out;
}

} // namespace rs::scheduler
