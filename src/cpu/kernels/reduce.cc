//===- cpu/kernels/reduce.cc - stablehlo.reduce ----------------------------===//
//
// inputs[N] (one shape), init_values[N] (rank 0) -> results[N] (the input shape without
// `dimensions`), body (acc_0..acc_N-1, x_0..x_N-1) -> (acc_0..acc_N-1) on scalars.
// Every result element folds its reduced elements in row-major order of the reduced
// dims, starting from the init value: acc = body(acc, x), with one exception below. The
// order depends on the shapes alone, never on the thread count:
//   - fast path: one input and a body that is a single add/multiply/maximum/minimum/and/or
//     of its two arguments (the elementwise op's own functor, element_ops.h). When the
//     reduced elements of a result element are one contiguous run of at least 2 x kLanes
//     (a row: softmax, layer norm) and the type is real, element j of the run goes to
//     accumulator j % kLanes, the accumulators are combined pairwise (lane l with l + 8,
//     then + 4, + 2, + 1) and the init value comes last: body(init, total). One vector
//     register's worth of independent chains instead of one serial chain; the spec leaves
//     the order of a reduction to the implementation ("reduce": "the order ... is
//     implementation-defined").
//   - general path: the body region evaluated per element pair (BodyFold).
// Work is split over output elements in tiles sized from the shapes alone.
// Element types: fast path per the op's functor; general path any scalar type the body's
// kernels take. The op is verified (ir/verify_reduce.cc: reduce_c1..c8); the plan picks the
// fast path and the loop order. Errors at plan time: Unimplemented for an element type of
// another size.
//
//===----------------------------------------------------------------------===//
#include "cpu/compiler.h"
#include "cpu/kernels/element_ops.h"
#include "cpu/kernels/fold_types.h"
#include "cpu/kernels/kernel.h"

#include <algorithm>

namespace rs::cpu {
namespace {

constexpr int64_t kReduceGrain = 16384; // input elements per tile (about)
constexpr int64_t kChunk = 256;         // accumulators held at once on the fast path
constexpr int64_t kLanes = 16;          // accumulators of a contiguous row (16 f32: 512 bits)

struct ReducePlan;
using FastFn = void (*)(const ReducePlan &, const uint8_t *in, const uint8_t *init, uint8_t *out,
                        int64_t o_begin, int64_t o_end);

struct ReducePlan {
  size_t n = 1; // operands
  std::vector<DType> types;
  // Kept dims except a trailing inner run (sizes, input strides); inner run length.
  std::vector<int64_t> outer_sizes, outer_strides;
  int64_t outer = 1, inner = 1;
  // Reduced dims (sizes, input strides), row-major order.
  std::vector<int64_t> red_sizes, red_strides;
  int64_t red_count = 1;
  bool red_contiguous = false; // the reduced elements of each result: one run, stride 1
  FastFn fast = nullptr;
  RegionRef body;
};

int64_t outerOffset(const ReducePlan &p, int64_t o) {
  int64_t off = 0;
  for (size_t d = p.outer_sizes.size(); d-- > 0;) {
    off += (o % p.outer_sizes[d]) * p.outer_strides[d];
    o /= p.outer_sizes[d];
  }
  return off;
}

/// Calls f(offset) for every reduced position, in row-major order.
template <typename F> void forEachReduced(const ReducePlan &p, std::vector<int64_t> &idx, F &&f) {
  if (p.red_count == 0)
    return;
  const size_t r = p.red_sizes.size();
  if (r == 0) {
    f(int64_t{0});
    return;
  }
  const int64_t n_last = p.red_sizes[r - 1], s_last = p.red_strides[r - 1];
  idx.assign(r, 0);
  int64_t off = 0;
  for (int64_t row = 0, rows = p.red_count / n_last; row < rows; ++row) {
    for (int64_t j = 0; j < n_last; ++j)
      f(off + j * s_last);
    for (size_t d = r - 1; d-- > 0;) {
      off += p.red_strides[d];
      if (++idx[d] < p.red_sizes[d])
        break;
      off -= idx[d] * p.red_strides[d];
      idx[d] = 0;
    }
  }
}

/// Folds the contiguous run x[0..n) into `init` in the lane order of the file comment.
template <typename Op, typename T> T reduceRow(const T *x, int64_t n, T init) {
  if (n < 2 * kLanes) {
    T a = init;
    for (int64_t i = 0; i < n; ++i)
      a = ops::applyBinary<Op>(a, x[i]);
    return a;
  }
  T acc[kLanes];
  for (int64_t l = 0; l < kLanes; ++l)
    acc[l] = x[l];
  int64_t i = kLanes;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      acc[l] = ops::applyBinary<Op>(acc[l], x[i + l]);
  for (int64_t l = 0; i < n; ++i, ++l)
    acc[l] = ops::applyBinary<Op>(acc[l], x[i]);
  for (int64_t w = kLanes / 2; w >= 1; w /= 2)
    for (int64_t l = 0; l < w; ++l)
      acc[l] = ops::applyBinary<Op>(acc[l], acc[l + w]);
  return ops::applyBinary<Op>(init, acc[0]);
}

template <typename Op, typename T>
void fastReduce(const ReducePlan &p, const uint8_t *in_bytes, const uint8_t *init_bytes,
                uint8_t *out_bytes, int64_t o_begin, int64_t o_end) {
  const T *in = reinterpret_cast<const T *>(in_bytes);
  const T init = *reinterpret_cast<const T *>(init_bytes);
  T *out = reinterpret_cast<T *>(out_bytes);
  std::vector<int64_t> idx;
  T acc[kChunk];
  if constexpr (!ops::kComplex<T>) {
    if (p.inner == 1 && p.red_contiguous) { // rows of the trailing dims: row o at o * count
      for (int64_t o = o_begin; o < o_end; ++o)
        out[o] = reduceRow<Op>(in + o * p.red_count, p.red_count, init);
      return;
    }
  }
  for (int64_t o = o_begin; o < o_end; ++o) {
    const T *base = in + outerOffset(p, o);
    if (p.inner == 1) {
      T a = init;
      forEachReduced(p, idx, [&](int64_t off) { a = ops::applyBinary<Op>(a, base[off]); });
      out[o] = a;
      continue;
    }
    for (int64_t c0 = 0; c0 < p.inner; c0 += kChunk) {
      const int64_t cl = std::min(kChunk, p.inner - c0);
      std::fill(acc, acc + cl, init);
      forEachReduced(p, idx, [&](int64_t off) {
        const T *src = base + off + c0;
        for (int64_t c = 0; c < cl; ++c)
          acc[c] = ops::applyBinary<Op>(acc[c], src[c]);
      });
      std::copy(acc, acc + cl, out + o * p.inner + c0);
    }
  }
}

FastFn fastReduceFor(std::string_view body_op, DType t) {
  return ops::reductionFastPath<FastFn>(body_op, t, [](auto op, auto tag) -> FastFn {
    return &fastReduce<decltype(op), typename decltype(tag)::type>;
  });
}

/// The kept dims (all but a trailing inner run), the inner run and the reduced dims.
void planDims(const Shape &shape, const std::vector<int64_t> &dims, ReducePlan &p) {
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t d : dims)
    reduced[static_cast<size_t>(d)] = true;
  const std::vector<int64_t> strides = rowMajorStrides(shape);
  const size_t rank = shape.size();
  for (size_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      p.red_sizes.push_back(shape[d]);
      p.red_strides.push_back(strides[d]);
    } else if (d == rank - 1) {
      p.inner = shape[d];
    } else {
      p.outer_sizes.push_back(shape[d]);
      p.outer_strides.push_back(strides[d]);
    }
  }
  p.outer = elementCount(p.outer_sizes);
  p.red_count = elementCount(p.red_sizes);
  p.red_contiguous = !p.red_sizes.empty();
  for (size_t d = 0; d < p.red_sizes.size(); ++d) // strides of one row-major block
    p.red_contiguous =
        p.red_contiguous &&
        p.red_strides[d] == elementCount(std::span<const int64_t>(p.red_sizes).subspan(d + 1));
}

Status planReduce(OpView &v, ReducePlan &p) {
  const size_t n = v.operands().size() / 2;
  p.n = n;
  RS_RETURN_IF_ERROR(planFold(v, n, p.types, p.body));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, v.intList("dimensions"));
  if (n == 1 && p.body.capture_count == 0)
    p.fast = fastReduceFor(binaryBodyOp(v.op().regions[0]), p.types[0]);
  planDims(v.operand(0).shape, dims, p);
  return Status::ok();
}

void runReduce(const ReducePlan &p, const KernelIo &io) {
  runFoldTiles(p, io, p.red_count * p.inner, kReduceGrain,
               [&](FoldTile &tile, int64_t begin, int64_t end) {
                 std::vector<int64_t> idx;
                 for (int64_t o = begin; o < end; ++o) {
                   const int64_t base = outerOffset(p, o);
                   for (int64_t c = 0; c < p.inner; ++c) {
                     tile.fold.reset(tile.init);
                     forEachReduced(p, idx, [&](int64_t off) {
                       for (size_t i = 0; i < p.n; ++i)
                         tile.x[i] = io.in[i]->data() + (base + off + c) * tile.sizes[i];
                       tile.fold.add(tile.x);
                     });
                     for (size_t i = 0; i < p.n; ++i)
                       std::memcpy(io.out[i].mutableData() + (o * p.inner + c) * tile.sizes[i],
                                   tile.fold.acc(i), static_cast<size_t>(tile.sizes[i]));
                   }
                 }
               });
}

/// reduce's kernel; a reduce of the trailing dims on the fast path computes rows on demand
/// (Kernel::runReducedRows).
class ReduceKernel final : public Kernel {
public:
  explicit ReduceKernel(ReducePlan plan) : plan_(std::move(plan)) {}
  void run(const KernelIo &io) const override { runReduce(plan_, io); }
  int64_t reducedRowWidth() const override {
    const bool rows = plan_.fast && plan_.n == 1 && plan_.inner == 1 && plan_.red_contiguous;
    return rows ? plan_.red_count : 0;
  }
  void runReducedRows(const uint8_t *rows, const uint8_t *init, uint8_t *out,
                      int64_t count) const override {
    plan_.fast(plan_, rows, init, out, 0, count); // result o reads input row o (inner 1)
  }

private:
  ReducePlan plan_;
};

Result<std::unique_ptr<Kernel>> makeReduce(OpView &v) {
  ReducePlan plan;
  RS_RETURN_IF_ERROR(planReduce(v, plan));
  return std::unique_ptr<Kernel>(std::make_unique<ReduceKernel>(std::move(plan)));
}

} // namespace

void registerReduceKernels(KernelRegistry &r) {
  r.add("stablehlo.reduce", &makeReduce, OutputMode::kOverwritten);
}

} // namespace rs::cpu
