//===- passes/refine_infer.cc - Static result shapes from operand types ----===//
//
// The shape rules of the StableHLO specification (openxla/stablehlo docs/spec.md, each
// op's "Semantics" and shape constraints) for the ops whose results shape-polymorphic
// exports leave dynamic: elementwise ops and the ops whose results have an operand's
// shape, broadcast_in_dim, reshape, concatenate, transpose, pad, slice, reduce,
// reduce_window, dot, dot_general, gather and convolution. A result dimension that is
// static already is kept (a mismatch is the verifier's to report).
//
//===----------------------------------------------------------------------===//
#include "passes/refine_shapes_impl.h"

#include "ir/op_attributes.h"

#include <algorithm>
#include <set>

namespace rs::passes::detail {
namespace {

/// Ops whose result i has the shape of operand `sameShapeOperand(name, i)`.
const std::set<std::string_view> kElementwise = {
    "stablehlo.abs",
    "stablehlo.add",
    "stablehlo.and",
    "stablehlo.atan2",
    "stablehlo.bitcast_convert",
    "stablehlo.cbrt",
    "stablehlo.ceil",
    "stablehlo.compare",
    "stablehlo.complex",
    "stablehlo.convert",
    "stablehlo.cosine",
    "stablehlo.count_leading_zeros",
    "stablehlo.divide",
    "stablehlo.exponential",
    "stablehlo.exponential_minus_one",
    "stablehlo.floor",
    "stablehlo.imag",
    "stablehlo.is_finite",
    "stablehlo.log",
    "stablehlo.log_plus_one",
    "stablehlo.logistic",
    "stablehlo.maximum",
    "stablehlo.minimum",
    "stablehlo.multiply",
    "stablehlo.negate",
    "stablehlo.not",
    "stablehlo.or",
    "stablehlo.popcnt",
    "stablehlo.power",
    "stablehlo.real",
    "stablehlo.reduce_precision",
    "stablehlo.remainder",
    "stablehlo.round_nearest_afz",
    "stablehlo.round_nearest_even",
    "stablehlo.rsqrt",
    "stablehlo.shift_left",
    "stablehlo.shift_right_arithmetic",
    "stablehlo.shift_right_logical",
    "stablehlo.sign",
    "stablehlo.sine",
    "stablehlo.sqrt",
    "stablehlo.subtract",
    "stablehlo.tan",
    "stablehlo.tanh",
    "stablehlo.xor",
    "stablehlo.map",
    "stablehlo.dynamic_update_slice",
    "stablehlo.select_and_scatter",
    "chlo.erf",
};

/// Ops whose result i has the shape of operand i.
const std::set<std::string_view> kPerOperand = {
    "stablehlo.sort", "stablehlo.scatter", "stablehlo.optimization_barrier", "stablehlo.while"};

const Shape &operandShape(const ir::Operation &op, const ir::Module &m, size_t i) {
  return m.typeOf(op.operands[i]).shape;
}

/// `declared` with each dynamic dimension taken from `from` (same rank).
Result<Shape> fillFrom(const ir::Operation &op, const ir::Module &m, const Shape &declared,
                       const Shape &from) {
  if (declared.size() != from.size())
    return opError(op, m) << "result rank " << declared.size() << " differs from operand rank "
                          << from.size();
  Shape s = declared;
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] < 0)
      s[i] = from[i];
  return s;
}

Result<Shape> broadcastInDim(const ir::Operation &op, const ir::Module &m, Shape s) {
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ir::intListAttr(op, "broadcast_dimensions"));
  const Shape &x = operandShape(op, m, 0);
  for (size_t j = 0; j < dims.size() && j < x.size(); ++j)
    if (dims[j] >= 0 && dims[j] < static_cast<int64_t>(s.size()) &&
        s[static_cast<size_t>(dims[j])] < 0)
      s[static_cast<size_t>(dims[j])] = x[j];
  return s;
}

Result<Shape> reshape(const ir::Operation &op, const ir::Module &m, Shape s) {
  const int64_t total = elementCount(operandShape(op, m, 0));
  int64_t known = 1, dynamic = 0;
  for (int64_t d : s)
    d < 0 ? ++dynamic : known *= d;
  if (dynamic > 1 || known == 0 || total % known != 0)
    return opError(op, m) << "cannot infer the result shape of a reshape of " << total
                          << " elements to " << ir::Type::tensor(DType::kF32, s).toString();
  for (int64_t &d : s)
    if (d < 0)
      d = total / known;
  return s;
}

Result<Shape> concatenate(const ir::Operation &op, const ir::Module &m, Shape s) {
  RS_ASSIGN_OR_RETURN(int64_t dim, ir::intAttr(op, "dimension"));
  int64_t sum = 0;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const Shape &x = operandShape(op, m, i);
    if (x.size() != s.size() || dim < 0 || dim >= static_cast<int64_t>(x.size()))
      return opError(op, m) << "operand " << i << " has rank " << x.size() << ", expected "
                            << s.size();
    sum += x[static_cast<size_t>(dim)];
    for (size_t k = 0; k < s.size(); ++k)
      if (static_cast<int64_t>(k) != dim && s[k] < 0)
        s[k] = x[k];
  }
  s[static_cast<size_t>(dim)] = sum;
  return s;
}

Result<Shape> pad(const ir::Operation &op, const ir::Module &m, Shape s) {
  const Shape &x = operandShape(op, m, 0);
  RS_ASSIGN_OR_RETURN(auto lo, ir::intListAttr(op, "edge_padding_low"));
  RS_ASSIGN_OR_RETURN(auto hi, ir::intListAttr(op, "edge_padding_high"));
  RS_ASSIGN_OR_RETURN(auto in, ir::intListAttr(op, "interior_padding"));
  for (size_t i = 0;
       i < s.size() && i < x.size() && i < lo.size() && i < hi.size() && i < in.size(); ++i)
    s[i] = lo[i] + hi[i] + x[i] + std::max<int64_t>(x[i] - 1, 0) * in[i];
  return s;
}

Result<Shape> slice(const ir::Operation &op, Shape s) {
  RS_ASSIGN_OR_RETURN(auto start, ir::intListAttr(op, "start_indices"));
  RS_ASSIGN_OR_RETURN(auto limit, ir::intListAttr(op, "limit_indices"));
  RS_ASSIGN_OR_RETURN(auto strides, ir::intListAttr(op, "strides"));
  for (size_t i = 0; i < s.size() && i < start.size() && i < limit.size() && i < strides.size();
       ++i)
    s[i] = strides[i] > 0
               ? std::max<int64_t>(0, (limit[i] - start[i] + strides[i] - 1) / strides[i])
               : -1;
  return s;
}

Result<Shape> reduce(const ir::Operation &op, const ir::Module &m) {
  RS_ASSIGN_OR_RETURN(auto dims, ir::intListAttr(op, "dimensions"));
  const Shape &x = operandShape(op, m, 0);
  Shape s;
  for (size_t i = 0; i < x.size(); ++i)
    if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(i)) == dims.end())
      s.push_back(x[i]);
  return s;
}

/// A window's output size (spec "reduce_window", "convolution"): the dilated, padded input
/// against the dilated window, stepped by the stride.
int64_t windowOutput(int64_t in, int64_t base_dilation, int64_t lo, int64_t hi, int64_t window,
                     int64_t window_dilation, int64_t stride) {
  const int64_t padded = (in == 0 ? 0 : (in - 1) * base_dilation + 1) + lo + hi;
  const int64_t dilated = (window - 1) * window_dilation + 1;
  if (padded < dilated || stride <= 0)
    return 0;
  return (padded - dilated) / stride + 1;
}

Result<Shape> reduceWindow(const ir::Operation &op, const ir::Module &m) {
  const Shape &x = operandShape(op, m, 0);
  RS_ASSIGN_OR_RETURN(ir::WindowAttributes w, ir::reduceWindowAttributes(op, x.size()));
  Shape s(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    s[i] = windowOutput(x[i], w.base_dilations[i], w.padding[2 * i], w.padding[2 * i + 1],
                        w.dimensions[i], w.window_dilations[i], w.strides[i]);
  return s;
}

Result<Shape> dotGeneral(const ir::Operation &op, const ir::Module &m) {
  RS_ASSIGN_OR_RETURN(ir::DotDimensionNumbers d, ir::dotDimensionNumbers(op));
  const Shape &l = operandShape(op, m, 0), &r = operandShape(op, m, 1);
  Shape s;
  for (int64_t b : d.lhs_batching)
    s.push_back(l[static_cast<size_t>(b)]);
  for (int64_t i :
       ir::complementDims(static_cast<int64_t>(l.size()), {d.lhs_batching, d.lhs_contracting}))
    s.push_back(l[static_cast<size_t>(i)]);
  for (int64_t i :
       ir::complementDims(static_cast<int64_t>(r.size()), {d.rhs_batching, d.rhs_contracting}))
    s.push_back(r[static_cast<size_t>(i)]);
  return s;
}

Result<Shape> dot(const ir::Operation &op, const ir::Module &m) {
  const Shape &l = operandShape(op, m, 0), &r = operandShape(op, m, 1);
  Shape s(l.begin(), l.end() - (l.empty() ? 0 : 1));
  if (!r.empty())
    s.insert(s.end(), r.begin() + 1, r.end());
  return s;
}

Result<Shape> gather(const ir::Operation &op, const ir::Module &m, const Shape &declared) {
  RS_ASSIGN_OR_RETURN(ir::GatherDimensionNumbers d, ir::gatherDimensionNumbers(op));
  RS_ASSIGN_OR_RETURN(auto sizes, ir::intListAttr(op, "slice_sizes"));
  const Shape &idx = operandShape(op, m, 1);
  Shape batch;
  for (size_t i = 0; i < idx.size(); ++i)
    if (static_cast<int64_t>(i) != d.index_vector_dim)
      batch.push_back(idx[i]);
  Shape offsets;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t k = static_cast<int64_t>(i);
    if (std::find(d.collapsed_slice_dims.begin(), d.collapsed_slice_dims.end(), k) ==
            d.collapsed_slice_dims.end() &&
        std::find(d.operand_batching_dims.begin(), d.operand_batching_dims.end(), k) ==
            d.operand_batching_dims.end())
      offsets.push_back(sizes[i]);
  }
  Shape s(declared.size());
  size_t b = 0, o = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool is_offset = std::find(d.offset_dims.begin(), d.offset_dims.end(),
                                     static_cast<int64_t>(i)) != d.offset_dims.end();
    if (is_offset ? o >= offsets.size() : b >= batch.size())
      return opError(op, m) << "result rank " << s.size() << " does not match the gather";
    s[i] = is_offset ? offsets[o++] : batch[b++];
  }
  return s;
}

Result<Shape> convolution(const ir::Operation &op, const ir::Module &m, size_t rank) {
  RS_ASSIGN_OR_RETURN(ir::ConvAttributes a, ir::convAttributes(op));
  const Shape &x = operandShape(op, m, 0), &k = operandShape(op, m, 1);
  Shape s(rank);
  auto at = [](const Shape &sh, int64_t i) { return sh[static_cast<size_t>(i)]; };
  s[static_cast<size_t>(a.dims.output_batch)] =
      at(x, a.dims.input_batch) / std::max<int64_t>(a.batch_group_count, 1);
  s[static_cast<size_t>(a.dims.output_feature)] = at(k, a.dims.kernel_output_feature);
  for (size_t i = 0; i < a.dims.input_spatial.size(); ++i)
    s[static_cast<size_t>(a.dims.output_spatial[i])] = windowOutput(
        at(x, a.dims.input_spatial[i]), a.lhs_dilation[i], a.padding[2 * i], a.padding[2 * i + 1],
        at(k, a.dims.kernel_spatial[i]), a.rhs_dilation[i], a.window_strides[i]);
  return s;
}

/// The rule for result `i` of `op` (declared shape `declared`).
Result<Shape> inferResult(const ir::Operation &op, const ir::Module &m, size_t i,
                          const Shape &declared) {
  const std::string_view n = op.name;
  if (kElementwise.count(n) && !op.operands.empty()) {
    // select and clamp take the shape of their second operand (the first may be a scalar),
    // triangular_solve of b.
    return fillFrom(op, m, declared, operandShape(op, m, 0));
  }
  if ((n == "stablehlo.select" || n == "stablehlo.clamp" || n == "stablehlo.triangular_solve") &&
      op.operands.size() >= 2)
    return fillFrom(op, m, declared, operandShape(op, m, 1));
  if (kPerOperand.count(n) && i < op.operands.size())
    return fillFrom(op, m, declared, operandShape(op, m, i));
  if (n == "stablehlo.broadcast_in_dim")
    return broadcastInDim(op, m, declared);
  if (n == "stablehlo.reshape")
    return reshape(op, m, declared);
  if (n == "stablehlo.concatenate")
    return concatenate(op, m, declared);
  if (n == "stablehlo.pad")
    return pad(op, m, declared);
  if (n == "stablehlo.slice")
    return slice(op, declared);
  if (n == "stablehlo.transpose" || n == "stablehlo.reverse") {
    const Shape &x = operandShape(op, m, 0);
    if (n == "stablehlo.reverse")
      return fillFrom(op, m, declared, x);
    RS_ASSIGN_OR_RETURN(auto perm, ir::intListAttr(op, "permutation"));
    Shape s(perm.size());
    for (size_t k = 0; k < perm.size(); ++k)
      s[k] = x[static_cast<size_t>(perm[k])];
    return fillFrom(op, m, declared, s);
  }
  if (n == "stablehlo.reduce")
    return reduce(op, m);
  if (n == "stablehlo.reduce_window")
    return reduceWindow(op, m);
  if (n == "stablehlo.dot_general")
    return dotGeneral(op, m);
  if (n == "stablehlo.dot")
    return dot(op, m);
  if (n == "stablehlo.gather")
    return gather(op, m, declared);
  if (n == "stablehlo.convolution")
    return convolution(op, m, declared.size());
  return opError(op, m) << "has no shape rule for result " << i << " of type "
                        << m.typeOf(op.results[i]).toString();
}

} // namespace

Result<std::vector<Shape>> inferShapes(const ir::Operation &op, const ir::Module &m) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < op.results.size(); ++i) {
    const ir::Type &t = m.typeOf(op.results[i]);
    if (!isDynamic(t)) {
      shapes.push_back(t.shape);
      continue;
    }
    for (size_t k = 0; k < op.operands.size(); ++k)
      if (isDynamic(m.typeOf(op.operands[k])))
        return opError(op, m) << "operand " << k << " of type "
                              << m.typeOf(op.operands[k]).toString() << " is still dynamic";
    auto s = inferResult(op, m, i, t.shape);
    if (!s.isOk()) {
      // A decoding error of op_attributes.h names no op: prefix it.
      const std::string &msg = s.status().message();
      if (msg.find(": error: '") != std::string::npos)
        return s.status();
      return opError(op, m) << msg;
    }
    for (int64_t d : *s)
      if (d < 0)
        return opError(op, m) << "cannot infer a static shape for result " << i << " of type "
                              << t.toString();
    shapes.push_back(std::move(s).value());
  }
  return shapes;
}

} // namespace rs::passes::detail
