//===- ir/verify_reduce.cc - reduce, windows, sort, map, top_k -------------===//
//
// The ops with a scalar body region: stablehlo.reduce (spec "reduce", reduce_c1..c8),
// stablehlo.reduce_window (reduce_window_c1..c16), stablehlo.select_and_scatter
// (select_and_scatter_c1..c12), stablehlo.sort (sort_c1..c5) and stablehlo.map
// (map_c1..c4); and chlo.top_k (its operand's last dim, k and the two results).
//
//===----------------------------------------------------------------------===//
#include "ir/verify_impl.h"

namespace rs::ir::detail {
namespace {

/// reduce_c1..c3, reduce_window_c1..c3: N inputs, N init values and N results.
Result<size_t> inputCount(const OpCheck &c) {
  const size_t n = c.numOperands() / 2;
  if (n == 0 || c.numOperands() != 2 * n || c.numResults() != n)
    return c.error() << "expects N inputs, N init values and N results";
  return n;
}

/// The size of a windowed result along one dim (reduce_window_c16).
int64_t windowOutputSize(int64_t size, int64_t window, int64_t stride, int64_t lo, int64_t hi,
                         int64_t base_dilation, int64_t window_dilation) {
  const int64_t dilated = size == 0 ? 0 : (size - 1) * base_dilation + 1;
  const int64_t padded = dilated + lo + hi;
  const int64_t dw = (window - 1) * window_dilation + 1;
  return padded < dw ? 0 : (padded - dw) / stride + 1;
}

/// reduce_window_c4..c12: one entry per dim (two for padding), positive sizes, strides and
/// dilations; the result shape they give.
Result<Shape> reduceWindowShape(const OpCheck &c, const Type &in0) {
  const size_t rank = in0.shape.size();
  RS_ASSIGN_OR_RETURN(WindowAttributes w, c.prefixed(reduceWindowAttributes(c.op(), rank)));
  if (w.dimensions.size() != rank || w.strides.size() != rank || w.base_dilations.size() != rank ||
      w.window_dilations.size() != rank || w.padding.size() != 2 * rank) // reduce_window_c4..c12
    return c.error() << "window attributes must have " << rank << " entries";
  Shape out_shape(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (w.dimensions[d] <= 0 || w.strides[d] <= 0 || w.base_dilations[d] <= 0 ||
        w.window_dilations[d] <= 0) // reduce_window_c5, c7, c9, c11
      return c.error() << "window sizes, strides and dilations must be positive";
    out_shape[d] =
        windowOutputSize(in0.shape[d], w.dimensions[d], w.strides[d], w.padding[2 * d],
                         w.padding[2 * d + 1], w.base_dilations[d], w.window_dilations[d]);
  }
  return out_shape;
}

} // namespace

Status verifyReduce(const OpCheck &c) {
  RS_ASSIGN_OR_RETURN(size_t n, inputCount(c));
  const Type &in0 = c.operand(0);
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, c.intList("dimensions"));
  if (!validDims(dims, in0.rank())) // reduce_c4
    return c.error() << "dimensions are not distinct dims in [0, " << in0.rank() << ")";
  std::vector<bool> reduced(in0.shape.size(), false);
  for (int64_t d : dims)
    reduced[static_cast<size_t>(d)] = true;
  Shape kept;
  for (size_t d = 0; d < in0.shape.size(); ++d)
    if (!reduced[d])
      kept.push_back(in0.shape[d]);
  std::vector<DType> types;
  for (size_t i = 0; i < n; ++i) {
    const Type &in = c.operand(i), &init = c.operand(n + i), &out = c.result(i);
    if (in.shape != in0.shape) // reduce_c1
      return c.error() << "input " << i << " shape " << shapeToString(in.shape)
                       << " differs from input 0 shape " << shapeToString(in0.shape);
    if (init.rank() != 0) // reduce_c2
      return c.error() << "init value " << i << " of type " << tensorText(init)
                       << " is not a scalar";
    if (out.shape != kept) // reduce_c7
      return c.error() << "result " << i << " of type " << tensorText(out) << ", expected "
                       << tensorText(out.element, kept);
    types.push_back(out.element);
  }
  return checkFoldBody(c, 0, 2 * n, types, "body"); // reduce_c6, c8
}

Status verifyReduceWindow(const OpCheck &c) {
  RS_ASSIGN_OR_RETURN(size_t n, inputCount(c));
  const Type &in0 = c.operand(0);
  RS_ASSIGN_OR_RETURN(Shape out_shape, reduceWindowShape(c, in0));
  std::vector<DType> types;
  for (size_t i = 0; i < n; ++i) {
    const Type &in = c.operand(i), &init = c.operand(n + i), &out = c.result(i);
    if (in.shape != in0.shape) // reduce_window_c1
      return c.error() << "input " << i << " shape differs from input 0";
    if (init.rank() != 0) // reduce_window_c2
      return c.error() << "init value " << i << " of type " << tensorText(init)
                       << " is not a scalar";
    if (out.shape != out_shape) // reduce_window_c16
      return c.error() << "result " << i << " of type " << tensorText(out) << ", expected "
                       << tensorText(out.element, out_shape);
    types.push_back(out.element);
  }
  return checkFoldBody(c, 0, 2 * n, types, "body"); // reduce_window_c13, c15
}

Status verifySelectAndScatter(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(3, 1));
  const Type &operand = c.operand(0), &source = c.operand(1), &init = c.operand(2);
  const size_t rank = operand.shape.size();
  if (c.result(0).shape != operand.shape || init.rank() != 0) // select_and_scatter_c3, c12
    return c.error() << "operand, source, init_value and result types do not fit";
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> window,
                      c.intList("window_dimensions", std::vector<int64_t>(rank, 1)));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                      c.intList("window_strides", std::vector<int64_t>(rank, 1)));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> padding,
                      c.intList("padding", std::vector<int64_t>(2 * rank, 0)));
  if (window.size() != rank || strides.size() != rank ||
      padding.size() != 2 * rank) // select_and_scatter_c4, c6, c8
    return c.error() << "window attributes must have " << rank << " entries";
  Shape expect(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (window[d] <= 0 || strides[d] <= 0) // select_and_scatter_c5, c7
      return c.error() << "window sizes and strides must be positive";
    expect[d] = windowOutputSize(operand.shape[d], window[d], strides[d], padding[2 * d],
                                 padding[2 * d + 1], /*base_dilation=*/1, /*window_dilation=*/1);
  }
  if (source.shape != expect) // select_and_scatter_c1
    return c.error() << "source shape " << shapeToString(source.shape) << ", expected "
                     << shapeToString(expect);
  const DType pair[2] = {operand.element, operand.element}, i1 = DType::kBool;
  RS_RETURN_IF_ERROR(checkScalarBody(c, 0, pair, std::span<const DType>(&i1, 1),
                                     "select")); // select_and_scatter_c9
  return checkFoldBody(c, 1, 2, std::span<const DType>(&c.result(0).element, 1),
                       "scatter"); // select_and_scatter_c10
}

Status verifySort(const OpCheck &c) {
  const size_t n = c.numOperands();
  if (n == 0 || c.numResults() != n)
    return c.error() << "expects as many results as inputs"; // sort_c1
  const Type &in0 = c.operand(0);
  std::vector<DType> arg_types;
  for (size_t i = 0; i < n; ++i) {
    if (c.operand(i).shape != in0.shape ||
        !sameTensorType(c.result(i), c.operand(i))) // sort_c1, c2
      return c.error() << "input " << i << " or its result does not match input 0's shape";
    arg_types.push_back(c.operand(i).element);
    arg_types.push_back(c.operand(i).element);
  }
  RS_ASSIGN_OR_RETURN(int64_t dim, c.intAttr("dimension", -1));
  if (dim < -in0.rank() || dim >= in0.rank() || in0.rank() == 0) // sort_c4
    return c.error() << "dimension " << dim << " not in [" << -in0.rank() << ", " << in0.rank()
                     << ")";
  const DType i1 = DType::kBool;
  return checkScalarBody(c, 0, arg_types, std::span<const DType>(&i1, 1),
                         "comparator"); // sort_c5
}

Status verifyMap(const OpCheck &c) {
  if (c.numOperands() == 0 || c.numResults() != 1)
    return c.error() << "expects inputs and one result";
  const Type &out = c.result(0);
  std::vector<DType> arg_types;
  for (size_t i = 0; i < c.numOperands(); ++i) {
    const Type &in = c.operand(i);
    if (in.shape != out.shape) // map_c1
      return c.error() << "input " << tensorText(in) << " does not have the result shape "
                       << shapeToString(out.shape);
    arg_types.push_back(in.element);
  }
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, c.intList("dimensions"));
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != static_cast<int64_t>(i) || dims.size() != out.shape.size()) // map_c3
      return c.error() << "dimensions must be [0, .., " << out.rank() - 1 << "]";
  return checkScalarBody(c, 0, arg_types, std::span<const DType>(&out.element, 1),
                         "computation"); // map_c4
}

Status verifyTopK(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(1, 2));
  const Type &in = c.operand(0), &values = c.result(0), &indices = c.result(1);
  RS_ASSIGN_OR_RETURN(int64_t k, c.intAttr("k"));
  if (in.rank() == 0)
    return c.error() << "operand must have rank >= 1";
  const int64_t n = in.shape.back();
  if (k < 0 || k > n)
    return c.error() << "k " << k << " not in [0, " << n << "]";
  Shape out_shape = in.shape;
  out_shape.back() = k;
  if (values.element != in.element || values.shape != out_shape || indices.element != DType::kI32 ||
      indices.shape != out_shape)
    return c.error() << "results must be " << tensorText(in.element, out_shape) << " and "
                     << tensorText(DType::kI32, out_shape);
  return Status::ok();
}

} // namespace rs::ir::detail
