//===- ir/verify_control_flow.cc - while, case, if, calls, barrier ---------===//
//
// stablehlo.while (spec "while", while_c1..c3), stablehlo.case (case_c1..c4),
// stablehlo.if (if_c1..c3), func.call and stablehlo.composite (the callee's or
// decomposition's signature against the operands and results; a callee the module lacks
// is the backend's error) and stablehlo.optimization_barrier
// (optimization_barrier_c1): region and callee signatures.
//
//===----------------------------------------------------------------------===//
#include "ir/verify_impl.h"

namespace rs::ir::detail {
namespace {

/// The types of values `ids`, or false when one is not a static tensor (left to the
/// backend).
bool staticTypes(const Module &m, std::span<const ValueId> ids, std::vector<Type> &out) {
  out.clear();
  for (ValueId v : ids) {
    if (!isStaticTensor(m.typeOf(v)))
      return false;
    out.push_back(m.typeOf(v));
  }
  return true;
}

/// Checks that `block` takes `args` and returns `results`; `what` names it in the error.
Status checkSignature(const OpCheck &c, const Block &block, std::span<const Type> args,
                      std::span<const Type> results, std::string_view what) {
  std::vector<Type> params, returned;
  if (!staticTypes(c.module(), block.arguments, params) ||
      !staticTypes(c.module(), terminatorOperands(block), returned))
    return Status::ok();
  if (params.size() != args.size() || returned.size() != results.size())
    return c.error() << what << " takes " << params.size() << " arguments and returns "
                     << returned.size() << " values, expected " << args.size() << " and "
                     << results.size();
  for (size_t i = 0; i < args.size(); ++i)
    if (!sameTensorType(params[i], args[i]))
      return c.error() << what << " argument " << i << " is " << tensorText(params[i])
                       << ", expected " << tensorText(args[i]);
  for (size_t i = 0; i < results.size(); ++i)
    if (!sameTensorType(returned[i], results[i]))
      return c.error() << what << " result " << i << " is " << tensorText(returned[i])
                       << ", expected " << tensorText(results[i]);
  return Status::ok();
}

std::vector<Type> operandTypes(const OpCheck &c) {
  std::vector<Type> out;
  for (size_t i = 0; i < c.numOperands(); ++i)
    out.push_back(c.operand(i));
  return out;
}

std::vector<Type> resultTypes(const OpCheck &c) {
  std::vector<Type> out;
  for (size_t i = 0; i < c.numResults(); ++i)
    out.push_back(c.result(i));
  return out;
}

/// case_c3, if_c2, c3: every branch takes no arguments and returns the results' types.
Status checkBranches(const OpCheck &c) {
  const std::vector<Type> results = resultTypes(c);
  for (size_t i = 0; i < c.op().regions.size(); ++i)
    if (const Block *block = singleBlock(c, i))
      RS_RETURN_IF_ERROR(checkSignature(c, *block, {}, results, "branch"));
  if (c.op().regions.empty()) // case_c1
    return c.error() << "has no branches";
  return Status::ok();
}

/// Each operand's type is its result's: while_c3, optimization_barrier_c1.
Status checkResultsAreOperands(const OpCheck &c) {
  if (c.numResults() != c.numOperands())
    return c.error() << "expects as many results as operands";
  for (size_t i = 0; i < c.numOperands(); ++i)
    if (!sameTensorType(c.operand(i), c.result(i)))
      return c.error() << "operand " << i << " and result types differ";
  return Status::ok();
}

/// The signature of the function named by symbol attribute `attr_name` against the
/// operands and results.
Status checkCallee(const OpCheck &c, std::string_view attr_name) {
  const Attribute *callee = c.attr(attr_name);
  if (!callee || callee->kind != AttrKind::kSymbolRef)
    return c.error() << "is missing attribute '" << attr_name << "'";
  const Operation *func = c.module().lookupFunction(callee->str);
  if (!func || func->regions.size() != 1 || func->regions[0].blocks.size() != 1)
    return Status::ok(); // the backend names a missing callee with the call's location
  return checkSignature(c, func->regions[0].blocks[0], operandTypes(c), resultTypes(c),
                        "callee @" + callee->str);
}

} // namespace

Status verifyWhile(const OpCheck &c) {
  RS_RETURN_IF_ERROR(checkResultsAreOperands(c)); // while_c3
  const std::vector<Type> operands = operandTypes(c);
  const Type i1 = Type::tensor(DType::kBool, {});
  if (const Block *cond = singleBlock(c, 0)) // while_c1
    RS_RETURN_IF_ERROR(checkSignature(c, *cond, operands, std::span<const Type>(&i1, 1), "cond"));
  if (const Block *body = singleBlock(c, 1)) // while_c2
    RS_RETURN_IF_ERROR(checkSignature(c, *body, operands, resultTypes(c), "body"));
  return Status::ok();
}

Status verifyCase(const OpCheck &c) {
  if (c.numOperands() != 1 || c.operand(0).element != DType::kI32 ||
      c.operand(0).rank() != 0) // case_c2
    return c.error() << "index must be tensor<i32>";
  return checkBranches(c);
}

Status verifyIf(const OpCheck &c) {
  if (c.numOperands() != 1 || c.operand(0).element != DType::kBool ||
      c.operand(0).rank() != 0) // if_c1
    return c.error() << "pred must be tensor<i1>";
  if (c.op().regions.size() != 2)
    return c.error() << "expects two branches";
  return checkBranches(c);
}

Status verifyCall(const OpCheck &c) { return checkCallee(c, "callee"); }

Status verifyComposite(const OpCheck &c) { return checkCallee(c, "decomposition"); }

Status verifyOptimizationBarrier(const OpCheck &c) { return checkResultsAreOperands(c); }

} // namespace rs::ir::detail
