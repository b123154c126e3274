//===- cpu/kernels/gather.cc - stablehlo.gather ----------------------------===//
//
// operand, start_indices (any integer type) -> result, with dimension_numbers
// (#stablehlo.gather: offset_dims, collapsed_slice_dims, operand_batching_dims,
// start_indices_batching_dims, start_index_map, index_vector_dim) and slice_sizes.
// For each batch position of the result (the dims not in offset_dims) the start index is
// read from start_indices, clamped to [0, operand dim - slice size] per spec, combined
// with the batching index, and the slice (offset dims) is copied. Batch positions are split
// over threads in fixed tiles; each writes its own result elements.
// Any element type of 1, 2, 4 or 8 bytes. The op is verified (ir/verify_gather_scatter.cc:
// gather_c1..c23); the plan lays out the index reads and the slice copy. Errors at plan time:
// Unimplemented for an element type of another size.
//
//===----------------------------------------------------------------------===//
#include "cpu/kernels/kernel.h"
#include "ir/op_attributes.h"

#include <algorithm>

namespace rs::cpu {
namespace {

constexpr int64_t kGatherGrain = 16384; // result elements per tile (about)

struct GatherPlan {
  DType index_type = DType::kI32;
  int64_t index_size = 4;
  // Batch positions: sizes, result strides, start_indices strides.
  std::vector<int64_t> batch_sizes, batch_result_strides, batch_index_strides;
  int64_t batch_count = 1;
  // Index vector: count, stride in start_indices; operand dim fed by each entry.
  int64_t index_count = 0, index_vector_stride = 0;
  std::vector<int64_t> start_dims;   // operand dim per index vector entry
  std::vector<int64_t> start_limits; // operand dim - slice size, per entry
  // Batching: operand dim stride and the batch position dim that feeds it.
  std::vector<int64_t> batching_operand_strides, batching_batch_dims;
  std::vector<int64_t> operand_strides;
  StridedCopy slice; // offset dims: operand -> result
  int64_t slice_elems = 1;
};

/// The dims of a gather: the operand dims the slice covers (neither collapsed nor
/// batching), the batch dims of start_indices (all but index_vector_dim) and the result
/// dims they give (those not in offset_dims).
struct GatherDims {
  std::vector<int64_t> slice_operand_dims, index_batch_dims, result_batch_dims;
};

GatherDims gatherDims(const ir::GatherDimensionNumbers &dn, int64_t operand_rank,
                      int64_t indices_rank, int64_t result_rank) {
  GatherDims g;
  g.slice_operand_dims =
      ir::complementDims(operand_rank, {dn.collapsed_slice_dims, dn.operand_batching_dims});
  g.index_batch_dims =
      ir::complementDims(indices_rank, {std::span<const int64_t>(&dn.index_vector_dim, 1)});
  g.result_batch_dims = ir::complementDims(result_rank, {dn.offset_dims});
  return g;
}

/// Batch positions (sizes and strides), the index vector and the batching dims.
void planIndices(const TensorType &operand, const TensorType &indices, const TensorType &out,
                 const ir::GatherDimensionNumbers &dn, const std::vector<int64_t> &slice_sizes,
                 const GatherDims &g, GatherPlan &p) {
  const std::vector<int64_t> ostrides = rowMajorStrides(operand.shape);
  const std::vector<int64_t> istrides = rowMajorStrides(indices.shape);
  const std::vector<int64_t> rstrides = rowMajorStrides(out.shape);
  p.index_type = indices.dtype;
  p.index_size = dtypeSize(indices.dtype);
  for (size_t j = 0; j < g.result_batch_dims.size(); ++j) {
    p.batch_sizes.push_back(out.shape[static_cast<size_t>(g.result_batch_dims[j])]);
    p.batch_result_strides.push_back(rstrides[static_cast<size_t>(g.result_batch_dims[j])]);
    p.batch_index_strides.push_back(istrides[static_cast<size_t>(g.index_batch_dims[j])]);
  }
  p.batch_count = elementCount(p.batch_sizes);
  const bool explicit_vector = dn.index_vector_dim < indices.rank();
  const size_t ivd = static_cast<size_t>(dn.index_vector_dim);
  p.index_count = explicit_vector ? indices.shape[ivd] : 1;
  p.index_vector_stride = explicit_vector ? istrides[ivd] : 0;
  for (int64_t d : dn.start_index_map) {
    p.start_dims.push_back(d);
    p.start_limits.push_back(operand.shape[static_cast<size_t>(d)] -
                             slice_sizes[static_cast<size_t>(d)]);
  }
  for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i) {
    auto it = std::find(g.index_batch_dims.begin(), g.index_batch_dims.end(),
                        dn.start_indices_batching_dims[i]);
    p.batching_operand_strides.push_back(
        ostrides[static_cast<size_t>(dn.operand_batching_dims[i])]);
    p.batching_batch_dims.push_back(it - g.index_batch_dims.begin());
  }
  p.operand_strides = ostrides;
}

/// The copy of one slice: operand offset dims -> result offset dims.
void planSliceCopy(const TensorType &operand, const TensorType &out,
                   const ir::GatherDimensionNumbers &dn, const std::vector<int64_t> &slice_sizes,
                   const GatherDims &g, GatherPlan &p) {
  const std::vector<int64_t> ostrides = rowMajorStrides(operand.shape);
  const std::vector<int64_t> rstrides = rowMajorStrides(out.shape);
  for (size_t k = 0; k < dn.offset_dims.size(); ++k) {
    const size_t from = static_cast<size_t>(g.slice_operand_dims[k]);
    p.slice.shape.push_back(slice_sizes[from]);
    p.slice.in_strides.push_back(ostrides[from]);
    p.slice.out_strides.push_back(rstrides[static_cast<size_t>(dn.offset_dims[k])]);
  }
  p.slice_elems = elementCount(p.slice.shape);
  p.slice.elem_size = dtypeSize(operand.dtype);
  p.slice.simplify();
}

Status planGather(OpView &v, GatherPlan &p) {
  const TensorType &operand = v.operand(0), &indices = v.operand(1), &out = v.result(0);
  RS_RETURN_IF_ERROR(checkElementSize(v, operand.dtype));
  RS_ASSIGN_OR_RETURN(ir::GatherDimensionNumbers dn,
                      v.prefixed(ir::gatherDimensionNumbers(v.op())));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> slice_sizes, v.intList("slice_sizes"));
  const GatherDims g = gatherDims(dn, operand.rank(), indices.rank(), out.rank());
  planIndices(operand, indices, out, dn, slice_sizes, g, p);
  planSliceCopy(operand, out, dn, slice_sizes, g, p);
  return Status::ok();
}

void runGather(const GatherPlan &p, const KernelIo &io) {
  const uint8_t *operand = io.in[0]->data(), *indices = io.in[1]->data();
  uint8_t *out = io.out[0].mutableData();
  const int64_t grain = std::max<int64_t>(1, kGatherGrain / std::max<int64_t>(1, p.slice_elems));
  const int64_t tiles = (p.batch_count + grain - 1) / grain;
  io.rc.cpu->parallelFor(tiles, [&](int64_t t) {
    const size_t nb = p.batch_sizes.size();
    std::vector<int64_t> bi(nb);
    for (int64_t b = t * grain, end = std::min(p.batch_count, (t + 1) * grain); b < end; ++b) {
      int64_t rem = b, index_off = 0, result_off = 0;
      for (size_t j = nb; j-- > 0;) {
        bi[j] = rem % p.batch_sizes[j];
        rem /= p.batch_sizes[j];
        index_off += bi[j] * p.batch_index_strides[j];
        result_off += bi[j] * p.batch_result_strides[j];
      }
      int64_t operand_off = 0;
      for (int64_t k = 0; k < p.index_count; ++k) {
        int64_t s = readIntegerElement(
            p.index_type, indices + (index_off + k * p.index_vector_stride) * p.index_size);
        s = std::clamp<int64_t>(s, 0, p.start_limits[static_cast<size_t>(k)]);
        operand_off +=
            s * p.operand_strides[static_cast<size_t>(p.start_dims[static_cast<size_t>(k)])];
      }
      for (size_t i = 0; i < p.batching_operand_strides.size(); ++i)
        operand_off +=
            bi[static_cast<size_t>(p.batching_batch_dims[i])] * p.batching_operand_strides[i];
      p.slice.runSerial(operand, out, operand_off, result_off);
    }
  });
}

} // namespace

void registerGatherKernels(KernelRegistry &r) {
  r.add("stablehlo.gather", &makeKernel<GatherPlan, planGather, runGather>);
}

} // namespace rs::cpu
