//===- ir/verify_gather_scatter.cc - gather and scatter --------------------===//
//
// stablehlo.gather (spec "gather", gather_c1..c22) and stablehlo.scatter (spec "scatter",
// scatter_c1..c24): index types, dimension numbers, slice sizes, the result or updates
// shape, and scatter's update_computation signature.
//
//===----------------------------------------------------------------------===//
#include "ir/verify_impl.h"

#include <algorithm>

namespace rs::ir::detail {
namespace {

bool contains(const std::vector<int64_t> &dims, int64_t d) {
  return std::find(dims.begin(), dims.end(), d) != dims.end();
}

/// The number of index vector entries: the size of index_vector_dim, or 1 when it is the
/// rank (an implicit trailing dim).
int64_t indexCount(const Type &indices, int64_t index_vector_dim) {
  return index_vector_dim < indices.rank() ? indices.shape[static_cast<size_t>(index_vector_dim)]
                                           : 1;
}

/// gather_c2, c4..c15: index_vector_dim, slice_sizes, the offset, collapsed and batching
/// dims, start_index_map.
Status checkGatherDims(const OpCheck &c, const GatherDimensionNumbers &dn,
                       const std::vector<int64_t> &slice_sizes) {
  const Type &operand = c.operand(0), &indices = c.operand(1), &out = c.result(0);
  const int64_t orank = operand.rank(), irank = indices.rank(), rrank = out.rank();
  const int64_t ivd = dn.index_vector_dim;
  if (ivd < 0 || ivd > irank) // gather_c2
    return c.error() << "index_vector_dim " << ivd << " not in [0, " << irank << "]";
  if (static_cast<int64_t>(slice_sizes.size()) != orank) // gather_c14
    return c.error() << "slice_sizes must have " << orank << " entries";
  for (int64_t d = 0; d < orank; ++d)
    if (slice_sizes[static_cast<size_t>(d)] < 0 ||
        slice_sizes[static_cast<size_t>(d)] > operand.shape[static_cast<size_t>(d)]) // c15
      return c.error() << "slice size " << slice_sizes[static_cast<size_t>(d)]
                       << " does not fit operand dimension " << d;
  std::vector<int64_t> not_offset = dn.collapsed_slice_dims;
  not_offset.insert(not_offset.end(), dn.operand_batching_dims.begin(),
                    dn.operand_batching_dims.end());
  if (!validDims(not_offset, orank) || !validDims(dn.offset_dims, rrank) ||
      !std::is_sorted(dn.offset_dims.begin(), dn.offset_dims.end())) // gather_c4..c9
    return c.error() << "offset, collapsed or batching dims are invalid";
  for (int64_t d : not_offset)
    if (slice_sizes[static_cast<size_t>(d)] > 1) // gather_c7, c9
      return c.error() << "collapsed or batching dimension " << d << " has slice size above 1";
  const int64_t index_count = indexCount(indices, ivd);
  if (static_cast<int64_t>(dn.start_index_map.size()) != index_count ||
      !validDims(dn.start_index_map, orank)) // gather_c12
    return c.error() << "start_index_map must name " << index_count << " distinct operand dims";
  if (dn.operand_batching_dims.size() != dn.start_indices_batching_dims.size()) // gather_c10
    return c.error() << "batching dimension lists differ in length";
  for (size_t i = 0; i < dn.start_indices_batching_dims.size(); ++i) {
    const int64_t d = dn.start_indices_batching_dims[i];
    if (d < 0 || d >= irank || d == ivd ||
        indices.shape[static_cast<size_t>(d)] !=
            operand.shape[static_cast<size_t>(dn.operand_batching_dims[i])]) // gather_c11, c13
      return c.error() << "start_indices_batching_dims entry " << d << " is invalid";
  }
  return Status::ok();
}

/// gather_c5, c22: the result shape from the batch dims of start_indices and the slice.
Status checkGatherResult(const OpCheck &c, const GatherDimensionNumbers &dn,
                         const std::vector<int64_t> &slice_sizes) {
  const Type &operand = c.operand(0), &indices = c.operand(1), &out = c.result(0);
  const int64_t rrank = out.rank();
  std::vector<int64_t> not_offset = dn.collapsed_slice_dims;
  not_offset.insert(not_offset.end(), dn.operand_batching_dims.begin(),
                    dn.operand_batching_dims.end());
  const std::vector<int64_t> slice_operand_dims = complementDims(operand.rank(), {not_offset});
  if (slice_operand_dims.size() != dn.offset_dims.size()) // gather_c5
    return c.error() << "offset_dims must have " << slice_operand_dims.size() << " entries";
  const std::vector<int64_t> index_batch_dims =
      complementDims(indices.rank(), {std::span<const int64_t>(&dn.index_vector_dim, 1)});
  const std::vector<int64_t> result_batch_dims = complementDims(rrank, {dn.offset_dims});
  if (index_batch_dims.size() != result_batch_dims.size())
    return c.error() << "result rank " << rrank << " does not fit the batch and offset dims";
  Shape expect(static_cast<size_t>(rrank));
  for (size_t j = 0; j < result_batch_dims.size(); ++j)
    expect[static_cast<size_t>(result_batch_dims[j])] =
        indices.shape[static_cast<size_t>(index_batch_dims[j])];
  for (size_t k = 0; k < dn.offset_dims.size(); ++k)
    expect[static_cast<size_t>(dn.offset_dims[k])] =
        slice_sizes[static_cast<size_t>(slice_operand_dims[k])];
  if (expect != out.shape) // gather_c22
    return c.error() << "result shape " << shapeToString(out.shape) << ", expected "
                     << shapeToString(expect);
  return Status::ok();
}

/// scatter_c1..c3, c24: N inputs of one shape, updates of one shape, results the inputs'
/// types.
Status checkScatterOperands(const OpCheck &c, size_t n) {
  const Type &input0 = c.operand(0), &indices = c.operand(n), &updates0 = c.operand(n + 1);
  if (!isInteger(indices.element)) // scatter_i2
    return c.error() << "scatter_indices type " << tensorText(indices) << " is not integer";
  for (size_t i = 0; i < n; ++i) {
    const Type &in = c.operand(i), &upd = c.operand(n + 1 + i), &out = c.result(i);
    if (in.shape != input0.shape || upd.shape != updates0.shape ||
        out.shape != in.shape) // scatter_c1..c3, c24
      return c.error() << "input " << i << ", update or result types do not fit";
  }
  return Status::ok();
}

/// scatter_c4, c7..c15: the window, inserted and batching dims, the index map, and the
/// updates shape against the indices and the input.
Status checkScatterDims(const OpCheck &c, size_t n, const ScatterDimensionNumbers &dn) {
  const Type &input0 = c.operand(0), &indices = c.operand(n), &updates0 = c.operand(n + 1);
  const int64_t rank = input0.rank(), irank = indices.rank(), urank = updates0.rank();
  const int64_t ivd = dn.index_vector_dim;
  const std::vector<int64_t> &window_dims = dn.update_window_dims;
  if (ivd < 0 || ivd > irank)
    return c.error() << "index_vector_dim " << ivd << " not in [0, " << irank << "]";
  if (!validDims(window_dims, urank) || !std::is_sorted(window_dims.begin(), window_dims.end()))
    return c.error() << "update_window_dims are invalid"; // scatter_c7, c8
  std::vector<int64_t> not_window = dn.inserted_window_dims;
  not_window.insert(not_window.end(), dn.input_batching_dims.begin(), dn.input_batching_dims.end());
  if (!validDims(not_window, rank)) // scatter_c9..c11
    return c.error() << "inserted_window_dims and input_batching_dims are invalid";
  const int64_t index_count = indexCount(indices, ivd);
  if (static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size()) != index_count ||
      !validDims(dn.scatter_dims_to_operand_dims, rank))
    return c.error() << "scatter_dims_to_operand_dims must name " << index_count
                     << " distinct input dims"; // scatter_c14, c15
  if (dn.input_batching_dims.size() != dn.scatter_indices_batching_dims.size())
    return c.error() << "batching dimension lists differ in length";
  const std::vector<int64_t> window_input_dims = complementDims(rank, {not_window});
  if (window_input_dims.size() != window_dims.size()) // scatter_c4
    return c.error() << "update_window_dims must have " << window_input_dims.size() << " entries";
  const std::vector<int64_t> index_pos_dims =
      complementDims(irank, {std::span<const int64_t>(&ivd, 1)});
  const std::vector<int64_t> update_pos_dims = complementDims(urank, {window_dims});
  if (index_pos_dims.size() != update_pos_dims.size())
    return c.error() << "updates rank " << urank << " does not fit the scatter indices";
  for (size_t j = 0; j < update_pos_dims.size(); ++j)
    if (updates0.shape[static_cast<size_t>(update_pos_dims[j])] !=
        indices.shape[static_cast<size_t>(index_pos_dims[j])]) // scatter_c4
      return c.error() << "updates dimension " << update_pos_dims[j]
                       << " does not match the scatter indices";
  for (size_t k = 0; k < window_dims.size(); ++k)
    if (updates0.shape[static_cast<size_t>(window_dims[k])] >
        input0.shape[static_cast<size_t>(window_input_dims[k])]) // scatter_c4
      return c.error() << "update window dimension " << window_dims[k] << " exceeds the input";
  for (int64_t d : dn.scatter_indices_batching_dims)
    if (!contains(index_pos_dims, d)) // scatter_c12, c13
      return c.error() << "scatter_indices_batching_dims entry " << d << " is invalid";
  return Status::ok();
}

} // namespace

Status verifyGather(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(2, 1));
  const Type &operand = c.operand(0), &indices = c.operand(1), &out = c.result(0);
  if (!isInteger(indices.element)) // gather_i2
    return c.error() << "start_indices type " << tensorText(indices) << " is not an integer tensor";
  if (out.element != operand.element) // gather_c23
    return c.error() << "result element type differs from the operand's";
  RS_ASSIGN_OR_RETURN(GatherDimensionNumbers dn, c.prefixed(gatherDimensionNumbers(c.op())));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> slice_sizes, c.intList("slice_sizes"));
  RS_RETURN_IF_ERROR(checkGatherDims(c, dn, slice_sizes));
  return checkGatherResult(c, dn, slice_sizes);
}

Status verifyScatter(const OpCheck &c) {
  const size_t total = c.numOperands();
  if (total < 3 || (total - 1) % 2 != 0 || c.numResults() != (total - 1) / 2)
    return c.error() << "expects N inputs, scatter indices, N updates and N results";
  const size_t n = (total - 1) / 2;
  RS_RETURN_IF_ERROR(checkScatterOperands(c, n));
  RS_ASSIGN_OR_RETURN(ScatterDimensionNumbers dn, c.prefixed(scatterDimensionNumbers(c.op())));
  RS_RETURN_IF_ERROR(checkScatterDims(c, n, dn));
  // scatter_c23, c24: update_computation (current_0..N-1, update_0..N-1) -> (new_0..N-1),
  // new_i of result i's element type.
  std::vector<DType> types;
  for (size_t i = 0; i < n; ++i)
    types.push_back(c.result(i).element);
  return checkFoldBody(c, 0, 2 * n, types, "update_computation");
}

} // namespace rs::ir::detail
