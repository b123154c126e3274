//===- cpu/kernels/reduce_window.cc - stablehlo.reduce_window --------------===//
//
// inputs[N] (one shape), init_values[N] (rank 0) -> results[N], with window_dimensions,
// window_strides, base_dilations, window_dilations (default 1) and padding ([rank, 2],
// default 0). Per spec, the inputs are dilated by base_dilations and padded, holes and
// padding holding the init value; result[o] folds the window at o * stride (window
// elements w * window_dilation apart) in row-major window order, starting from init:
// acc = body(acc, x), padding elements included (as init). Fast path for one input and a
// single add/multiply/maximum/minimum/and/or body; general path evaluates the body.
// When the window leaves the last dim alone, a whole output row along it is folded at
// once (same per-element order). Work is split over output elements in tiles fixed by
// the shapes.
// The op is verified (ir/verify_reduce.cc: reduce_window_c1..c16); the plan builds the window
// index tables and picks the fast path. Errors at plan time: Unimplemented for an element
// type of another size.
//
//===----------------------------------------------------------------------===//
#include "cpu/compiler.h"
#include "cpu/kernels/element_ops.h"
#include "cpu/kernels/fold_types.h"
#include "cpu/kernels/kernel.h"
#include "ir/op_attributes.h"

#include <algorithm>

namespace rs::cpu {
namespace {

constexpr int64_t kWindowGrain = 65536; // window elements per tile (about)

struct ReduceWindowPlan;
using FastFn = void (*)(const ReduceWindowPlan &, const uint8_t *in, const uint8_t *init,
                        uint8_t *out, int64_t begin, int64_t end);

struct ReduceWindowPlan {
  size_t n = 1;
  std::vector<DType> types;
  Shape out_shape;
  std::vector<int64_t> window, in_strides;
  // When the last dim is untouched by the window (size 1, stride 1, no padding or
  // dilation), output rows along it are folded together: `inner` elements at once, over
  // `outer` positions of the other dims (`outer_rank` of them). Else inner = 1.
  size_t outer_rank = 0;
  int64_t inner = 1, outer = 0;
  int64_t window_count = 1;
  // Per dim: for output index o and window index w, the input index or -1 (padding/hole).
  std::vector<std::vector<int64_t>> input_index;
  FastFn fast = nullptr;
  RegionRef body;
};

/// Calls f(offset or -1) for each window element of outer position `o`, row-major.
template <typename F>
void forEachWindow(const ReduceWindowPlan &p, int64_t o, std::vector<int64_t> &oi,
                   std::vector<int64_t> &wi, F &&f) {
  const size_t rank = p.outer_rank;
  oi.resize(rank);
  wi.assign(rank, 0);
  for (size_t d = rank; d-- > 0;) {
    oi[d] = o % p.out_shape[d];
    o /= p.out_shape[d];
  }
  for (int64_t w = 0; w < p.window_count; ++w) {
    int64_t off = 0;
    bool inside = true;
    for (size_t d = 0; d < rank; ++d) {
      int64_t idx = p.input_index[d][static_cast<size_t>(oi[d] * p.window[d] + wi[d])];
      inside = inside && idx >= 0;
      off += idx * p.in_strides[d];
    }
    f(inside ? off : int64_t{-1});
    for (size_t d = rank; d-- > 0;) {
      if (++wi[d] < p.window[d])
        break;
      wi[d] = 0;
    }
  }
}

constexpr int64_t kChunk = 256; // accumulators held at once on the fast path

template <typename Op, typename T>
void fastReduceWindow(const ReduceWindowPlan &p, const uint8_t *in_bytes, const uint8_t *init_bytes,
                      uint8_t *out_bytes, int64_t begin, int64_t end) {
  const T *in = reinterpret_cast<const T *>(in_bytes);
  const T init = *reinterpret_cast<const T *>(init_bytes);
  T *out = reinterpret_cast<T *>(out_bytes);
  std::vector<int64_t> oi, wi;
  T acc[kChunk];
  for (int64_t o = begin; o < end; ++o) {
    for (int64_t c0 = 0; c0 < p.inner; c0 += kChunk) {
      const int64_t cl = std::min(kChunk, p.inner - c0);
      std::fill(acc, acc + cl, init);
      forEachWindow(p, o, oi, wi, [&](int64_t off) {
        if (off < 0) {
          for (int64_t c = 0; c < cl; ++c)
            acc[c] = ops::applyBinary<Op>(acc[c], init);
          return;
        }
        const T *src = in + off + c0;
        for (int64_t c = 0; c < cl; ++c)
          acc[c] = ops::applyBinary<Op>(acc[c], src[c]);
      });
      std::copy(acc, acc + cl, out + o * p.inner + c0);
    }
  }
}

FastFn fastReduceWindowFor(std::string_view body_op, DType t) {
  return ops::reductionFastPath<FastFn>(body_op, t, [](auto op, auto tag) -> FastFn {
    return &fastReduceWindow<decltype(op), typename decltype(tag)::type>;
  });
}

/// Per dim, the input index table: for output index o and window index w, the input index
/// read, or -1 on padding or a dilation hole.
void planWindow(const Shape &in_shape, const Shape &out_shape, const ir::WindowAttributes &w,
                ReduceWindowPlan &p) {
  const size_t rank = in_shape.size();
  p.input_index.resize(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t size = in_shape[d], lo = w.padding[2 * d], window = w.dimensions[d];
    const int64_t stride = w.strides[d], base = w.base_dilations[d];
    std::vector<int64_t> &table = p.input_index[d];
    table.resize(static_cast<size_t>(out_shape[d] * window));
    for (int64_t o = 0; o < out_shape[d]; ++o)
      for (int64_t k = 0; k < window; ++k) {
        const int64_t q = o * stride + k * w.window_dilations[d] - lo;
        int64_t idx = -1;
        if (q >= 0 && q % base == 0 && q / base < size)
          idx = q / base;
        table[static_cast<size_t>(o * window + k)] = idx;
      }
  }
  p.out_shape = out_shape;
  p.window = w.dimensions;
  p.in_strides = rowMajorStrides(in_shape);
  // A last dim the window leaves alone is folded a whole output row at a time.
  p.outer_rank = rank;
  const size_t last = rank - 1;
  if (rank > 0 && w.dimensions[last] == 1 && w.strides[last] == 1 && w.base_dilations[last] == 1 &&
      w.padding[2 * last] == 0 && w.padding[2 * last + 1] == 0) {
    p.outer_rank = last;
    p.inner = in_shape[last];
  }
  p.window_count = elementCount(std::span(w.dimensions).first(p.outer_rank));
  p.outer = elementCount(std::span(out_shape).first(p.outer_rank));
}

Status planReduceWindow(OpView &v, ReduceWindowPlan &p) {
  const size_t n = v.operands().size() / 2;
  p.n = n;
  RS_RETURN_IF_ERROR(planFold(v, n, p.types, p.body));
  const Shape &in_shape = v.operand(0).shape;
  RS_ASSIGN_OR_RETURN(ir::WindowAttributes w,
                      v.prefixed(ir::reduceWindowAttributes(v.op(), in_shape.size())));
  if (n == 1 && p.body.capture_count == 0)
    p.fast = fastReduceWindowFor(binaryBodyOp(v.op().regions[0]), p.types[0]);
  planWindow(in_shape, v.result(0).shape, w, p);
  return Status::ok();
}

void runReduceWindow(const ReduceWindowPlan &p, const KernelIo &io) {
  runFoldTiles(p, io, p.window_count * p.inner, kWindowGrain,
               [&](FoldTile &tile, int64_t begin, int64_t end) {
                 std::vector<int64_t> oi, wi;
                 for (int64_t o = begin; o < end; ++o)
                   for (int64_t c = 0; c < p.inner; ++c) {
                     tile.fold.reset(tile.init);
                     forEachWindow(p, o, oi, wi, [&](int64_t off) {
                       for (size_t i = 0; i < p.n; ++i)
                         tile.x[i] =
                             off >= 0 ? io.in[i]->data() + (off + c) * tile.sizes[i] : tile.init[i];
                       tile.fold.add(tile.x);
                     });
                     for (size_t i = 0; i < p.n; ++i)
                       std::memcpy(io.out[i].mutableData() + (o * p.inner + c) * tile.sizes[i],
                                   tile.fold.acc(i), static_cast<size_t>(tile.sizes[i]));
                   }
               });
}

} // namespace

void registerReduceWindowKernels(KernelRegistry &r) {
  r.add("stablehlo.reduce_window",
        &makeKernel<ReduceWindowPlan, planReduceWindow, runReduceWindow>);
}

} // namespace rs::cpu
