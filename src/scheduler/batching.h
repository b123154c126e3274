//===- scheduler/batching.h - Batch forming: sizes, padding, slicing -------===//
//
// Pure functions behind the dispatch loop (DESIGN.md "Request path"), free of threads
// and clocks so they are tested directly:
// - which compiled batch size runs a given number of rows (`runtime.batch_sizes`),
// - how a request larger than the largest compiled size is split (always the same way),
// - concatenating the rows of several requests along the batch axis, zero-padded to the
//   compiled size, and slicing the outputs back per request.
//
// Tensors are row-major; a batch axis is a 0-based axis index (-1: the tensor has none).
// Row counts and sizes are element rows along that axis. No function here fails on valid
// input; callers (the scheduler) check shapes first.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/tensor.h"

#include <cstdint>
#include <span>
#include <vector>

namespace rs::scheduler {

/// `runtime.batch_sizes` (reproducibility page): `all` picks the smallest compiled size
/// that holds the rows; `largest` always runs the largest compiled program.
enum class BatchSizePolicy { kAll, kLargest };

/// The compiled size that runs `rows` rows: the smallest size >= rows (kAll) or the
/// largest size (kLargest). `sizes` is sorted ascending and non-empty; rows must be
/// 1..sizes.back().
int64_t chooseBatchSize(std::span<const int64_t> sizes, int64_t rows, BatchSizePolicy policy);

/// A contiguous range of rows [begin, begin + count) of one request.
struct RowRange {
  int64_t begin = 0;
  int64_t count = 0;
};

/// Splits `rows` into pieces of at most `largest` rows: full pieces first, then the
/// remainder. Depends only on (rows, largest), so the same request always splits the same way.
std::vector<RowRange> splitRows(int64_t rows, int64_t largest);

/// Whether `a` and `b` have the same rank and the same dims on every axis but `axis` (-1:
/// every axis), so that their rows can be gathered into one batch.
bool sameRowShape(const Tensor &a, const Tensor &b, int64_t axis);

/// One request's rows placed into a batch.
struct BatchPart {
  const Tensor *tensor = nullptr; // the request's tensor for this input
  RowRange rows;                  // which of its rows
};

/// Builds a tensor with `batch_rows` rows along `axis` holding the parts' rows in order,
/// zero-filling the rest. Every part's tensor has the same dtype and the same non-batch dims.
Tensor gatherRows(std::span<const BatchPart> parts, int64_t axis, int64_t batch_rows);

/// Rows [range.begin, range.begin + range.count) of `t` along `axis`: a view that shares
/// `t`'s bytes (and keeps them alive) when those rows are contiguous, i.e. every dim before
/// `axis` is 1 (the batch axis first, as in most programs); otherwise a copy.
Tensor sliceRows(const Tensor &t, int64_t axis, RowRange range);

} // namespace rs::scheduler
