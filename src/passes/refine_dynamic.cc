//===- passes/refine_dynamic.cc - Dynamic ops to their static forms -------===//
//
// Once the shape operands of a dynamic op are known, the op is its static counterpart
// with those operands as attributes (StableHLO spec: dynamic_broadcast_in_dim is
// broadcast_in_dim with output_dimensions as the result shape, dynamic_reshape is reshape,
// dynamic_iota is iota, real_dynamic_slice is slice, dynamic_pad is pad, dynamic_gather is
// gather with slice_sizes, dynamic_conv is convolution with padding), as
// stablehlo-refine-shapes rewrites them. The result type becomes the static one; a
// declared static dimension that differs is an error.
//
//===----------------------------------------------------------------------===//
#include "passes/refine_shapes_impl.h"

#include <algorithm>

namespace rs::passes::detail {
namespace {

/// The elements of shape operand `index` (named `what` in errors).
Result<std::vector<int64_t>> shapeOperand(const ir::Operation &op, const ir::Module &m,
                                          const FoldedValues &known, size_t index,
                                          std::string_view what) {
  if (index >= op.operands.size())
    return opError(op, m) << "expects operand " << index << " (" << what << ")";
  auto it = known.find(op.operands[index]);
  if (it == known.end())
    return opError(op, m) << what << " (operand " << index
                          << ") is not a constant after refinement: it depends on a value "
                             "other than the dimension arguments and static shapes";
  return it->second.values;
}

/// Sets the result type's shape to `shape` after checking it against the declared static
/// dimensions.
Status setResultShape(const ir::Operation &op, ir::Module &m, const Shape &shape) {
  ir::Type &t = m.value_types[static_cast<size_t>(op.results[0])];
  if (t.shape.size() != shape.size())
    return opError(op, m) << "result " << t.toString() << " has rank " << t.shape.size()
                          << ", the refined shape " << shapeToString(shape) << " has rank "
                          << shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0)
      return opError(op, m) << "refined dimension " << i << " is negative (" << shape[i] << ")";
    if (t.shape[i] >= 0 && t.shape[i] != shape[i])
      return opError(op, m) << "result dimension " << i << " is declared " << t.shape[i]
                            << " but refines to " << shape[i];
  }
  t.shape = shape;
  return Status::ok();
}

/// Infers the result shape of the rewritten static op from its operands and attributes.
Status inferResultShape(const ir::Operation &op, ir::Module &m) {
  ir::Type &t = m.value_types[static_cast<size_t>(op.results[0])];
  const Shape declared = t.shape;
  std::fill(t.shape.begin(), t.shape.end(), -1);
  Result<std::vector<Shape>> shapes = inferShapes(op, m);
  t.shape = declared;
  if (!shapes.isOk())
    return shapes.status();
  return setResultShape(op, m, (*shapes)[0]);
}

ir::Attribute paddingAttribute(const std::vector<int64_t> &lo_hi) {
  Folded f{DType::kI64, {static_cast<int64_t>(lo_hi.size() / 2), 2}, lo_hi};
  return denseAttribute(f);
}

} // namespace

Result<bool> makeStatic(ir::Operation &op, ir::Module &m, const FoldedValues &known) {
  const std::string_view n = op.name;
  if (op.results.size() != 1)
    return false;
  if (n == "stablehlo.dynamic_broadcast_in_dim") {
    RS_ASSIGN_OR_RETURN(auto dims, shapeOperand(op, m, known, 1, "output_dimensions"));
    // dynamic_broadcast_in_dim_c1..c5 as broadcast_in_dim's constraints: the verifier checks
    // the rewritten op; here each operand dimension must be 1 or the output's.
    const ir::Attribute *bd = op.attr("broadcast_dimensions");
    const ir::Type &x = m.typeOf(op.operands[0]);
    if (bd && bd->ints.size() == x.shape.size())
      for (size_t j = 0; j < bd->ints.size(); ++j) {
        const int64_t d = bd->ints[j];
        if (d >= 0 && d < static_cast<int64_t>(dims.size()) && x.shape[j] != 1 &&
            x.shape[j] != dims[static_cast<size_t>(d)])
          return opError(op, m) << "operand dimension " << j << " of size " << x.shape[j]
                                << " does not broadcast to output dimension " << d << " of size "
                                << dims[static_cast<size_t>(d)];
      }
    RS_RETURN_IF_ERROR(setResultShape(op, m, dims));
    op.name = "stablehlo.broadcast_in_dim";
    op.operands.resize(1);
    eraseProperty(op, "known_expanding_dimensions");
    eraseProperty(op, "known_nonexpanding_dimensions");
    return true;
  }
  if (n == "stablehlo.dynamic_reshape") {
    RS_ASSIGN_OR_RETURN(auto dims, shapeOperand(op, m, known, 1, "output_shape"));
    const int64_t count = elementCount(m.typeOf(op.operands[0]).shape);
    if (std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= 0; }) &&
        elementCount(dims) != count)
      return opError(op, m) << "output_shape " << shapeToString(dims) << " holds "
                            << elementCount(dims) << " elements, the operand " << count;
    RS_RETURN_IF_ERROR(setResultShape(op, m, dims));
    op.name = "stablehlo.reshape";
    op.operands.resize(1);
    return true;
  }
  if (n == "stablehlo.dynamic_iota") {
    RS_ASSIGN_OR_RETURN(auto dims, shapeOperand(op, m, known, 0, "output_shape"));
    RS_RETURN_IF_ERROR(setResultShape(op, m, dims));
    op.name = "stablehlo.iota";
    op.operands.clear();
    return true;
  }
  if (n == "stablehlo.real_dynamic_slice") {
    RS_ASSIGN_OR_RETURN(auto start, shapeOperand(op, m, known, 1, "start_indices"));
    RS_ASSIGN_OR_RETURN(auto limit, shapeOperand(op, m, known, 2, "limit_indices"));
    RS_ASSIGN_OR_RETURN(auto strides, shapeOperand(op, m, known, 3, "strides"));
    op.name = "stablehlo.slice";
    op.operands.resize(1);
    setProperty(op, "limit_indices", i64Array(limit));
    setProperty(op, "start_indices", i64Array(start));
    setProperty(op, "strides", i64Array(strides));
  } else if (n == "stablehlo.dynamic_pad") {
    RS_ASSIGN_OR_RETURN(auto lo, shapeOperand(op, m, known, 2, "edge_padding_low"));
    RS_ASSIGN_OR_RETURN(auto hi, shapeOperand(op, m, known, 3, "edge_padding_high"));
    RS_ASSIGN_OR_RETURN(auto in, shapeOperand(op, m, known, 4, "interior_padding"));
    op.name = "stablehlo.pad";
    op.operands.resize(2);
    setProperty(op, "edge_padding_high", i64Array(hi));
    setProperty(op, "edge_padding_low", i64Array(lo));
    setProperty(op, "interior_padding", i64Array(in));
  } else if (n == "stablehlo.dynamic_gather") {
    RS_ASSIGN_OR_RETURN(auto sizes, shapeOperand(op, m, known, 2, "slice_sizes"));
    op.name = "stablehlo.gather";
    op.operands.resize(2);
    setProperty(op, "slice_sizes", i64Array(sizes));
  } else if (n == "stablehlo.dynamic_conv") {
    RS_ASSIGN_OR_RETURN(auto padding, shapeOperand(op, m, known, 2, "padding"));
    op.name = "stablehlo.convolution";
    op.operands.resize(2);
    setProperty(op, "padding", paddingAttribute(padding));
  } else {
    return false;
  }
  RS_RETURN_IF_ERROR(inferResultShape(op, m));
  return true;
}

} // namespace rs::passes::detail
