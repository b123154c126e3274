//===- cpu/kernels/slice.cc - slice, dynamic_slice, dynamic_update_slice ---===//
//
// stablehlo.slice: start_indices, limit_indices, strides (0 <= start <= limit <= dim,
// stride > 0; result dim = ceil((limit - start) / stride)).
// stablehlo.dynamic_slice: operand, one rank-0 integer start index per dim, slice_sizes;
// each start is clamped to [0, dim - size] at run time (spec "dynamic_slice").
// stablehlo.dynamic_update_slice: operand, update, rank-0 start indices; the result is the
// operand with the update written at the clamped start ([0, dim - update dim]).
// Any element type of 1, 2, 4 or 8 bytes; start indices of any integer type. The ops are
// verified (ir/verify_data_movement.cc: slice_c1..c5, dynamic_slice_c1..c5,
// dynamic_update_slice_c1..c6); the plans lay out the copies. Errors at plan time:
// Unimplemented for an element type of another size.
//
//===----------------------------------------------------------------------===//
#include "cpu/kernels/kernel.h"

#include <algorithm>

namespace rs::cpu {
namespace {

struct SlicePlan {
  StridedCopy copy;
  Shape shape; // of the result
  std::vector<int64_t> start, strides;
};

Status planSlice(OpView &v, SlicePlan &p) {
  const TensorType &in = v.operand(0), &out = v.result(0);
  RS_RETURN_IF_ERROR(checkElementSize(v, in.dtype));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> start, v.intList("start_indices"));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                      v.intList("strides", std::vector<int64_t>(in.shape.size(), 1)));
  const size_t rank = in.shape.size();
  std::vector<int64_t> in_strides = rowMajorStrides(in.shape);
  p.copy.shape = out.shape;
  p.copy.in_strides.resize(rank);
  for (size_t d = 0; d < rank; ++d) {
    p.copy.in_offset += start[d] * in_strides[d];
    p.copy.in_strides[d] = in_strides[d] * strides[d];
  }
  p.copy.out_strides = rowMajorStrides(out.shape);
  p.copy.elem_size = dtypeSize(in.dtype);
  p.copy.simplify();
  p.shape = out.shape;
  p.start = std::move(start);
  p.strides = std::move(strides);
  return Status::ok();
}

void runSlice(const SlicePlan &p, const KernelIo &io) {
  p.copy.run(io.rc, io.in[0]->data(), io.out[0].mutableData());
}

bool sliceView(const SlicePlan &p, StridedView &view) {
  if (view.shape.size() != p.shape.size())
    return false;
  for (size_t d = 0; d < p.shape.size(); ++d) {
    view.offset += p.start[d] * view.strides[d];
    view.strides[d] *= p.strides[d];
  }
  view.shape = p.shape;
  return true;
}

/// Start indices read from rank-0 operands at run time, clamped to [0, dim - size].
struct DynamicStart {
  DType index_type = DType::kI32;
  Shape dims;                 // operand dims
  std::vector<int64_t> sizes; // slice or update sizes
  std::vector<int64_t> strides;

  int64_t offset(std::span<const Tensor *const> index_operands) const {
    int64_t off = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      int64_t s = readIntegerElement(index_type, index_operands[d]->data());
      s = std::clamp<int64_t>(s, 0, dims[d] - sizes[d]);
      off += s * strides[d];
    }
    return off;
  }
};

void planStart(OpView &v, size_t first, const TensorType &operand, std::vector<int64_t> sizes,
               DynamicStart &s) {
  const size_t rank = operand.shape.size();
  s.index_type = rank ? v.operand(first).dtype : DType::kI32;
  s.dims = operand.shape;
  s.sizes = std::move(sizes);
  s.strides = rowMajorStrides(operand.shape);
}

struct DynamicSlicePlan {
  StridedCopy copy;
  DynamicStart start;
};

Status planDynamicSlice(OpView &v, DynamicSlicePlan &p) {
  const TensorType &in = v.operand(0), &out = v.result(0);
  RS_RETURN_IF_ERROR(checkElementSize(v, in.dtype));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, v.intList("slice_sizes"));
  planStart(v, 1, in, std::move(sizes), p.start);
  p.copy.shape = out.shape;
  p.copy.in_strides = rowMajorStrides(in.shape);
  p.copy.out_strides = rowMajorStrides(out.shape);
  p.copy.elem_size = dtypeSize(in.dtype);
  p.copy.simplify();
  return Status::ok();
}

void runDynamicSlice(const DynamicSlicePlan &p, const KernelIo &io) {
  int64_t off = p.start.offset(io.in.subspan(1));
  p.copy.run(io.rc, io.in[0]->data(), io.out[0].mutableData(), off, 0);
}

struct DynamicUpdateSlicePlan {
  StridedCopy copy; // update -> result
  DynamicStart start;
};

Status planDynamicUpdateSlice(OpView &v, DynamicUpdateSlicePlan &p) {
  const TensorType &in = v.operand(0), &update = v.operand(1);
  RS_RETURN_IF_ERROR(checkElementSize(v, in.dtype));
  planStart(v, 2, in, update.shape, p.start);
  p.copy.shape = update.shape;
  p.copy.in_strides = rowMajorStrides(update.shape);
  p.copy.out_strides = rowMajorStrides(in.shape);
  p.copy.elem_size = dtypeSize(in.dtype);
  p.copy.simplify();
  return Status::ok();
}

void runDynamicUpdateSlice(const DynamicUpdateSlicePlan &p, const KernelIo &io) {
  Tensor &out = io.out[0];
  std::memcpy(out.mutableData(), io.in[0]->data(), static_cast<size_t>(out.byteSize()));
  int64_t off = p.start.offset(io.in.subspan(2));
  p.copy.run(io.rc, io.in[1]->data(), out.mutableData(), 0, off);
}

} // namespace

void registerSliceKernels(KernelRegistry &r) {
  r.add("stablehlo.slice", &makeViewKernel<SlicePlan, planSlice, runSlice, sliceView>,
        OutputMode::kOverwritten);
  r.add("stablehlo.dynamic_slice",
        &makeKernel<DynamicSlicePlan, planDynamicSlice, runDynamicSlice>);
  r.add("stablehlo.dynamic_update_slice",
        &makeKernel<DynamicUpdateSlicePlan, planDynamicUpdateSlice, runDynamicUpdateSlice>);
}

} // namespace rs::cpu
