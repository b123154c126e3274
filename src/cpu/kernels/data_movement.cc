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
// Any element type of 1, 2, 4, 8 or 16 bytes (f16/bf16, complex included). Errors at plan time:
// InvalidArgument for attributes or shapes that break the op's constraints (cited as
// <op>_c<N> from openxla/stablehlo docs/spec.md).
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
  RS_RETURN_IF_ERROR(v.expectArity(0, 1));
  const ir::Attribute *a = v.attr("value");
  if (!a || a->kind != ir::AttrKind::kDenseElements || !a->tensor.valid())
    return v.error() << "has no dense 'value' attribute";
  const TensorType &out = v.result(0);
  if (a->tensor.dtype() != out.dtype || a->tensor.shape() != out.shape)
    return v.error() << "value of type "
                     << TensorType{a->tensor.dtype(), a->tensor.shape()}.toString()
                     << " does not match result type " << out.toString();
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
  RS_RETURN_IF_ERROR(v.expectArity(0, 1));
  RS_ASSIGN_OR_RETURN(int64_t dim, v.intAttr("iota_dimension"));
  const TensorType &out = v.result(0);
  if (dim < 0 || dim >= out.rank()) // iota_c1
    return v.error() << "iota_dimension " << dim << " not in [0, " << out.rank() << ")";
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
  RS_RETURN_IF_ERROR(v.expectArity(1, 1));
  const TensorType &in = v.operand(0), &out = v.result(0);
  if (in.dtype != out.dtype || in.numElements() != out.numElements()) // reshape_c1
    return v.error() << "cannot reshape " << in.toString() << " to " << out.toString();
  p.shape = out.shape;
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
  RS_RETURN_IF_ERROR(v.expectArity(1, 1));
  const TensorType &in = v.operand(0), &out = v.result(0);
  RS_RETURN_IF_ERROR(checkElementSize(v, in.dtype));
  if (in.dtype != out.dtype)
    return v.error() << "result element type differs from operand's";
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, v.intList("broadcast_dimensions"));
  if (static_cast<int64_t>(dims.size()) != in.rank() || !ir::validDims(dims, out.rank()))
    return v.error() << "broadcast_dimensions do not map operand rank " << in.rank()
                     << " into result rank " << out.rank(); // broadcast_in_dim_c2..c4
  std::vector<int64_t> in_strides = rowMajorStrides(in.shape);
  p.copy.shape = out.shape;
  p.copy.in_strides.assign(out.shape.size(), 0);
  p.copy.out_strides = rowMajorStrides(out.shape);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t n = in.shape[i], m = out.shape[static_cast<size_t>(dims[i])];
    if (n != 1 && n != m) // broadcast_in_dim_c5
      return v.error() << "operand dimension " << i << " of size " << n
                       << " cannot broadcast to result dimension " << dims[i] << " of size " << m;
    if (n != 1)
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
  RS_RETURN_IF_ERROR(v.expectArity(1, 1));
  const TensorType &in = v.operand(0), &out = v.result(0);
  RS_RETURN_IF_ERROR(checkElementSize(v, in.dtype));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> perm, v.intList("permutation"));
  if (static_cast<int64_t>(perm.size()) != in.rank() || !ir::validDims(perm, in.rank())) // c2
    return v.error() << "permutation is not a permutation of [0, " << in.rank() << ")";
  std::vector<int64_t> in_strides = rowMajorStrides(in.shape);
  p.copy.shape.resize(perm.size());
  p.copy.in_strides.resize(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) {
    p.copy.shape[d] = in.shape[static_cast<size_t>(perm[d])];
    p.copy.in_strides[d] = in_strides[static_cast<size_t>(perm[d])];
  }
  if (out.dtype != in.dtype || out.shape != p.copy.shape) // transpose_c4
    return v.error() << "result type " << out.toString() << " is not the permuted operand type";
  p.copy.out_strides = rowMajorStrides(out.shape);
  p.copy.elem_size = dtypeSize(in.dtype);
  p.copy.simplify();
  p.perm = std::move(perm);
  return Status::ok();
}

Status planReverse(OpView &v, CopyPlan &p) {
  RS_RETURN_IF_ERROR(v.expectArity(1, 1));
  const TensorType &in = v.operand(0);
  RS_RETURN_IF_ERROR(checkElementSize(v, in.dtype));
  if (v.result(0) != in)
    return v.error() << "result type differs from operand type";
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, v.intList("dimensions"));
  if (!ir::validDims(dims, in.rank())) // reverse_c2, c3
    return v.error() << "dimensions are not distinct dims in [0, " << in.rank() << ")";
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
  if (v.operands().empty() || v.results().size() != 1)
    return v.error() << "expects at least one operand and one result";
  const TensorType &out = v.result(0);
  RS_RETURN_IF_ERROR(checkElementSize(v, out.dtype));
  RS_ASSIGN_OR_RETURN(int64_t dim, v.intAttr("dimension"));
  if (dim < 0 || dim >= out.rank()) // concatenate_c4
    return v.error() << "dimension " << dim << " not in [0, " << out.rank() << ")";
  std::vector<int64_t> out_strides = rowMajorStrides(out.shape);
  int64_t offset = 0;
  for (const TensorType &in : v.operands()) {
    bool fits = in.dtype == out.dtype && in.rank() == out.rank();
    for (int64_t d = 0; fits && d < out.rank(); ++d)
      fits = d == dim || in.shape[static_cast<size_t>(d)] == out.shape[static_cast<size_t>(d)];
    if (!fits) // concatenate_c1, c2, c6
      return v.error() << "operand type " << in.toString() << " does not fit result type "
                       << out.toString() << " along dimension " << dim;
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
  if (offset != out.shape[static_cast<size_t>(dim)])
    return v.error() << "operand sizes along dimension " << dim << " sum to " << offset
                     << ", result has " << out.shape[static_cast<size_t>(dim)];
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
  RS_RETURN_IF_ERROR(v.expectArity(2, 1));
  const TensorType &in = v.operand(0), &value = v.operand(1), &out = v.result(0);
  RS_RETURN_IF_ERROR(checkElementSize(v, in.dtype));
  if (value.rank() != 0 || value.dtype != in.dtype || out.dtype != in.dtype) // pad_c1
    return v.error() << "padding value " << value.toString() << " is not a scalar of the operand "
                     << "element type";
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> lo, v.intList("edge_padding_low"));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> hi, v.intList("edge_padding_high"));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> interior, v.intList("interior_padding"));
  size_t rank = in.shape.size();
  if (lo.size() != rank || hi.size() != rank || interior.size() != rank) // pad_c2
    return v.error() << "padding lists must have " << rank << " entries";
  std::vector<int64_t> in_strides = rowMajorStrides(in.shape);
  std::vector<int64_t> out_strides = rowMajorStrides(out.shape);
  p.copy.shape.assign(rank, 0);
  p.copy.in_strides = in_strides;
  p.copy.out_strides.assign(rank, 0);
  for (size_t d = 0; d < rank; ++d) {
    int64_t n = in.shape[d];
    if (interior[d] < 0) // pad_c3
      return v.error() << "interior_padding " << interior[d] << " is negative";
    int64_t expect = lo[d] + hi[d] + n + std::max<int64_t>(n - 1, 0) * interior[d];
    if (expect != out.shape[d]) // pad_c4
      return v.error() << "result dimension " << d << " is " << out.shape[d] << ", expected "
                       << expect;
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
  RS_RETURN_IF_ERROR(v.expectArity(1, 1));
  RS_ASSIGN_OR_RETURN(int64_t dim, v.intAttr("dimension"));
  if (dim < 0 || dim >= v.operand(0).rank()) // get_dimension_size_c1
    return v.error() << "dimension " << dim << " not in [0, " << v.operand(0).rank() << ")";
  if (v.result(0) != TensorType{DType::kI32, {}})
    return v.error() << "result must be tensor<i32>";
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
