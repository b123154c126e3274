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
// Errors at plan time: InvalidArgument for attributes or shapes that break
// reduce_window_c1..c16 (openxla/stablehlo docs/spec.md "reduce_window").
//
//===----------------------------------------------------------------------===//
#include "cpu/compiler.h"
#include "cpu/kernels/element_ops.h"
#include "cpu/kernels/kernel.h"

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

template <typename Op> FastFn fastFor(DType t) {
  FastFn fn = nullptr;
  visitNumericOrComplexType(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (ops::kSupported<Op, T>)
      fn = &fastReduceWindow<Op, T>;
  });
  return fn;
}

FastFn fastReduceWindowFor(std::string_view body_op, DType t) {
  if (body_op == "stablehlo.add")
    return fastFor<ops::Add>(t);
  if (body_op == "stablehlo.multiply")
    return fastFor<ops::Multiply>(t);
  if (body_op == "stablehlo.maximum")
    return fastFor<ops::Maximum>(t);
  if (body_op == "stablehlo.minimum")
    return fastFor<ops::Minimum>(t);
  if (body_op == "stablehlo.and")
    return fastFor<ops::And>(t);
  if (body_op == "stablehlo.or")
    return fastFor<ops::Or>(t);
  return nullptr;
}

Status planReduceWindow(OpView &v, ReduceWindowPlan &p) {
  const size_t n = v.operands().size() / 2;
  if (n == 0 || v.operands().size() != 2 * n || v.results().size() != n) // c1..c3
    return v.error() << "expects N inputs, N init values and N results";
  p.n = n;
  const TensorType &in0 = v.operand(0);
  const size_t rank = in0.shape.size();
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> window, v.intList("window_dimensions"));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                      v.intList("window_strides", std::vector<int64_t>(rank, 1)));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> base_dil,
                      v.intList("base_dilations", std::vector<int64_t>(rank, 1)));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> win_dil,
                      v.intList("window_dilations", std::vector<int64_t>(rank, 1)));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> padding,
                      v.intList("padding", std::vector<int64_t>(2 * rank, 0)));
  if (window.size() != rank || strides.size() != rank || base_dil.size() != rank ||
      win_dil.size() != rank || padding.size() != 2 * rank) // reduce_window_c4..c12
    return v.error() << "window attributes must have " << rank << " entries";
  Shape out_shape(rank);
  p.input_index.resize(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (window[d] <= 0 || strides[d] <= 0 || base_dil[d] <= 0 || win_dil[d] <= 0)
      return v.error() << "window sizes, strides and dilations must be positive";
    const int64_t size = in0.shape[d], lo = padding[2 * d], hi = padding[2 * d + 1];
    const int64_t dilated = size == 0 ? 0 : (size - 1) * base_dil[d] + 1;
    const int64_t padded = dilated + lo + hi;
    const int64_t dw = (window[d] - 1) * win_dil[d] + 1;
    out_shape[d] = padded < dw ? 0 : (padded - dw) / strides[d] + 1;
    std::vector<int64_t> &table = p.input_index[d];
    table.resize(static_cast<size_t>(out_shape[d] * window[d]));
    for (int64_t o = 0; o < out_shape[d]; ++o)
      for (int64_t w = 0; w < window[d]; ++w) {
        int64_t q = o * strides[d] + w * win_dil[d] - lo, idx = -1;
        if (q >= 0 && q % base_dil[d] == 0 && q / base_dil[d] < size)
          idx = q / base_dil[d];
        table[static_cast<size_t>(o * window[d] + w)] = idx;
      }
  }
  for (size_t i = 0; i < n; ++i) {
    const TensorType &in = v.operand(i), &init = v.operand(n + i), &out = v.result(i);
    if (in.shape != in0.shape)
      return v.error() << "input " << i << " shape differs from input 0";
    if (init.rank() != 0 || init.dtype != in.dtype)
      return v.error() << "init value " << i << " is not a scalar of the input element type";
    if (out.dtype != in.dtype || out.shape != out_shape) // reduce_window_c15, c16
      return v.error() << "result " << i << " of type " << out.toString() << ", expected "
                       << TensorType{in.dtype, out_shape}.toString();
    RS_RETURN_IF_ERROR(checkElementSize(v, in.dtype));
    p.types.push_back(in.dtype);
  }
  RS_ASSIGN_OR_RETURN(p.body, v.compileRegion(0));
  std::vector<DType> arg_types = p.types;
  arg_types.insert(arg_types.end(), p.types.begin(), p.types.end());
  RS_RETURN_IF_ERROR(checkScalarBody(v, *p.body.callable, arg_types, p.types, "body"));
  if (n == 1 && p.body.capture_count == 0)
    p.fast = fastReduceWindowFor(binaryBodyOp(v.op().regions[0]), in0.dtype);
  p.out_shape = out_shape;
  p.window = window;
  p.in_strides = rowMajorStrides(in0.shape);
  p.outer_rank = rank;
  const size_t last = rank - 1;
  if (rank > 0 && window[last] == 1 && strides[last] == 1 && base_dil[last] == 1 &&
      padding[2 * last] == 0 && padding[2 * last + 1] == 0) {
    p.outer_rank = last;
    p.inner = in0.shape[last];
  }
  p.window_count = elementCount(std::span(window).first(p.outer_rank));
  p.outer = elementCount(std::span(out_shape).first(p.outer_rank));
  return Status::ok();
}

void runReduceWindow(const ReduceWindowPlan &p, const KernelIo &io) {
  const int64_t per_outer = std::max<int64_t>(1, p.window_count * p.inner);
  const int64_t grain = std::max<int64_t>(1, kWindowGrain / per_outer);
  const int64_t tiles = (p.outer + grain - 1) / grain;
  if (p.fast) {
    const uint8_t *in = io.in[0]->data(), *init = io.in[1]->data();
    uint8_t *out = io.out[0].mutableData();
    io.rc.cpu->parallelFor(tiles, [&](int64_t t) {
      p.fast(p, in, init, out, t * grain, std::min(p.outer, (t + 1) * grain));
    });
    return;
  }
  io.rc.cpu->parallelFor(tiles, [&](int64_t t) {
    BodyFold fold(*p.body.callable, io.in.subspan(p.body.capture_begin, p.body.capture_count),
                  io.rc, p.types);
    std::vector<const uint8_t *> init(p.n), x(p.n);
    std::vector<int64_t> sizes(p.n), oi, wi;
    for (size_t i = 0; i < p.n; ++i) {
      init[i] = io.in[p.n + i]->data();
      sizes[i] = dtypeSize(p.types[i]);
    }
    for (int64_t o = t * grain, end = std::min(p.outer, (t + 1) * grain); o < end; ++o)
      for (int64_t c = 0; c < p.inner; ++c) {
        fold.reset(init);
        forEachWindow(p, o, oi, wi, [&](int64_t off) {
          for (size_t i = 0; i < p.n; ++i)
            x[i] = off >= 0 ? io.in[i]->data() + (off + c) * sizes[i] : init[i];
          fold.add(x);
        });
        for (size_t i = 0; i < p.n; ++i)
          std::memcpy(io.out[i].mutableData() + (o * p.inner + c) * sizes[i], fold.acc(i),
                      static_cast<size_t>(sizes[i]));
      }
  });
}

} // namespace

void registerReduceWindowKernels(KernelRegistry &r) {
  r.add("stablehlo.reduce_window",
        &makeKernel<ReduceWindowPlan, planReduceWindow, runReduceWindow>);
}

} // namespace rs::cpu
