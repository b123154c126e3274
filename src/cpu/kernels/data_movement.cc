//===- cpu/kernels/data_movement.cc - constant, iota, reshape, layout ops --===//
//
// stablehlo.constant (value: dense elements of the result type; the output shares the
// constant's storage), stablehlo.iota (iota_dimension; integer, float and complex (index, 0)
// results), stablehlo.reshape (same element count; output shares the operand's storage),
// stablehlo.broadcast_in_dim (broadcast_dimensions: operand dim i maps to result dim
// dims[i], of equal size or size 1), stablehlo.transpose (permutation: result dim d is
// operand dim perm[d]), stablehlo.concatenate (dimension), stablehlo.pad
// (edge_padding_low/high, possibly negative, and interior_padding >= 0; padding_value is
// a rank-0 operand), stablehlo.reverse (dimensions), stablehlo.get_dimension_size.
// Any element type of 1, 2, 4, 8 or 16 bytes (f16/bf16, complex included). The ops are
// verified (ir/verify_data_movement.cc: the constraints of each); the plans lay out the
// copies. Errors at plan time: Unimplemented for an element type of another size.
//
//===----------------------------------------------------------------------===//
#include "cpu/kernels/element_ops.h"
#include "cpu/kernels/kernel.h"

#include <algorithm>

namespace rs::cpu {
namespace {

//===----------------------------------------------------------------------===//
// constant
//===----------------------------------------------------------------------===//

struct ConstantPlan {
  Tensor value;
};

Status planConstant(OpView &v, ConstantPlan &p) {
  const ir::Attribute *a = v.attr("value");
  if (!a || a->kind != ir::AttrKind::kDenseElements || !a->tensor.valid())
    return v.error() << "has no dense 'value' attribute";
  p.value = a->tensor;
  return Status::ok();
}

void runConstant(const ConstantPlan &p, const KernelIo &io) { io.out[0] = p.value; }

//===----------------------------------------------------------------------===//
// iota
//===----------------------------------------------------------------------===//

template <typename T> void iotaFill(uint8_t *out_bytes, int64_t outer, int64_t mid, int64_t inner) {
  T *out = reinterpret_cast<T *>(out_bytes);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t m = 0; m < mid; ++m) {
      T value;
      if constexpr (kIsHalf<T>)
        value = toHalf<T>(m);
      else if constexpr (ops::kComplex<T>) // spec "iota": (index, 0)
        value = T(static_cast<typename T::value_type>(m), 0);
      else
        value = static_cast<T>(m);
      std::fill(out, out + inner, value);
      out += inner;
    }
}

struct IotaPlan {
  void (*fn)(uint8_t *, int64_t, int64_t, int64_t) = nullptr;
  int64_t outer = 0, mid = 0, inner = 0;
};

Status planIota(OpView &v, IotaPlan &p) {
  RS_ASSIGN_OR_RETURN(int64_t dim, v.intAttr("iota_dimension"));
  const TensorType &out = v.result(0);
  visitNumericOrComplexType(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>)
      p.fn = &iotaFill<T>;
  });
  if (!p.fn)
    return v.unsupportedType(out.dtype);
  p.outer = elementCount(std::span(out.shape).first(static_cast<size_t>(dim)));
  p.mid = out.shape[static_cast<size_t>(dim)];
  p.inner = elementCount(std::span(out.shape).subspan(static_cast<size_t>(dim) + 1));
  return Status::ok();
}

void runIota(const IotaPlan &p, const KernelIo &io) {
  p.fn(io.out[0].mutableData(), p.outer, p.mid, p.inner);
}

//===----------------------------------------------------------------------===//
// reshape
//===----------------------------------------------------------------------===//

struct ReshapePlan {
  Shape shape;
};

Status planReshape(OpView &v, ReshapePlan &p) {
  p.shape = v.result(0).shape;
  return Status::ok();
}

void runReshape(const ReshapePlan &p, const KernelIo &io) {
  io.out[0] = io.in[0]->reshaped(p.shape);
}

bool reshapeView(const ReshapePlan &p, StridedView &view) { return view.reshape(p.shape); }

//===----------------------------------------------------------------------===//
// Ops that are one strided copy: broadcast_in_dim, transpose, reverse
//===----------------------------------------------------------------------===//

struct CopyPlan {
  StridedCopy copy;
};

void runCopy(const CopyPlan &p, const KernelIo &io) {
  p.copy.run(io.rc, io.in[0]->data(), io.out[0].mutableData());
}

Status planBroadcastInDim(OpView &v, CopyPlan &p) {
  const TensorType &in = v.operand(0), &out = v.result(0);
  RS_RETURN_IF_ERROR(checkElementSize(v, in.dtype));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, v.intList("broadcast_dimensions"));
  std::vector<int64_t> in_strides = rowMajorStrides(in.shape);
  p.copy.shape = out.shape;
  p.copy.in_strides.assign(out.shape.size(), 0);
  p.copy.out_strides = rowMajorStrides(out.shape);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (in.shape[i] != 1)
      p.copy.in_strides[static_cast<size_t>(dims[i])] = in_strides[i];
  }
  p.copy.elem_size = dtypeSize(in.dtype);
  p.copy.simplify();
  return Status::ok();
}

/// transpose: the copy, and the permutation for its view (result dim d is operand dim
/// perm[d]).
struct TransposePlan : CopyPlan {
  std::vector<int64_t> perm;
};

void runTranspose(const TransposePlan &p, const KernelIo &io) { runCopy(p, io); }

bool transposeView(const TransposePlan &p, StridedView &view) {
  if (view.shape.size() != p.perm.size())
    return false;
  StridedView out;
  for (int64_t d : p.perm) {
    out.shape.push_back(view.shape[static_cast<size_t>(d)]);
    out.strides.push_back(view.strides[static_cast<size_t>(d)]);
  }
  out.offset = view.offset;
  view = std::move(out);
  return true;
}

Status planTranspose(OpView &v, TransposePlan &p) {
  const TensorType &in = v.operand(0), &out = v.result(0);
  RS_RETURN_IF_ERROR(checkElementSize(v, in.dtype));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> perm, v.intList("permutation"));
  std::vector<int64_t> in_strides = rowMajorStrides(in.shape);
  p.copy.shape.resize(perm.size());
  p.copy.in_strides.resize(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) {
    p.copy.shape[d] = in.shape[static_cast<size_t>(perm[d])];
    p.copy.in_strides[d] = in_strides[static_cast<size_t>(perm[d])];
  }
  p.copy.out_strides = rowMajorStrides(out.shape);
  p.copy.elem_size = dtypeSize(in.dtype);
  p.copy.simplify();
  p.perm = std::move(perm);
  return Status::ok();
}

Status planReverse(OpView &v, CopyPlan &p) {
  const TensorType &in = v.operand(0);
  RS_RETURN_IF_ERROR(checkElementSize(v, in.dtype));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, v.intList("dimensions"));
  p.copy.shape = in.shape;
  p.copy.in_strides = rowMajorStrides(in.shape);
  p.copy.out_strides = p.copy.in_strides;
  for (int64_t d : dims) {
    size_t i = static_cast<size_t>(d);
    if (in.shape[i] > 0)
      p.copy.in_offset += (in.shape[i] - 1) * p.copy.in_strides[i];
    p.copy.in_strides[i] = -p.copy.in_strides[i];
  }
  p.copy.elem_size = dtypeSize(in.dtype);
  p.copy.simplify();
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// concatenate
//===----------------------------------------------------------------------===//

struct ConcatenatePlan {
  std::vector<StridedCopy> copies; // one per operand
};

Status planConcatenate(OpView &v, ConcatenatePlan &p) {
  const TensorType &out = v.result(0);
  RS_RETURN_IF_ERROR(checkElementSize(v, out.dtype));
  RS_ASSIGN_OR_RETURN(int64_t dim, v.intAttr("dimension"));
  std::vector<int64_t> out_strides = rowMajorStrides(out.shape);
  int64_t offset = 0;
  for (const TensorType &in : v.operands()) {
    StridedCopy c;
    c.shape = in.shape;
    c.in_strides = rowMajorStrides(in.shape);
    c.out_strides = out_strides;
    c.out_offset = offset * out_strides[static_cast<size_t>(dim)];
    c.elem_size = dtypeSize(out.dtype);
    c.simplify();
    p.copies.push_back(std::move(c));
    offset += in.shape[static_cast<size_t>(dim)];
  }
  return Status::ok();
}

void runConcatenate(const ConcatenatePlan &p, const KernelIo &io) {
  for (size_t i = 0; i < p.copies.size(); ++i)
    p.copies[i].run(io.rc, io.in[i]->data(), io.out[0].mutableData());
}

//===----------------------------------------------------------------------===//
// pad
//===----------------------------------------------------------------------===//

struct PadPlan {
  StridedCopy copy; // the operand elements that land inside the result
  int64_t n = 0, elem_size = 0;
};

Status planPad(OpView &v, PadPlan &p) {
  const TensorType &in = v.operand(0), &out = v.result(0);
  RS_RETURN_IF_ERROR(checkElementSize(v, in.dtype));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> lo, v.intList("edge_padding_low"));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> interior, v.intList("interior_padding"));
  const size_t rank = in.shape.size();
  std::vector<int64_t> in_strides = rowMajorStrides(in.shape);
  std::vector<int64_t> out_strides = rowMajorStrides(out.shape);
  p.copy.shape.assign(rank, 0);
  p.copy.in_strides = in_strides;
  p.copy.out_strides.assign(rank, 0);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t n = in.shape[d];
    int64_t step = interior[d] + 1;
    // Operand indices i with 0 <= lo + i * step < out.shape[d].
    int64_t first = lo[d] >= 0 ? 0 : (-lo[d] + step - 1) / step;
    int64_t last = out.shape[d] - 1 - lo[d] < 0 ? 0 : (out.shape[d] - 1 - lo[d]) / step + 1;
    last = std::min(last, n);
    int64_t count = std::max<int64_t>(0, last - first);
    p.copy.shape[d] = count;
    p.copy.in_offset += first * in_strides[d];
    p.copy.out_offset += (lo[d] + first * step) * out_strides[d];
    p.copy.out_strides[d] = out_strides[d] * step;
  }
  p.copy.elem_size = dtypeSize(in.dtype);
  p.copy.simplify();
  p.n = out.numElements();
  p.elem_size = p.copy.elem_size;
  return Status::ok();
}

void runPad(const PadPlan &p, const KernelIo &io) {
  uint8_t *out = io.out[0].mutableData();
  fillElements(out, p.n, io.in[1]->data(), p.elem_size);
  p.copy.run(io.rc, io.in[0]->data(), out);
}

//===----------------------------------------------------------------------===//
// get_dimension_size
//===----------------------------------------------------------------------===//

struct DimensionSizePlan {
  int32_t size = 0;
};

Status planDimensionSize(OpView &v, DimensionSizePlan &p) {
  RS_ASSIGN_OR_RETURN(int64_t dim, v.intAttr("dimension"));
  p.size = static_cast<int32_t>(v.operand(0).shape[static_cast<size_t>(dim)]);
  return Status::ok();
}

void runDimensionSize(const DimensionSizePlan &p, const KernelIo &io) {
  *io.out[0].mutableDataAs<int32_t>() = p.size;
}

} // namespace

void registerDataMovementKernels(KernelRegistry &r) {
  r.add("stablehlo.constant", &makeKernel<ConstantPlan, planConstant, runConstant>,
        OutputMode::kAssigned);
  r.add("stablehlo.iota", &makeKernel<IotaPlan, planIota, runIota>);
  r.add("stablehlo.reshape", &makeViewKernel<ReshapePlan, planReshape, runReshape, reshapeView>,
        OutputMode::kAssigned);
  r.add("stablehlo.broadcast_in_dim", &makeKernel<CopyPlan, planBroadcastInDim, runCopy>,
        OutputMode::kOverwritten);
  r.add("stablehlo.transpose",
        &makeViewKernel<TransposePlan, planTranspose, runTranspose, transposeView>,
        OutputMode::kOverwritten);
  r.add("stablehlo.reverse", &makeKernel<CopyPlan, planReverse, runCopy>);
  r.add("stablehlo.concatenate", &makeKernel<ConcatenatePlan, planConcatenate, runConcatenate>);
  r.add("stablehlo.pad", &makeKernel<PadPlan, planPad, runPad>);
  r.add("stablehlo.get_dimension_size",
        &makeKernel<DimensionSizePlan, planDimensionSize, runDimensionSize>);
}

} // namespace rs::cpu
