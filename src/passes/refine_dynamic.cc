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

#include "ir/op_attributes.h"

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

/// convolution_c4, c6, c8, c10 (spec "convolution", which dynamic_conv shares): one
/// window stride, dilation and reversal per spatial dimension, two padding entries.
Status checkWindowSizes(const ir::Operation &op, const ir::Module &m, size_t padding) {
  auto dims = ir::convDimensionNumbers(op);
  if (!dims.isOk())
    return opError(op, m) << dims.status().message();
  const size_t spatial = dims->input_spatial.size();
  if (padding != 2 * spatial)
    return opError(op, m) << "padding (operand 2) has " << padding << " entries, expected "
                          << 2 * spatial << " (two per spatial dimension)";
  for (std::string_view name :
       {"window_strides", "lhs_dilation", "rhs_dilation", "window_reversal"}) {
    const ir::Attribute *a = op.attr(name);
    const size_t n = a ? a->ints.size() : spatial;
    if (n != spatial)
      return opError(op, m) << name << " has " << n << " entries, expected " << spatial
                            << " (one per spatial dimension)";
  }
  return Status::ok();
}

/// A dynamic op whose static form takes shape operands as array<i64> attributes: the
/// static op's name, the operands it keeps (the leading ones), and per attribute the
/// operand that gives it.
struct Rewrite {
  std::string_view dynamic_name, static_name;
  size_t kept_operands;
  std::vector<std::pair<size_t, std::string_view>> attributes;
};

const Rewrite *attributeRewrite(std::string_view name) {
  static const Rewrite kRewrites[] = {
      {"stablehlo.real_dynamic_slice",
       "stablehlo.slice",
       1,
       {{1, "start_indices"}, {2, "limit_indices"}, {3, "strides"}}},
      {"stablehlo.dynamic_pad",
       "stablehlo.pad",
       2,
       {{2, "edge_padding_low"}, {3, "edge_padding_high"}, {4, "interior_padding"}}},
      {"stablehlo.dynamic_gather", "stablehlo.gather", 2, {{2, "slice_sizes"}}},
  };
  for (const Rewrite &r : kRewrites)
    if (r.dynamic_name == name)
      return &r;
  return nullptr;
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
  if (const Rewrite *r = attributeRewrite(n)) {
    std::vector<std::vector<int64_t>> values;
    for (const auto &[index, property] : r->attributes) {
      RS_ASSIGN_OR_RETURN(auto v, shapeOperand(op, m, known, index, property));
      values.push_back(std::move(v));
    }
    op.name = r->static_name;
    op.operands.resize(r->kept_operands);
    for (size_t i = 0; i < values.size(); ++i)
      setProperty(op, r->attributes[i].second, i64Array(std::move(values[i])));
  } else if (n == "stablehlo.dynamic_conv") {
    RS_ASSIGN_OR_RETURN(auto padding, shapeOperand(op, m, known, 2, "padding"));
    RS_RETURN_IF_ERROR(checkWindowSizes(op, m, padding.size()));
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
