//===- cpu/kernels/scatter.cc - stablehlo.scatter --------------------------===//
//
// inputs[N], scatter_indices (any integer type), updates[N] -> results[N] (the inputs'
// types), with scatter_dimension_numbers (#stablehlo.scatter: update_window_dims,
// inserted_window_dims, input_batching_dims, scatter_indices_batching_dims,
// scatter_dims_to_operand_dims, index_vector_dim) and update_computation
// (current_0..N-1, update_0..N-1) -> (new_0..N-1) on scalars.
// The results start as copies of the inputs; then, for every update element in row-major
// order of the updates, its result index (start index + batching index + window index,
// no clamping) is computed and, when in bounds, results[index] =
// update_computation(results[index], update); out-of-bounds elements are skipped (spec
// "scatter"). One fixed sequential order, so repeated indices combine deterministically.
// Fast paths for N = 1 with a body that returns the update (overwrite) or is one
// add/multiply/maximum/minimum/and/or. Element types: any of 1, 2, 4, 8 bytes (general
// path: what the body's kernels take). The op is verified (ir/verify_gather_scatter.cc:
// scatter_c1..c24); the plan lays out the index maps and picks a fast path. Errors at plan
// time: Unimplemented for an element type of another size.
//
//===----------------------------------------------------------------------===//
#include "cpu/compiler.h"
#include "cpu/kernels/element_ops.h"
#include "cpu/kernels/fold_types.h"
#include "cpu/kernels/kernel.h"
#include "ir/op_attributes.h"

#include <algorithm>
#include <optional>

namespace rs::cpu {
namespace {

using CombineFn = void (*)(uint8_t *dst, const uint8_t *src);

template <typename Op, typename T> void combine(uint8_t *dst, const uint8_t *src) {
  T a, b;
  std::memcpy(&a, dst, sizeof(T));
  std::memcpy(&b, src, sizeof(T));
  a = ops::applyBinary<Op>(a, b);
  std::memcpy(dst, &a, sizeof(T));
}

template <typename Op> CombineFn combineFor(DType t) {
  CombineFn fn = nullptr;
  visitNumericOrComplexType(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (ops::kSupported<Op, T>)
      fn = &combine<Op, T>;
  });
  return fn;
}

struct ScatterPlan {
  size_t n = 1;
  std::vector<DType> types;
  std::vector<int64_t> sizes; // element sizes
  Shape input_shape;
  std::vector<int64_t> input_strides;
  DType index_type = DType::kI32;
  int64_t index_size = 4;
  // Update scatter positions: sizes, update strides, scatter_indices strides.
  std::vector<int64_t> pos_sizes, pos_update_strides, pos_index_strides;
  int64_t pos_count = 1;
  int64_t index_count = 0, index_vector_stride = 0;
  std::vector<int64_t> start_dims; // input dim per index vector entry
  std::vector<int64_t> batching_input_dims, batching_pos_dims;
  // Window: sizes, update strides, input dim per window dim.
  std::vector<int64_t> win_sizes, win_update_strides, win_input_dims;
  int64_t win_count = 1;
  bool overwrite = false;
  CombineFn combine = nullptr;
  RegionRef body;
};

/// The input types and their element sizes: update i and result i of input i's type.
Status planTypes(OpView &v, size_t n, ScatterPlan &p) {
  p.n = n;
  for (size_t i = 0; i < n; ++i) {
    const TensorType &in = v.operand(i), &upd = v.operand(n + 1 + i), &out = v.result(i);
    if (upd.dtype != in.dtype || out != in)
      return v.error() << "input " << i << ", update or result types do not fit";
    RS_RETURN_IF_ERROR(checkElementSize(v, v.operand(i).dtype));
    p.types.push_back(v.operand(i).dtype);
    p.sizes.push_back(dtypeSize(v.operand(i).dtype));
  }
  return Status::ok();
}

/// Update scatter positions, the index vector, the batching dims and the update window.
void planIndexMaps(const TensorType &input0, const TensorType &indices, const TensorType &updates0,
                   const ir::ScatterDimensionNumbers &dn, ScatterPlan &p) {
  const int64_t irank = indices.rank();
  const std::vector<int64_t> &window_dims = dn.update_window_dims;
  const std::vector<int64_t> window_input_dims =
      ir::complementDims(input0.rank(), {dn.inserted_window_dims, dn.input_batching_dims});
  const std::vector<int64_t> index_pos_dims =
      ir::complementDims(irank, {std::span<const int64_t>(&dn.index_vector_dim, 1)});
  const std::vector<int64_t> update_pos_dims = ir::complementDims(updates0.rank(), {window_dims});
  const std::vector<int64_t> ix_strides = rowMajorStrides(indices.shape);
  const std::vector<int64_t> up_strides = rowMajorStrides(updates0.shape);
  p.input_shape = input0.shape;
  p.input_strides = rowMajorStrides(input0.shape);
  p.index_type = indices.dtype;
  p.index_size = dtypeSize(indices.dtype);
  for (size_t j = 0; j < update_pos_dims.size(); ++j) {
    p.pos_sizes.push_back(updates0.shape[static_cast<size_t>(update_pos_dims[j])]);
    p.pos_update_strides.push_back(up_strides[static_cast<size_t>(update_pos_dims[j])]);
    p.pos_index_strides.push_back(ix_strides[static_cast<size_t>(index_pos_dims[j])]);
  }
  p.pos_count = elementCount(p.pos_sizes);
  const bool explicit_vector = dn.index_vector_dim < irank;
  const size_t ivd = static_cast<size_t>(dn.index_vector_dim);
  p.index_count = explicit_vector ? indices.shape[ivd] : 1;
  p.index_vector_stride = explicit_vector ? ix_strides[ivd] : 0;
  p.start_dims = dn.scatter_dims_to_operand_dims;
  for (size_t i = 0; i < dn.input_batching_dims.size(); ++i) {
    auto it = std::find(index_pos_dims.begin(), index_pos_dims.end(),
                        dn.scatter_indices_batching_dims[i]);
    p.batching_input_dims.push_back(dn.input_batching_dims[i]);
    p.batching_pos_dims.push_back(it - index_pos_dims.begin());
  }
  for (size_t k = 0; k < window_dims.size(); ++k) {
    p.win_sizes.push_back(updates0.shape[static_cast<size_t>(window_dims[k])]);
    p.win_update_strides.push_back(up_strides[static_cast<size_t>(window_dims[k])]);
    p.win_input_dims.push_back(window_input_dims[k]);
  }
  p.win_count = elementCount(p.win_sizes);
}

/// The fast paths of one input: a body that returns the update (overwrite), or one that is
/// a single reduction op of its two arguments (combine).
void chooseFastPath(const ir::Region &region, ScatterPlan &p) {
  const ir::Block &b = region.blocks[0];
  if (b.ops.size() == 1 && b.ops[0].operands.size() == 1 &&
      b.ops[0].operands[0] == b.arguments[1]) {
    p.overwrite = true;
    return;
  }
  ops::forReductionOp(binaryBodyOp(region),
                      [&](auto op) { p.combine = combineFor<decltype(op)>(p.types[0]); });
}

Status planScatter(OpView &v, ScatterPlan &p) {
  const size_t n = (v.operands().size() - 1) / 2;
  RS_RETURN_IF_ERROR(planTypes(v, n, p));
  RS_ASSIGN_OR_RETURN(ir::ScatterDimensionNumbers dn,
                      v.prefixed(ir::scatterDimensionNumbers(v.op())));
  planIndexMaps(v.operand(0), v.operand(n), v.operand(n + 1), dn, p);
  RS_ASSIGN_OR_RETURN(p.body, v.compileRegion(0));
  std::vector<DType> arg_types = p.types;
  arg_types.insert(arg_types.end(), p.types.begin(), p.types.end());
  RS_RETURN_IF_ERROR(
      checkScalarBody(v, *p.body.callable, arg_types, p.types, "update_computation"));
  if (n == 1 && p.body.capture_count == 0)
    chooseFastPath(v.op().regions[0], p);
  return Status::ok();
}

void runScatter(const ScatterPlan &p, const KernelIo &io) {
  for (size_t i = 0; i < p.n; ++i)
    std::memcpy(io.out[i].mutableData(), io.in[i]->data(),
                static_cast<size_t>(io.out[i].byteSize()));
  const bool general = !p.overwrite && !p.combine;
  std::optional<BodyFold> fold;
  if (general)
    fold.emplace(*p.body.callable, io.in.subspan(p.body.capture_begin, p.body.capture_count), io.rc,
                 p.types);
  const uint8_t *indices = io.in[p.n]->data();
  const size_t rank = p.input_shape.size(), npos = p.pos_sizes.size(), nwin = p.win_sizes.size();
  std::vector<int64_t> base(rank), pi(npos), wi(nwin), idx(rank);
  std::vector<const uint8_t *> cur(p.n), upd(p.n);
  for (int64_t pos = 0; pos < p.pos_count; ++pos) {
    int64_t rem = pos, index_off = 0, update_off = 0;
    for (size_t j = npos; j-- > 0;) {
      pi[j] = rem % p.pos_sizes[j];
      rem /= p.pos_sizes[j];
      index_off += pi[j] * p.pos_index_strides[j];
      update_off += pi[j] * p.pos_update_strides[j];
    }
    std::fill(base.begin(), base.end(), 0);
    // Indices far outside any dimension are clamped so the sums below cannot overflow;
    // they stay out of bounds.
    constexpr int64_t kFar = int64_t{1} << 48;
    for (int64_t k = 0; k < p.index_count; ++k)
      base[static_cast<size_t>(p.start_dims[static_cast<size_t>(k)])] = std::clamp(
          readIntegerElement(p.index_type,
                             indices + (index_off + k * p.index_vector_stride) * p.index_size),
          -kFar, kFar);
    for (size_t i = 0; i < p.batching_input_dims.size(); ++i)
      base[static_cast<size_t>(p.batching_input_dims[i])] =
          pi[static_cast<size_t>(p.batching_pos_dims[i])];
    std::fill(wi.begin(), wi.end(), 0);
    for (int64_t w = 0; w < p.win_count; ++w) {
      idx = base;
      int64_t win_off = 0;
      for (size_t k = 0; k < nwin; ++k) {
        idx[static_cast<size_t>(p.win_input_dims[k])] += wi[k];
        win_off += wi[k] * p.win_update_strides[k];
      }
      bool inside = true;
      int64_t out_off = 0;
      for (size_t d = 0; d < rank; ++d) {
        inside = inside && idx[d] >= 0 && idx[d] < p.input_shape[d];
        out_off += idx[d] * p.input_strides[d];
      }
      if (inside) {
        const int64_t u = update_off + win_off;
        if (p.overwrite) {
          std::memcpy(io.out[0].mutableData() + out_off * p.sizes[0],
                      io.in[p.n + 1]->data() + u * p.sizes[0], static_cast<size_t>(p.sizes[0]));
        } else if (p.combine) {
          p.combine(io.out[0].mutableData() + out_off * p.sizes[0],
                    io.in[p.n + 1]->data() + u * p.sizes[0]);
        } else {
          for (size_t i = 0; i < p.n; ++i) {
            cur[i] = io.out[i].data() + out_off * p.sizes[i];
            upd[i] = io.in[p.n + 1 + i]->data() + u * p.sizes[i];
          }
          fold->reset(cur);
          fold->add(upd);
          for (size_t i = 0; i < p.n; ++i)
            std::memcpy(io.out[i].mutableData() + out_off * p.sizes[i], fold->acc(i),
                        static_cast<size_t>(p.sizes[i]));
        }
      }
      for (size_t k = nwin; k-- > 0;) {
        if (++wi[k] < p.win_sizes[k])
          break;
        wi[k] = 0;
      }
    }
  }
}

} // namespace

void registerScatterKernels(KernelRegistry &r) {
  r.add("stablehlo.scatter", &makeKernel<ScatterPlan, planScatter, runScatter>);
}

} // namespace rs::cpu
