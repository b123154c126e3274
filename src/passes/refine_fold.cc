//===- passes/refine_fold.cc - Folding of shape computations ---------------===//
//
// Computes the elements of small integer and boolean results of ops whose operands are
// known (refine_shapes_impl.h, Folded): the arithmetic that shape-polymorphic exports
// use to build shape operands from dimension arguments and get_dimension_size. Every
// result element is wrapped to the width of its dtype, as the op would compute it
// (StableHLO spec: integer overflow wraps).
//
//===----------------------------------------------------------------------===//
#include "passes/refine_shapes_impl.h"

#include "ir/op_attributes.h"
#include "support/integer_element.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace rs::passes::detail {
namespace {

/// `v` wrapped to the width of integer dtype `t` (two's complement), bools to 0/1.
int64_t wrap(int64_t v, DType t) {
  if (t == DType::kBool)
    return v != 0;
  const int bits = dtypeBitWidth(t);
  if (bits >= 64)
    return v;
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (isSigned(t) && (u >> (bits - 1)) & 1)
    u |= ~mask;
  return static_cast<int64_t>(u);
}

/// The multi-index of flat element `flat` of `shape`.
std::vector<int64_t> indexOf(int64_t flat, const Shape &shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    idx[i] = shape[i] ? flat % shape[i] : 0;
    flat = shape[i] ? flat / shape[i] : 0;
  }
  return idx;
}

std::optional<int64_t> binary(std::string_view name, int64_t a, int64_t b, DType t) {
  const bool is_signed = isSigned(t) || t == DType::kBool;
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  if (name == "stablehlo.add")
    return static_cast<int64_t>(ua + ub);
  if (name == "stablehlo.subtract")
    return static_cast<int64_t>(ua - ub);
  if (name == "stablehlo.multiply")
    return static_cast<int64_t>(ua * ub);
  if (name == "stablehlo.and")
    return a & b;
  if (name == "stablehlo.or")
    return a | b;
  if (name == "stablehlo.xor")
    return a ^ b;
  if (name == "stablehlo.maximum")
    return is_signed ? std::max(a, b) : static_cast<int64_t>(std::max(ua, ub));
  if (name == "stablehlo.minimum")
    return is_signed ? std::min(a, b) : static_cast<int64_t>(std::min(ua, ub));
  if (name == "stablehlo.divide" || name == "stablehlo.remainder") {
    // Division by zero and INT_MIN / -1 have implementation-defined results (spec
    // "divide"): left to the backend.
    if (b == 0 || (is_signed && b == -1 && a == std::numeric_limits<int64_t>::min()))
      return std::nullopt;
    if (name == "stablehlo.divide")
      return is_signed ? a / b : static_cast<int64_t>(ua / ub);
    return is_signed ? a % b : static_cast<int64_t>(ua % ub);
  }
  return std::nullopt;
}

std::optional<int64_t> unary(std::string_view name, int64_t a, DType t) {
  if (name == "stablehlo.negate")
    return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
  if (name == "stablehlo.abs")
    return isSigned(t) && a < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a)) : a;
  if (name == "stablehlo.not")
    return t == DType::kBool ? !a : ~a;
  if (name == "stablehlo.sign")
    return isSigned(t) ? (a > 0) - (a < 0) : a != 0;
  if (name == "stablehlo.convert")
    return a;
  return std::nullopt;
}

std::optional<bool> compare(const ir::Operation &op, int64_t a, int64_t b, DType t) {
  const ir::Attribute *dir = op.attr("comparison_direction");
  const ir::Attribute *type = op.attr("compare_type");
  if (!dir)
    return std::nullopt;
  const bool is_unsigned = (type && type->str == "UNSIGNED") || (!isSigned(t) && !type);
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  const std::string &d = dir->str;
  if (d == "EQ")
    return a == b;
  if (d == "NE")
    return a != b;
  if (d == "LT")
    return is_unsigned ? ua < ub : a < b;
  if (d == "LE")
    return is_unsigned ? ua <= ub : a <= b;
  if (d == "GT")
    return is_unsigned ? ua > ub : a > b;
  if (d == "GE")
    return is_unsigned ? ua >= ub : a >= b;
  return std::nullopt;
}

/// The value of shape `out` whose element at each index is the element of `x` at flat
/// index `source(index)`; nullopt when `source` gives an index outside `x`.
template <typename F>
std::optional<Folded> pick(const Folded &x, const Shape &out, const F &source) {
  Folded r{x.dtype, out, std::vector<int64_t>(static_cast<size_t>(elementCount(out)))};
  for (size_t flat = 0; flat < r.values.size(); ++flat) {
    const std::optional<int64_t> src = source(indexOf(static_cast<int64_t>(flat), out));
    if (!src || *src < 0 || *src >= static_cast<int64_t>(x.values.size()))
      return std::nullopt;
    r.values[flat] = x.values[static_cast<size_t>(*src)];
  }
  return r;
}

std::optional<Folded> broadcastInDim(const ir::Operation &op, const Folded &x, const Shape &out) {
  auto dims = ir::intListAttr(op, "broadcast_dimensions");
  if (!dims.isOk() || dims->size() != x.shape.size())
    return std::nullopt;
  const std::vector<int64_t> xs = rowMajorStrides(x.shape);
  return pick(x, out, [&](const std::vector<int64_t> &idx) -> std::optional<int64_t> {
    int64_t src = 0;
    for (size_t j = 0; j < dims->size(); ++j) {
      const int64_t d = (*dims)[j];
      if (d < 0 || d >= static_cast<int64_t>(out.size()))
        return std::nullopt;
      src += (x.shape[j] == 1 ? 0 : idx[static_cast<size_t>(d)]) * xs[j];
    }
    return src;
  });
}

std::optional<Folded> concatenate(const ir::Operation &op, const std::vector<const Folded *> &xs,
                                  const Shape &out) {
  auto dim = ir::intAttr(op, "dimension");
  if (!dim.isOk() || *dim < 0 || *dim >= static_cast<int64_t>(out.size()))
    return std::nullopt;
  const size_t d = static_cast<size_t>(*dim);
  // outer = product of dims before d; each operand contributes a block of its dims >= d.
  int64_t outer = 1;
  for (size_t i = 0; i < d; ++i)
    outer *= out[i];
  Folded r{xs[0]->dtype, out, {}};
  for (int64_t o = 0; o < outer; ++o)
    for (const Folded *x : xs) {
      const int64_t block = outer ? static_cast<int64_t>(x->values.size()) / outer : 0;
      r.values.insert(r.values.end(), x->values.begin() + o * block,
                      x->values.begin() + (o + 1) * block);
    }
  if (static_cast<int64_t>(r.values.size()) != elementCount(out))
    return std::nullopt;
  return r;
}

std::optional<Folded> slice(const ir::Operation &op, const Folded &x, const Shape &out) {
  auto start = ir::intListAttr(op, "start_indices");
  auto strides = ir::intListAttr(op, "strides", std::vector<int64_t>(x.shape.size(), 1));
  if (!start.isOk() || !strides.isOk() || start->size() != x.shape.size() ||
      strides->size() != x.shape.size() || out.size() != x.shape.size())
    return std::nullopt;
  const std::vector<int64_t> xs = rowMajorStrides(x.shape);
  return pick(x, out, [&](const std::vector<int64_t> &idx) -> std::optional<int64_t> {
    int64_t src = 0;
    for (size_t j = 0; j < idx.size(); ++j)
      src += ((*start)[j] + idx[j] * (*strides)[j]) * xs[j];
    return src;
  });
}

/// An elementwise op over operands of the result's shape (select's predicate may be a
/// scalar).
std::optional<Folded> elementwise(const ir::Operation &op, const std::vector<const Folded *> &xs,
                                  const ir::Type &result) {
  Folded r{result.element, result.shape,
           std::vector<int64_t>(static_cast<size_t>(elementCount(result.shape)))};
  auto at = [&](size_t k, size_t i) {
    return xs[k]->values.size() == 1 ? xs[k]->values[0] : xs[k]->values[i];
  };
  for (size_t k = 0; k < xs.size(); ++k)
    if (xs[k]->values.size() != r.values.size() && xs[k]->values.size() != 1)
      return std::nullopt;
  const DType in = xs[0]->dtype;
  for (size_t i = 0; i < r.values.size(); ++i) {
    std::optional<int64_t> v;
    if (op.name == "stablehlo.select" && xs.size() == 3)
      v = at(0, i) ? at(1, i) : at(2, i);
    else if (op.name == "stablehlo.clamp" && xs.size() == 3)
      v = *binary("stablehlo.minimum", *binary("stablehlo.maximum", at(1, i), at(0, i), in),
                  at(2, i), in);
    else if (op.name == "stablehlo.compare" && xs.size() == 2) {
      std::optional<bool> c = compare(op, at(0, i), at(1, i), in);
      if (c)
        v = *c;
    } else if (xs.size() == 2)
      v = binary(op.name, at(0, i), at(1, i), in);
    else if (xs.size() == 1)
      v = unary(op.name, at(0, i), in);
    if (!v)
      return std::nullopt;
    r.values[i] = wrap(*v, result.element);
  }
  return r;
}

} // namespace

bool foldableType(DType t) { return t == DType::kBool || (isInteger(t) && !isSubByteInt(t)); }

std::optional<Folded> foldedFromAttribute(const ir::Attribute &a) {
  if (a.kind != ir::AttrKind::kDenseElements || !a.tensor.valid() ||
      !foldableType(a.tensor.dtype()) || a.tensor.numElements() > kFoldElementLimit)
    return std::nullopt;
  Folded f{a.tensor.dtype(), a.tensor.shape(), {}};
  const int64_t size = dtypeSize(f.dtype);
  for (int64_t i = 0; i < a.tensor.numElements(); ++i)
    f.values.push_back(readIntegerElement(f.dtype, a.tensor.data() + i * size));
  return f;
}

ir::Attribute denseAttribute(const Folded &f) {
  ir::Attribute a;
  a.kind = ir::AttrKind::kDenseElements;
  a.tensor = Tensor::zeros(f.dtype, f.shape);
  const int64_t size = dtypeSize(f.dtype);
  for (size_t i = 0; i < f.values.size(); ++i) {
    const uint64_t v = static_cast<uint64_t>(f.values[i]);
    std::memcpy(a.tensor.mutableData() + static_cast<int64_t>(i) * size, &v,
                static_cast<size_t>(size)); // little-endian, as Tensor holds elements
  }
  a.tensor_type = std::make_shared<ir::Type>(ir::Type::tensor(f.dtype, f.shape));
  return a;
}

std::optional<Folded> foldOp(const ir::Operation &op, const ir::Module &m,
                             const FoldedValues &known, const ir::Type &result_type) {
  if (op.results.size() != 1 || !result_type.isTensor() || isDynamic(result_type) ||
      !foldableType(result_type.element) || result_type.numElements() > kFoldElementLimit)
    return std::nullopt;
  const Shape &out = result_type.shape;
  if (op.name == "stablehlo.constant") {
    const ir::Attribute *v = op.attr("value");
    return v ? foldedFromAttribute(*v) : std::nullopt;
  }
  if (op.name == "stablehlo.get_dimension_size") {
    // get_dimension_size_c1: the result is tensor<i32>; only the operand's type is read.
    auto dim = ir::intAttr(op, "dimension");
    if (op.operands.size() != 1 || !dim.isOk())
      return std::nullopt;
    const ir::Type &t = m.typeOf(op.operands[0]);
    if (*dim < 0 || *dim >= t.rank() || t.shape[static_cast<size_t>(*dim)] < 0)
      return std::nullopt;
    return Folded{result_type.element, {}, {t.shape[static_cast<size_t>(*dim)]}};
  }
  std::vector<const Folded *> xs;
  for (ir::ValueId v : op.operands) {
    auto it = known.find(v);
    if (it == known.end())
      return std::nullopt;
    xs.push_back(&it->second);
  }
  if (xs.empty())
    return std::nullopt;
  if (op.name == "stablehlo.reshape") {
    if (xs[0]->values.size() != static_cast<size_t>(elementCount(out)))
      return std::nullopt;
    return Folded{result_type.element, out, xs[0]->values};
  }
  if (op.name == "stablehlo.broadcast_in_dim")
    return broadcastInDim(op, *xs[0], out);
  if (op.name == "stablehlo.concatenate")
    return concatenate(op, xs, out);
  if (op.name == "stablehlo.slice")
    return slice(op, *xs[0], out);
  return elementwise(op, xs, result_type);
}

} // namespace rs::passes::detail
