//===- cpu/kernels/sort.cc - stablehlo.sort, chlo.top_k --------------------===//
//
// stablehlo.sort: inputs[N] of one shape -> results[N] (same types), sorted along
// `dimension` (negative counts from the end) by `comparator` (lhs_0, rhs_0, lhs_1, rhs_1,
// ...) -> i1, evaluated per comparison. Always a stable merge sort (std::stable_sort), so
// is_stable = false gets a stable (and deterministic) result too. Slices are split over
// threads in fixed tiles.
// chlo.top_k: operand [..., n] -> values [..., k], indices i32 [..., k]: the k largest
// along the last dim, descending; floats in total order (NaN above +Inf, +0 above -0);
// ties keep the lower index first (as a stable sort does).
// Element types: sort: any the comparator's kernels take (1, 2, 4, 8 bytes); top_k: f32,
// f64 and integers. The ops are verified (ir/verify_reduce.cc: sort_c1..c5, top_k's k and
// results); the plans cut the slices. Errors at plan time: Unimplemented for other element
// types.
//
//===----------------------------------------------------------------------===//
#include "cpu/compiler.h"
#include "cpu/kernels/kernel.h"

#include <algorithm>
#include <bit>
#include <numeric>

namespace rs::cpu {
namespace {

constexpr int64_t kSortGrain = 4096; // elements per tile (about)

struct SortPlan {
  size_t n = 1;
  std::vector<int64_t> sizes; // element sizes
  int64_t outer = 1, len = 1, inner = 1;
  RegionRef comparator;
};

Status planSort(OpView &v, SortPlan &p) {
  const size_t n = v.operands().size();
  const TensorType &in0 = v.operand(0);
  for (size_t i = 0; i < n; ++i) {
    RS_RETURN_IF_ERROR(checkElementSize(v, v.operand(i).dtype));
    p.sizes.push_back(dtypeSize(v.operand(i).dtype));
  }
  RS_ASSIGN_OR_RETURN(int64_t dim, v.intAttr("dimension", -1));
  if (dim < 0)
    dim += in0.rank();
  p.n = n;
  p.outer = elementCount(std::span(in0.shape).first(static_cast<size_t>(dim)));
  p.len = in0.shape[static_cast<size_t>(dim)];
  p.inner = elementCount(std::span(in0.shape).subspan(static_cast<size_t>(dim) + 1));
  RS_ASSIGN_OR_RETURN(p.comparator, v.compileRegion(0));
  return Status::ok();
}

void runSort(const SortPlan &p, const KernelIo &io) {
  const int64_t slices = p.outer * p.inner;
  const int64_t grain = std::max<int64_t>(1, kSortGrain / std::max<int64_t>(1, p.len));
  const int64_t tiles = (slices + grain - 1) / grain;
  io.rc.cpu->parallelFor(tiles, [&](int64_t t) {
    BodyEvaluator cmp(*p.comparator.callable,
                      io.in.subspan(p.comparator.capture_begin, p.comparator.capture_count), io.rc);
    std::vector<int64_t> perm(static_cast<size_t>(p.len));
    for (int64_t s = t * grain, end = std::min(slices, (t + 1) * grain); s < end; ++s) {
      const int64_t base = (s / p.inner) * p.len * p.inner + s % p.inner;
      std::iota(perm.begin(), perm.end(), int64_t{0});
      std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
        for (size_t i = 0; i < p.n; ++i) {
          const uint8_t *data = io.in[i]->data();
          cmp.setArg(2 * i, data + (base + a * p.inner) * p.sizes[i]);
          cmp.setArg(2 * i + 1, data + (base + b * p.inner) * p.sizes[i]);
        }
        cmp.run();
        return *cmp.result(0) != 0;
      });
      for (size_t i = 0; i < p.n; ++i) {
        const int64_t es = p.sizes[i];
        const uint8_t *src = io.in[i]->data();
        uint8_t *dst = io.out[i].mutableData();
        for (int64_t j = 0; j < p.len; ++j)
          std::memcpy(dst + (base + j * p.inner) * es,
                      src + (base + perm[static_cast<size_t>(j)] * p.inner) * es,
                      static_cast<size_t>(es));
      }
    }
  });
}

//===----------------------------------------------------------------------===//
// chlo.top_k
//===----------------------------------------------------------------------===//

template <typename T> auto orderKey(T x) {
  if constexpr (kIsHalf<T>) {
    return orderKey(x.toFloat());
  } else if constexpr (std::is_floating_point_v<T>) {
    using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
    I i = std::bit_cast<I>(x);
    return i < 0 ? static_cast<I>(i ^ std::numeric_limits<I>::max()) : i;
  } else {
    return x;
  }
}

template <typename T>
void topKRows(const uint8_t *in_bytes, uint8_t *values_bytes, int32_t *indices, int64_t row_begin,
              int64_t row_end, int64_t n, int64_t k) {
  const T *in = reinterpret_cast<const T *>(in_bytes);
  T *values = reinterpret_cast<T *>(values_bytes);
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t r = row_begin; r < row_end; ++r) {
    const T *row = in + r * n;
    std::iota(perm.begin(), perm.end(), int64_t{0});
    // A strict total order (value descending, then index ascending): partial_sort then
    // gives exactly what a stable descending sort would.
    std::partial_sort(perm.begin(), perm.begin() + k, perm.end(), [&](int64_t a, int64_t b) {
      auto ka = orderKey(row[a]), kb = orderKey(row[b]);
      return ka > kb || (ka == kb && a < b);
    });
    for (int64_t j = 0; j < k; ++j) {
      values[r * k + j] = row[perm[static_cast<size_t>(j)]];
      indices[r * k + j] = static_cast<int32_t>(perm[static_cast<size_t>(j)]);
    }
  }
}

struct TopKPlan {
  void (*fn)(const uint8_t *, uint8_t *, int32_t *, int64_t, int64_t, int64_t, int64_t) = nullptr;
  int64_t rows = 0, n = 0, k = 0;
};

Status planTopK(OpView &v, TopKPlan &p) {
  const TensorType &in = v.operand(0);
  RS_ASSIGN_OR_RETURN(int64_t k, v.intAttr("k"));
  const int64_t n = in.shape.back();
  visitNumericType(in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>)
      p.fn = &topKRows<T>;
  });
  if (!p.fn)
    return v.unsupportedType(in.dtype);
  p.rows = n == 0 ? 0 : in.numElements() / n;
  p.n = n;
  p.k = k;
  return Status::ok();
}

void runTopK(const TopKPlan &p, const KernelIo &io) {
  const int64_t grain = std::max<int64_t>(1, kSortGrain / std::max<int64_t>(1, p.n));
  const int64_t tiles = (p.rows + grain - 1) / grain;
  io.rc.cpu->parallelFor(tiles, [&](int64_t t) {
    p.fn(io.in[0]->data(), io.out[0].mutableData(), io.out[1].mutableDataAs<int32_t>(), t * grain,
         std::min(p.rows, (t + 1) * grain), p.n, p.k);
  });
}

} // namespace

void registerSortKernels(KernelRegistry &r) {
  r.add("stablehlo.sort", &makeKernel<SortPlan, planSort, runSort>);
  r.add("chlo.top_k", &makeKernel<TopKPlan, planTopK, runTopK>);
}

} // namespace rs::cpu
