//===- ir/verify.cc - The StableHLO op verifier: walk and table ------------===//
//
// The walk over a module (value ids first, then the op's own checks, then the ops of its
// regions), the table from op name to verify function, and the helpers the op families
// share.
//
//===----------------------------------------------------------------------===//
#include "ir/verify.h"

#include "ir/verify_impl.h"

#include <algorithm>
#include <cassert>
#include <sstream>

namespace rs::ir {
namespace detail {

//===----------------------------------------------------------------------===//
// OpCheck
//===----------------------------------------------------------------------===//

namespace {

std::string locationOf(const Module &module, const Operation &op) {
  if (op.loc.line > 0 || op.loc.byte_offset >= 0)
    return op.loc.toString();
  return module.file.empty() ? std::string("<unknown>") : module.file;
}

} // namespace

StatusBuilder OpCheck::error() const {
  StatusBuilder b(StatusCode::kInvalidArgument);
  b << locationOf(module_, op_) << ": error: '" << op_.name << "' op ";
  return b;
}

Status OpCheck::error(const Status &decoding) const { return error() << decoding.message(); }

Status OpCheck::expectArity(size_t operands, size_t results) const {
  if (numOperands() != operands)
    return error() << "expects " << operands << " operands, got " << numOperands();
  if (numResults() != results)
    return error() << "expects " << results << " results, got " << numResults();
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Types, dimensions and regions
//===----------------------------------------------------------------------===//

bool isStaticTensor(const Type &t) {
  return t.isTensor() && t.element != DType::kInvalid &&
         std::none_of(t.shape.begin(), t.shape.end(), [](int64_t d) { return d < 0; });
}

bool sameTensorType(const Type &a, const Type &b) {
  return a.element == b.element && a.shape == b.shape;
}

std::string tensorText(DType element, const Shape &shape) {
  std::ostringstream os;
  os << "tensor<";
  for (int64_t d : shape)
    os << d << 'x';
  os << dtypeMlirName(element) << '>';
  return os.str();
}

const Block *singleBlock(const OpCheck &c, size_t index) {
  const Operation &op = c.op();
  if (index >= op.regions.size() || op.regions[index].blocks.size() != 1)
    return nullptr;
  return &op.regions[index].blocks[0];
}

std::span<const ValueId> terminatorOperands(const Block &block) {
  if (block.ops.empty())
    return {};
  return block.ops.back().operands;
}

/// Whether every argument of `block` and every value in `results` is a static tensor: the
/// body checks compare only such types, the others are the ops' own type rules.
bool allStaticTensors(const Module &m, const Block &block, std::span<const ValueId> results) {
  for (std::span<const ValueId> values : {std::span<const ValueId>(block.arguments), results})
    for (ValueId v : values)
      if (!isStaticTensor(m.typeOf(v)))
        return false;
  return true;
}

namespace {

/// A body of `args` rank-0 arguments (of the element types `arg_types` when it is not
/// empty) returning rank-0 values of `result_types`.
Status checkBody(const OpCheck &c, size_t index, size_t args, std::span<const DType> arg_types,
                 std::span<const DType> result_types, std::string_view what) {
  const Block *block = singleBlock(c, index);
  if (!block)
    return Status::ok();
  const Module &m = c.module();
  const std::span<const ValueId> results = terminatorOperands(*block);
  if (!allStaticTensors(m, *block, results))
    return Status::ok();
  if (block->arguments.size() != args || results.size() != result_types.size())
    return c.error() << what << " must take " << args << " and return " << result_types.size()
                     << " values, got " << block->arguments.size() << " and " << results.size();
  for (size_t i = 0; i < args; ++i) {
    const Type &t = m.typeOf(block->arguments[i]);
    if (arg_types.empty() ? t.rank() != 0 : t.rank() != 0 || t.element != arg_types[i])
      return c.error() << what << " argument " << i << " is " << tensorText(t) << ", expected "
                       << (arg_types.empty() ? std::string("a rank-0 tensor")
                                             : tensorText(arg_types[i], {}));
  }
  for (size_t i = 0; i < result_types.size(); ++i) {
    const Type &t = m.typeOf(results[i]);
    if (t.rank() != 0 || t.element != result_types[i])
      return c.error() << what << " result " << i << " is " << tensorText(t) << ", expected "
                       << tensorText(result_types[i], {});
  }
  return Status::ok();
}

} // namespace

Status checkScalarBody(const OpCheck &c, size_t index, std::span<const DType> arg_types,
                       std::span<const DType> result_types, std::string_view what) {
  return checkBody(c, index, arg_types.size(), arg_types, result_types, what);
}

Status checkFoldBody(const OpCheck &c, size_t index, size_t args,
                     std::span<const DType> result_types, std::string_view what) {
  return checkBody(c, index, args, {}, result_types, what);
}

namespace {

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

struct Entry {
  std::string_view name;
  VerifyFn fn;
};

// Sorted by name (checked once at first use).
constexpr Entry kVerifiers[] = {
    {"chlo.acos", verifyUnary},
    {"chlo.acosh", verifyUnary},
    {"chlo.asin", verifyUnary},
    {"chlo.asinh", verifyUnary},
    {"chlo.atan", verifyUnary},
    {"chlo.atanh", verifyUnary},
    {"chlo.bessel_i1e", verifySameTypeUnary},
    {"chlo.cosh", verifyUnary},
    {"chlo.digamma", verifySameTypeUnary},
    {"chlo.erf", verifyUnary},
    {"chlo.erf_inv", verifySameTypeUnary},
    {"chlo.erfc", verifyUnary},
    {"chlo.is_inf", verifyUnaryPredicate},
    {"chlo.is_neg_inf", verifyUnaryPredicate},
    {"chlo.is_pos_inf", verifyUnaryPredicate},
    {"chlo.lgamma", verifyUnary},
    {"chlo.next_after", verifyBinary},
    {"chlo.sinh", verifyUnary},
    {"chlo.square", verifyUnary},
    {"chlo.tan", verifyUnary},
    {"chlo.top_k", verifyTopK},
    {"func.call", verifyCall},
    {"stablehlo.abs", verifyAbs},
    {"stablehlo.add", verifyBinary},
    {"stablehlo.and", verifyBinary},
    {"stablehlo.atan2", verifyBinary},
    {"stablehlo.bitcast_convert", verifyBitcastConvert},
    {"stablehlo.broadcast_in_dim", verifyBroadcastInDim},
    {"stablehlo.case", verifyCase},
    {"stablehlo.cbrt", verifyUnary},
    {"stablehlo.ceil", verifyUnary},
    {"stablehlo.clamp", verifyClamp},
    {"stablehlo.compare", verifyCompare},
    {"stablehlo.complex", verifyComplex},
    {"stablehlo.composite", verifyComposite},
    {"stablehlo.concatenate", verifyConcatenate},
    {"stablehlo.constant", verifyConstant},
    {"stablehlo.convert", verifyConvert},
    {"stablehlo.convolution", verifyConvolution},
    {"stablehlo.cosine", verifyUnary},
    {"stablehlo.count_leading_zeros", verifyUnary},
    {"stablehlo.divide", verifyBinary},
    {"stablehlo.dot_general", verifyDotGeneral},
    {"stablehlo.dynamic_slice", verifyDynamicSlice},
    {"stablehlo.dynamic_update_slice", verifyDynamicUpdateSlice},
    {"stablehlo.exponential", verifyUnary},
    {"stablehlo.exponential_minus_one", verifyUnary},
    {"stablehlo.floor", verifyUnary},
    {"stablehlo.gather", verifyGather},
    {"stablehlo.get_dimension_size", verifyGetDimensionSize},
    {"stablehlo.if", verifyIf},
    {"stablehlo.imag", verifyRealOrImag},
    {"stablehlo.iota", verifyIota},
    {"stablehlo.is_finite", verifyUnaryPredicate},
    {"stablehlo.log", verifyUnary},
    {"stablehlo.log_plus_one", verifyUnary},
    {"stablehlo.logistic", verifyUnary},
    {"stablehlo.map", verifyMap},
    {"stablehlo.maximum", verifyBinary},
    {"stablehlo.minimum", verifyBinary},
    {"stablehlo.multiply", verifyBinary},
    {"stablehlo.negate", verifyUnary},
    {"stablehlo.not", verifyUnary},
    {"stablehlo.optimization_barrier", verifyOptimizationBarrier},
    {"stablehlo.or", verifyBinary},
    {"stablehlo.pad", verifyPad},
    {"stablehlo.popcnt", verifyUnary},
    {"stablehlo.power", verifyBinary},
    {"stablehlo.real", verifyRealOrImag},
    {"stablehlo.reduce", verifyReduce},
    {"stablehlo.reduce_precision", verifyReducePrecision},
    {"stablehlo.reduce_window", verifyReduceWindow},
    {"stablehlo.remainder", verifyBinary},
    {"stablehlo.reshape", verifyReshape},
    {"stablehlo.reverse", verifyReverse},
    {"stablehlo.round_nearest_afz", verifyUnary},
    {"stablehlo.round_nearest_even", verifyUnary},
    {"stablehlo.rsqrt", verifyUnary},
    {"stablehlo.scatter", verifyScatter},
    {"stablehlo.select", verifySelect},
    {"stablehlo.select_and_scatter", verifySelectAndScatter},
    {"stablehlo.shift_left", verifyBinary},
    {"stablehlo.shift_right_arithmetic", verifyBinary},
    {"stablehlo.shift_right_logical", verifyBinary},
    {"stablehlo.sign", verifyUnary},
    {"stablehlo.sine", verifyUnary},
    {"stablehlo.slice", verifySlice},
    {"stablehlo.sort", verifySort},
    {"stablehlo.sqrt", verifyUnary},
    {"stablehlo.subtract", verifyBinary},
    {"stablehlo.tan", verifyUnary},
    {"stablehlo.tanh", verifyUnary},
    {"stablehlo.transpose", verifyTranspose},
    {"stablehlo.triangular_solve", verifyTriangularSolve},
    {"stablehlo.while", verifyWhile},
    {"stablehlo.xor", verifyBinary},
};

VerifyFn verifierFor(std::string_view name) {
  static const bool sorted =
      std::is_sorted(std::begin(kVerifiers), std::end(kVerifiers),
                     [](const Entry &a, const Entry &b) { return a.name < b.name; });
  assert(sorted);
  (void)sorted;
  auto it = std::lower_bound(std::begin(kVerifiers), std::end(kVerifiers), name,
                             [](const Entry &e, std::string_view n) { return e.name < n; });
  return it != std::end(kVerifiers) && it->name == name ? it->fn : nullptr;
}

//===----------------------------------------------------------------------===//
// The walk
//===----------------------------------------------------------------------===//

Status checkValue(const OpCheck &c, ValueId v) {
  if (v < 0 || static_cast<size_t>(v) >= c.module().value_types.size())
    return c.error() << "uses unknown value " << v;
  return Status::ok();
}

/// Whether the op's own checks apply: every operand and result a static tensor.
bool checksApply(const OpCheck &c) {
  for (size_t i = 0; i < c.numOperands(); ++i)
    if (!isStaticTensor(c.operand(i)))
      return false;
  for (size_t i = 0; i < c.numResults(); ++i)
    if (!isStaticTensor(c.result(i)))
      return false;
  return true;
}

Status verifyOp(const Module &module, const Operation &op) {
  const OpCheck c(module, op);
  for (ValueId v : op.operands)
    RS_RETURN_IF_ERROR(checkValue(c, v));
  for (ValueId v : op.results)
    RS_RETURN_IF_ERROR(checkValue(c, v));
  for (const Region &region : op.regions)
    for (const Block &block : region.blocks)
      for (ValueId v : block.arguments)
        RS_RETURN_IF_ERROR(checkValue(c, v));
  if (VerifyFn fn = verifierFor(op.name); fn && checksApply(c))
    RS_RETURN_IF_ERROR(fn(c));
  for (const Region &region : op.regions)
    for (const Block &block : region.blocks)
      for (const Operation &nested : block.ops)
        RS_RETURN_IF_ERROR(verifyOp(module, nested));
  return Status::ok();
}

} // namespace
} // namespace detail

Status verifyModule(const Module &module) {
  for (const Operation &op : module.ops)
    RS_RETURN_IF_ERROR(detail::verifyOp(module, op));
  return Status::ok();
}

} // namespace rs::ir
