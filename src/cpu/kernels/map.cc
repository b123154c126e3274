//===- cpu/kernels/map.cc - stablehlo.map, stablehlo.select_and_scatter ----===//
//
// stablehlo.map: inputs[N] of one shape -> result, computation (x_0..x_N-1) -> y on
// scalars applied per element; `dimensions` must be all dims in order (map_c3).
// stablehlo.select_and_scatter: operand, source, init_value -> result (operand's shape):
// for each window of the operand (window_dimensions, window_strides, padding; padding
// elements never selected) the `select` body (a, b) -> i1 picks one element, folding the
// window in row-major order (keep the current pick while select(current, next) holds);
// the source element of that window is then combined into the result at the pick with
// the `scatter` body, windows in row-major order, results starting at init_value
// (spec "select_and_scatter").
// Any element type the bodies' kernels take. The ops are verified (ir/verify_reduce.cc:
// map_c1..c4, select_and_scatter_c1..c12); the plans lay out the windows. Errors at plan
// time: Unimplemented for an element type of another size.
//
//===----------------------------------------------------------------------===//
#include "cpu/compiler.h"
#include "cpu/kernels/fold_types.h"
#include "cpu/kernels/kernel.h"

#include <algorithm>

namespace rs::cpu {
namespace {

constexpr int64_t kMapGrain = 4096;

struct MapPlan {
  size_t n = 0;
  std::vector<int64_t> sizes;
  int64_t count = 0, out_size = 0;
  RegionRef body;
};

Status planMap(OpView &v, MapPlan &p) {
  const TensorType &out = v.result(0);
  for (const TensorType &in : v.operands()) {
    RS_RETURN_IF_ERROR(checkElementSize(v, in.dtype));
    p.sizes.push_back(dtypeSize(in.dtype));
  }
  RS_ASSIGN_OR_RETURN(p.body, v.compileRegion(0));
  RS_RETURN_IF_ERROR(checkElementSize(v, out.dtype));
  p.n = v.operands().size();
  p.count = out.numElements();
  p.out_size = dtypeSize(out.dtype);
  return Status::ok();
}

void runMap(const MapPlan &p, const KernelIo &io) {
  io.rc.cpu->parallelFor((p.count + kMapGrain - 1) / kMapGrain, [&](int64_t t) {
    BodyEvaluator body(*p.body.callable, io.in.subspan(p.body.capture_begin, p.body.capture_count),
                       io.rc);
    for (int64_t i = t * kMapGrain, end = std::min(p.count, (t + 1) * kMapGrain); i < end; ++i) {
      for (size_t k = 0; k < p.n; ++k)
        body.setArg(k, io.in[k]->data() + i * p.sizes[k]);
      body.run();
      std::memcpy(io.out[0].mutableData() + i * p.out_size, body.result(0),
                  static_cast<size_t>(p.out_size));
    }
  });
}

//===----------------------------------------------------------------------===//
// select_and_scatter
//===----------------------------------------------------------------------===//

struct SelectAndScatterPlan {
  DType type = DType::kF32;
  int64_t size = 4;
  Shape operand_shape, source_shape;
  std::vector<int64_t> window, strides, pad_lo, operand_strides;
  int64_t window_count = 1, source_count = 0;
  RegionRef select, scatter;
};

Status planSelectAndScatter(OpView &v, SelectAndScatterPlan &p) {
  const TensorType &operand = v.operand(0), &source = v.operand(1), &init = v.operand(2);
  const size_t rank = operand.shape.size();
  if (v.result(0) != operand || source.dtype != operand.dtype || init.dtype != operand.dtype)
    return v.error() << "operand, source, init_value and result types do not fit";
  RS_RETURN_IF_ERROR(checkElementSize(v, operand.dtype));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> window,
                      v.intList("window_dimensions", std::vector<int64_t>(rank, 1)));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                      v.intList("window_strides", std::vector<int64_t>(rank, 1)));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> padding,
                      v.intList("padding", std::vector<int64_t>(2 * rank, 0)));
  for (size_t d = 0; d < rank; ++d)
    p.pad_lo.push_back(padding[2 * d]);
  RS_ASSIGN_OR_RETURN(p.select, v.compileRegion(0));
  RS_ASSIGN_OR_RETURN(p.scatter, v.compileRegion(1));
  const DType pair[2] = {operand.dtype, operand.dtype};
  RS_RETURN_IF_ERROR(checkScalarBody(v, *p.scatter.callable, pair,
                                     std::span<const DType>(&operand.dtype, 1), "scatter"));
  p.type = operand.dtype;
  p.size = dtypeSize(operand.dtype);
  p.operand_shape = operand.shape;
  p.source_shape = source.shape;
  p.window = window;
  p.strides = strides;
  p.operand_strides = rowMajorStrides(operand.shape);
  p.window_count = elementCount(window);
  p.source_count = source.numElements();
  return Status::ok();
}

void runSelectAndScatter(const SelectAndScatterPlan &p, const KernelIo &io) {
  const uint8_t *operand = io.in[0]->data(), *source = io.in[1]->data();
  uint8_t *out = io.out[0].mutableData();
  const int64_t n = io.out[0].numElements();
  fillElements(out, n, io.in[2]->data(), p.size);
  BodyEvaluator select(*p.select.callable,
                       io.in.subspan(p.select.capture_begin, p.select.capture_count), io.rc);
  BodyEvaluator scatter(*p.scatter.callable,
                        io.in.subspan(p.scatter.capture_begin, p.scatter.capture_count), io.rc);
  const size_t rank = p.window.size();
  std::vector<int64_t> si(rank), wi(rank);
  std::vector<uint8_t> combined(static_cast<size_t>(p.size));
  for (int64_t s = 0; s < p.source_count; ++s) {
    int64_t rem = s;
    for (size_t d = rank; d-- > 0;) {
      si[d] = rem % p.source_shape[d];
      rem /= p.source_shape[d];
    }
    std::fill(wi.begin(), wi.end(), 0);
    int64_t best = -1; // operand offset of the current pick
    for (int64_t w = 0; w < p.window_count; ++w) {
      int64_t off = 0;
      bool inside = true;
      for (size_t d = 0; d < rank; ++d) {
        const int64_t idx = si[d] * p.strides[d] + wi[d] - p.pad_lo[d];
        inside = inside && idx >= 0 && idx < p.operand_shape[d];
        off += idx * p.operand_strides[d];
      }
      if (inside) {
        if (best < 0) {
          best = off;
        } else {
          select.setArg(0, operand + best * p.size);
          select.setArg(1, operand + off * p.size);
          select.run();
          if (!*select.result(0))
            best = off;
        }
      }
      for (size_t d = rank; d-- > 0;) {
        if (++wi[d] < p.window[d])
          break;
        wi[d] = 0;
      }
    }
    if (best < 0)
      continue;
    scatter.setArg(0, out + best * p.size);
    scatter.setArg(1, source + s * p.size);
    scatter.run();
    std::memcpy(combined.data(), scatter.result(0), static_cast<size_t>(p.size));
    std::memcpy(out + best * p.size, combined.data(), static_cast<size_t>(p.size));
  }
}

} // namespace

void registerMapKernels(KernelRegistry &r) {
  r.add("stablehlo.map", &makeKernel<MapPlan, planMap, runMap>);
  r.add("stablehlo.select_and_scatter",
        &makeKernel<SelectAndScatterPlan, planSelectAndScatter, runSelectAndScatter>);
}

} // namespace rs::cpu
