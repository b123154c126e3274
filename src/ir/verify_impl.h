//===- ir/verify_impl.h - Private declarations of the op verifier ----------===//
//
// Private to ir/verify*.cc. OpCheck is the verifier's view of one op: its operand and
// result types, its attributes (decoded by ir/op_attributes.h) and its diagnostics. Each
// op family has one verify function per op name in its own file (verify_conv_dot.cc,
// verify_gather_scatter.cc, verify_reduce.cc, verify_data_movement.cc,
// verify_elementwise.cc, verify_control_flow.cc); verify.cc holds the table from op name
// to function and the walk over the module. A verify function is called only when every
// operand and result type of the op is a statically shaped tensor.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/op_attributes.h"
#include "ir/verify.h"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rs::ir::detail {

/// The verifier's view of one op of a module; the attribute reads (intList, intAttr,
/// boolAttr, prefixed) come from OpAttributeReader.
class OpCheck : public OpAttributeReader<OpCheck> {
public:
  OpCheck(const Module &module, const Operation &op) : module_(module), op_(op) {}

  const Module &module() const { return module_; }
  const Operation &op() const { return op_; }
  size_t numOperands() const { return op_.operands.size(); }
  size_t numResults() const { return op_.results.size(); }
  const Type &operand(size_t i) const { return module_.typeOf(op_.operands[i]); }
  const Type &result(size_t i) const { return module_.typeOf(op_.results[i]); }
  const Attribute *attr(std::string_view attr_name) const { return op_.attr(attr_name); }

  /// InvalidArgument "<loc>: error: '<op>' op " followed by what is streamed in.
  StatusBuilder error() const;
  /// error() followed by the message of `decoding` (an op_attributes.h error).
  Status error(const Status &decoding) const;
  /// Checks the operand and result counts: "expects <n> operands, got <m>" (results alike).
  Status expectArity(size_t operands, size_t results) const;

private:
  const Module &module_;
  const Operation &op_;
};

//===----------------------------------------------------------------------===//
// Types and dimensions
//===----------------------------------------------------------------------===//

/// A ranked tensor type with a known element type and no dynamic dimension.
bool isStaticTensor(const Type &t);
/// Same element type and shape (an encoding is ignored).
bool sameTensorType(const Type &a, const Type &b);
/// "tensor<2x3xf32>", "tensor<f32>" (no encoding).
std::string tensorText(DType element, const Shape &shape);
inline std::string tensorText(const Type &t) { return tensorText(t.element, t.shape); }

/// The single block of region `index` of the op, or nullptr.
const Block *singleBlock(const OpCheck &c, size_t index);
/// The operands of the block's terminator (its last op), or an empty span for a block
/// without ops.
std::span<const ValueId> terminatorOperands(const Block &block);

/// Checks that the single block of region `index` takes rank-0 tensors of `arg_types` and
/// returns rank-0 tensors of `result_types` (InvalidArgument naming `what`: "<what> must
/// take 2 and return 1 values, got ...", "<what> argument 0 is tensor<2xf32>, expected
/// tensor<f32>", "<what> result 0 is ..."). Skipped for a region without a single block or
/// with a value that is not a static tensor (the backend refuses those).
Status checkScalarBody(const OpCheck &c, size_t index, std::span<const DType> arg_types,
                       std::span<const DType> result_types, std::string_view what);

/// Checks a fold body (reduce, reduce_window, scatter, select_and_scatter's scatter), whose
/// element types StableHLO lets differ from the inputs' (is_promotable): the single block
/// of region `index` takes `args` rank-0 tensors and returns rank-0 tensors of
/// `result_types` ("<what> must take 4 and return 2 values, got ...", "<what> argument 1 is
/// tensor<2xf32>, expected a rank-0 tensor", "<what> result 0 is tensor<f32>, expected
/// tensor<f64>"). Skipped as checkScalarBody is.
Status checkFoldBody(const OpCheck &c, size_t index, size_t args,
                     std::span<const DType> result_types, std::string_view what);

//===----------------------------------------------------------------------===//
// The verify functions, one per op name (see verify.cc for the table)
//===----------------------------------------------------------------------===//

using VerifyFn = Status (*)(const OpCheck &);

// verify_conv_dot.cc
Status verifyConvolution(const OpCheck &c);
Status verifyDotGeneral(const OpCheck &c);
// verify_gather_scatter.cc
Status verifyGather(const OpCheck &c);
Status verifyScatter(const OpCheck &c);
// verify_reduce.cc
Status verifyReduce(const OpCheck &c);
Status verifyReduceWindow(const OpCheck &c);
Status verifySelectAndScatter(const OpCheck &c);
Status verifySort(const OpCheck &c);
Status verifyMap(const OpCheck &c);
Status verifyTopK(const OpCheck &c);
// verify_data_movement.cc
Status verifyConstant(const OpCheck &c);
Status verifyIota(const OpCheck &c);
Status verifyReshape(const OpCheck &c);
Status verifyBroadcastInDim(const OpCheck &c);
Status verifyTranspose(const OpCheck &c);
Status verifyReverse(const OpCheck &c);
Status verifyConcatenate(const OpCheck &c);
Status verifyPad(const OpCheck &c);
Status verifyGetDimensionSize(const OpCheck &c);
Status verifySlice(const OpCheck &c);
Status verifyDynamicSlice(const OpCheck &c);
Status verifyDynamicUpdateSlice(const OpCheck &c);
// verify_elementwise.cc
Status verifyUnary(const OpCheck &c);
Status verifyUnaryPredicate(const OpCheck &c);
Status verifyAbs(const OpCheck &c);
Status verifyBinary(const OpCheck &c);
Status verifyRealOrImag(const OpCheck &c);
Status verifyComplex(const OpCheck &c);
Status verifyCompare(const OpCheck &c);
Status verifySelect(const OpCheck &c);
Status verifyClamp(const OpCheck &c);
Status verifyConvert(const OpCheck &c);
Status verifyBitcastConvert(const OpCheck &c);
Status verifyReducePrecision(const OpCheck &c);
Status verifySameTypeUnary(const OpCheck &c);
Status verifyTriangularSolve(const OpCheck &c);
// verify_control_flow.cc
Status verifyWhile(const OpCheck &c);
Status verifyCase(const OpCheck &c);
Status verifyIf(const OpCheck &c);
Status verifyCall(const OpCheck &c);
Status verifyComposite(const OpCheck &c);
Status verifyOptimizationBarrier(const OpCheck &c);

} // namespace rs::ir::detail
