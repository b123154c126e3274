//===- ir/verify_data_movement.cc - constants, shapes, copies, slices ------===//
//
// stablehlo.constant, iota, reshape, broadcast_in_dim, transpose, reverse, concatenate,
// pad, get_dimension_size, slice, dynamic_slice and dynamic_update_slice (spec sections of
// the same names): element types kept, dimension attributes in range, the result shape.
//
//===----------------------------------------------------------------------===//
#include "ir/verify_impl.h"

#include <algorithm>

namespace rs::ir::detail {
namespace {

/// dynamic_slice_c2..c5, dynamic_update_slice_c3..c6: one rank-0 start index of one
/// integer type per operand dim, from operand `first` on, and `sizes` that fit the operand.
Status checkStartIndices(const OpCheck &c, size_t first, const Type &operand,
                         const std::vector<int64_t> &sizes) {
  const size_t rank = operand.shape.size();
  if (c.numOperands() != first + rank)
    return c.error() << "expects " << rank << " start indices, got "
                     << c.numOperands() - std::min(c.numOperands(), first);
  for (size_t d = 0; d < rank; ++d) {
    const Type &t = c.operand(first + d);
    if (t.rank() != 0 || !isInteger(t.element) || t.element != c.operand(first).element)
      return c.error() << "start index " << d << " of type " << tensorText(t)
                       << " is not a rank-0 integer of the first index's type";
    if (sizes[d] < 0 || sizes[d] > operand.shape[d])
      return c.error() << "size " << sizes[d] << " does not fit dimension " << d << " of size "
                       << operand.shape[d];
  }
  return Status::ok();
}

} // namespace

Status verifyConstant(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(0, 1));
  const Attribute *a = c.attr("value");
  if (!a)
    return c.error() << "has no dense 'value' attribute";
  const Type &out = c.result(0);
  if (a->kind == AttrKind::kDenseElements && a->tensor.valid() &&
      (a->tensor.dtype() != out.element || a->tensor.shape() != out.shape)) // constant_c1
    return c.error() << "value of type " << tensorText(a->tensor.dtype(), a->tensor.shape())
                     << " does not match result type " << tensorText(out);
  return Status::ok();
}

Status verifyIota(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(0, 1));
  RS_ASSIGN_OR_RETURN(int64_t dim, c.intAttr("iota_dimension"));
  const Type &out = c.result(0);
  if (dim < 0 || dim >= out.rank()) // iota_c1
    return c.error() << "iota_dimension " << dim << " not in [0, " << out.rank() << ")";
  return Status::ok();
}

Status verifyReshape(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(1, 1));
  const Type &in = c.operand(0), &out = c.result(0);
  if (in.element != out.element || in.numElements() != out.numElements()) // reshape_c1
    return c.error() << "cannot reshape " << tensorText(in) << " to " << tensorText(out);
  return Status::ok();
}

Status verifyBroadcastInDim(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(1, 1));
  const Type &in = c.operand(0), &out = c.result(0);
  if (in.element != out.element) // broadcast_in_dim_c1
    return c.error() << "result element type differs from operand's";
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, c.intList("broadcast_dimensions"));
  if (static_cast<int64_t>(dims.size()) != in.rank() || !validDims(dims, out.rank()))
    return c.error() << "broadcast_dimensions do not map operand rank " << in.rank()
                     << " into result rank " << out.rank(); // broadcast_in_dim_c2..c4
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t n = in.shape[i], m = out.shape[static_cast<size_t>(dims[i])];
    if (n != 1 && n != m) // broadcast_in_dim_c5
      return c.error() << "operand dimension " << i << " of size " << n
                       << " cannot broadcast to result dimension " << dims[i] << " of size " << m;
  }
  return Status::ok();
}

Status verifyTranspose(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(1, 1));
  const Type &in = c.operand(0), &out = c.result(0);
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> perm, c.intList("permutation"));
  if (static_cast<int64_t>(perm.size()) != in.rank() || !validDims(perm, in.rank())) // transpose_c2
    return c.error() << "permutation is not a permutation of [0, " << in.rank() << ")";
  Shape permuted;
  for (int64_t d : perm)
    permuted.push_back(in.shape[static_cast<size_t>(d)]);
  if (out.element != in.element || out.shape != permuted) // transpose_c4
    return c.error() << "result type " << tensorText(out) << " is not the permuted operand type";
  return Status::ok();
}

Status verifyReverse(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(1, 1));
  const Type &in = c.operand(0);
  if (!sameTensorType(c.result(0), in)) // reverse_c1
    return c.error() << "result type differs from operand type";
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, c.intList("dimensions"));
  if (!validDims(dims, in.rank())) // reverse_c2, c3
    return c.error() << "dimensions are not distinct dims in [0, " << in.rank() << ")";
  return Status::ok();
}

Status verifyConcatenate(const OpCheck &c) {
  if (c.numOperands() == 0 || c.numResults() != 1)
    return c.error() << "expects at least one operand and one result";
  const Type &out = c.result(0);
  RS_ASSIGN_OR_RETURN(int64_t dim, c.intAttr("dimension"));
  if (dim < 0 || dim >= out.rank()) // concatenate_c4
    return c.error() << "dimension " << dim << " not in [0, " << out.rank() << ")";
  int64_t sum = 0;
  for (size_t i = 0; i < c.numOperands(); ++i) {
    const Type &in = c.operand(i);
    bool fits = in.element == out.element && in.rank() == out.rank();
    for (int64_t d = 0; fits && d < out.rank(); ++d)
      fits = d == dim || in.shape[static_cast<size_t>(d)] == out.shape[static_cast<size_t>(d)];
    if (!fits) // concatenate_c1, c2, c6
      return c.error() << "operand type " << tensorText(in) << " does not fit result type "
                       << tensorText(out) << " along dimension " << dim;
    sum += in.shape[static_cast<size_t>(dim)];
  }
  if (sum != out.shape[static_cast<size_t>(dim)]) // concatenate_c6
    return c.error() << "operand sizes along dimension " << dim << " sum to " << sum
                     << ", result has " << out.shape[static_cast<size_t>(dim)];
  return Status::ok();
}

Status verifyPad(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(2, 1));
  const Type &in = c.operand(0), &value = c.operand(1), &out = c.result(0);
  if (value.rank() != 0 || value.element != in.element || out.element != in.element) // pad_c1
    return c.error() << "padding value " << tensorText(value) << " is not a scalar of the operand "
                     << "element type";
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> lo, c.intList("edge_padding_low"));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> hi, c.intList("edge_padding_high"));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> interior, c.intList("interior_padding"));
  const size_t rank = in.shape.size();
  if (lo.size() != rank || hi.size() != rank || interior.size() != rank) // pad_c2
    return c.error() << "padding lists must have " << rank << " entries";
  for (size_t d = 0; d < rank; ++d) {
    const int64_t n = in.shape[d];
    if (interior[d] < 0) // pad_c3
      return c.error() << "interior_padding " << interior[d] << " is negative";
    const int64_t expect = lo[d] + hi[d] + n + std::max<int64_t>(n - 1, 0) * interior[d];
    if (expect != out.shape[d]) // pad_c4
      return c.error() << "result dimension " << d << " is " << out.shape[d] << ", expected "
                       << expect;
  }
  return Status::ok();
}

Status verifyGetDimensionSize(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(1, 1));
  RS_ASSIGN_OR_RETURN(int64_t dim, c.intAttr("dimension"));
  if (dim < 0 || dim >= c.operand(0).rank()) // get_dimension_size_c1
    return c.error() << "dimension " << dim << " not in [0, " << c.operand(0).rank() << ")";
  if (c.result(0).element != DType::kI32 || c.result(0).rank() != 0)
    return c.error() << "result must be tensor<i32>";
  return Status::ok();
}

Status verifySlice(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(1, 1));
  const Type &in = c.operand(0), &out = c.result(0);
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> start, c.intList("start_indices"));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> limit, c.intList("limit_indices"));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                      c.intList("strides", std::vector<int64_t>(in.shape.size(), 1)));
  const size_t rank = in.shape.size();
  if (start.size() != rank || limit.size() != rank || strides.size() != rank) // slice_c2
    return c.error() << "index lists must have " << rank << " entries";
  if (out.element != in.element || out.rank() != in.rank()) // slice_c1
    return c.error() << "result type " << tensorText(out) << " does not fit operand "
                     << tensorText(in);
  for (size_t d = 0; d < rank; ++d) {
    if (start[d] < 0 || start[d] > limit[d] || limit[d] > in.shape[d] ||
        strides[d] <= 0) // slice_c3, c4
      return c.error() << "slice [" << start[d] << ", " << limit[d] << ") stride " << strides[d]
                       << " is invalid for dimension " << d << " of size " << in.shape[d];
    const int64_t n = (limit[d] - start[d] + strides[d] - 1) / strides[d];
    if (n != out.shape[d]) // slice_c5
      return c.error() << "result dimension " << d << " is " << out.shape[d] << ", expected " << n;
  }
  return Status::ok();
}

Status verifyDynamicSlice(const OpCheck &c) {
  if (c.numOperands() == 0 || c.numResults() != 1)
    return c.error() << "expects an operand and one result";
  const Type &in = c.operand(0), &out = c.result(0);
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, c.intList("slice_sizes"));
  if (sizes.size() != in.shape.size() || out.element != in.element ||
      out.shape != sizes) // dynamic_slice_c1, c5
    return c.error() << "slice_sizes " << shapeToString(sizes) << " do not match result type "
                     << tensorText(out);
  return checkStartIndices(c, 1, in, sizes);
}

Status verifyDynamicUpdateSlice(const OpCheck &c) {
  if (c.numOperands() < 2 || c.numResults() != 1)
    return c.error() << "expects an operand, an update and one result";
  const Type &in = c.operand(0), &update = c.operand(1), &out = c.result(0);
  if (!sameTensorType(out, in) || update.element != in.element ||
      update.rank() != in.rank()) // dynamic_update_slice_c1, c2
    return c.error() << "operand " << tensorText(in) << ", update " << tensorText(update)
                     << " and result " << tensorText(out) << " do not fit";
  return checkStartIndices(c, 2, in, update.shape);
}

} // namespace rs::ir::detail
