//===- ir/verify_elementwise.cc - elementwise ops, conversions, solves -----===//
//
// The elementwise unary and binary ops of stablehlo and chlo (operand and result shapes
// and element types: the same type, i1 for the predicates, the part type for abs, real and
// imag of a complex), complex, compare (comparison_direction), select,
// clamp, convert, bitcast_convert, reduce_precision and triangular_solve (spec sections of
// the same names). Which element types an op accepts is left to the backends.
//
//===----------------------------------------------------------------------===//
#include "ir/verify_impl.h"

#include <algorithm>

namespace rs::ir::detail {
namespace {

/// The part type of a complex type (f32, f64); `t` itself for any other type.
DType partType(DType t) {
  return t == DType::kComplex64 ? DType::kF32 : t == DType::kComplex128 ? DType::kF64 : t;
}

/// The unary ops' shape check, then their result element type against `expected`.
Status checkUnary(const OpCheck &c, DType expected) {
  const Type &in = c.operand(0), &out = c.result(0);
  if (out.element != expected)
    return c.error() << "result type " << tensorText(out) << " does not match operand type "
                     << tensorText(in);
  return Status::ok();
}

Status checkUnaryShape(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(1, 1));
  const Type &in = c.operand(0), &out = c.result(0);
  if (in.shape != out.shape)
    return c.error() << "result shape " << shapeToString(out.shape)
                     << " differs from operand shape " << shapeToString(in.shape);
  return Status::ok();
}

} // namespace

Status verifyUnary(const OpCheck &c) {
  RS_RETURN_IF_ERROR(checkUnaryShape(c));
  return checkUnary(c, c.operand(0).element);
}

Status verifyUnaryPredicate(const OpCheck &c) {
  RS_RETURN_IF_ERROR(checkUnaryShape(c));
  return checkUnary(c, DType::kBool); // is_finite_c1, i1 results of chlo's is_inf ops
}

Status verifyAbs(const OpCheck &c) {
  RS_RETURN_IF_ERROR(checkUnaryShape(c));
  return checkUnary(c, partType(c.operand(0).element)); // abs_c2
}

Status verifySameTypeUnary(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(1, 1));
  const Type &in = c.operand(0), &out = c.result(0);
  if (!sameTensorType(in, out))
    return c.error() << "result type " << tensorText(out) << " does not match operand type "
                     << tensorText(in);
  return Status::ok();
}

Status verifyBinary(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(2, 1));
  const Type &a = c.operand(0), &b = c.operand(1), &out = c.result(0);
  if (!sameTensorType(a, b) || !sameTensorType(a, out)) // add_c1 and its kin
    return c.error() << "operand types " << tensorText(a) << ", " << tensorText(b)
                     << " and result type " << tensorText(out) << " differ";
  return Status::ok();
}

Status verifyRealOrImag(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(1, 1));
  const Type &in = c.operand(0), &out = c.result(0);
  if (out.shape != in.shape || out.element != partType(in.element)) // real_c1, c2; imag_c1, c2
    return c.error() << "result type " << tensorText(out) << " does not fit operand type "
                     << tensorText(in);
  return Status::ok();
}

Status verifyComplex(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(2, 1));
  const Type &re = c.operand(0), &im = c.operand(1), &out = c.result(0);
  if (!sameTensorType(re, im) || out.shape != re.shape || partType(out.element) != re.element ||
      !isComplex(out.element)) // complex_c1..c3
    return c.error() << "operand types " << tensorText(re) << ", " << tensorText(im)
                     << " do not fit result type " << tensorText(out);
  return Status::ok();
}

Status verifyCompare(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(2, 1));
  const Type &a = c.operand(0), &b = c.operand(1), &out = c.result(0);
  if (!sameTensorType(a, b)) // compare_c1
    return c.error() << "operand types " << tensorText(a) << " and " << tensorText(b) << " differ";
  if (out.element != DType::kBool || out.shape != a.shape) // compare_c2
    return c.error() << "result type " << tensorText(out) << " is not i1 of the operand shape";
  const Attribute *dir = c.attr("comparison_direction");
  if (!dir)
    return c.error() << "is missing attribute 'comparison_direction'";
  static constexpr std::string_view kDirections[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  if (std::find(std::begin(kDirections), std::end(kDirections), dir->str) == std::end(kDirections))
    return c.error() << "has unknown comparison_direction '" << dir->str << "'";
  // compare_c3 (compare_type against the element type) is left to the backends: StableHLO's
  // own verifier accepts any compare_type, and the compatibility suites hold such ops.
  return Status::ok();
}

Status verifySelect(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(3, 1));
  const Type &pred = c.operand(0), &a = c.operand(1), &b = c.operand(2);
  if (!sameTensorType(a, b) || !sameTensorType(a, c.result(0))) // select_c2
    return c.error() << "branch types " << tensorText(a) << ", " << tensorText(b)
                     << " and result type " << tensorText(c.result(0)) << " differ";
  if (pred.element != DType::kBool || (pred.rank() != 0 && pred.shape != a.shape)) // select_c1
    return c.error() << "predicate type " << tensorText(pred) << " is not i1 of rank 0 or shape "
                     << shapeToString(a.shape);
  return Status::ok();
}

Status verifyClamp(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(3, 1));
  const Type &lo = c.operand(0), &x = c.operand(1), &hi = c.operand(2);
  if (!sameTensorType(x, c.result(0))) // clamp_c3
    return c.error() << "result type " << tensorText(c.result(0)) << " differs from operand type "
                     << tensorText(x);
  for (const Type *bound : {&lo, &hi})
    if (bound->element != x.element ||
        (bound->rank() != 0 && bound->shape != x.shape)) // clamp_c1, c2
      return c.error() << "bound type " << tensorText(*bound) << " is not "
                       << dtypeMlirName(x.element) << " of rank 0 or shape "
                       << shapeToString(x.shape);
  return Status::ok();
}

Status verifyConvert(const OpCheck &c) {
  return checkUnaryShape(c); // convert_c1
}

Status verifyBitcastConvert(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(1, 1));
  const Type &in = c.operand(0), &out = c.result(0);
  if (isComplex(in.element) != isComplex(out.element)) // bitcast_convert_c2
    return c.error() << "operand " << tensorText(in) << " and result " << tensorText(out)
                     << " must both be complex or both not";
  if (in.numElements() * dtypeBitWidth(in.element) !=
      out.numElements() * dtypeBitWidth(out.element)) // bitcast_convert_c1
    return c.error() << "operand " << tensorText(in) << " and result " << tensorText(out)
                     << " have different bit sizes";
  return Status::ok();
}

Status verifyReducePrecision(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(1, 1));
  if (!sameTensorType(c.result(0), c.operand(0))) // reduce_precision_c1
    return c.error() << "result type differs from operand type";
  RS_ASSIGN_OR_RETURN(int64_t e, c.intAttr("exponent_bits"));
  RS_ASSIGN_OR_RETURN(int64_t m, c.intAttr("mantissa_bits"));
  if (e < 1 || m < 0 || e > 64 || m > 64) // reduce_precision_c2, c3
    return c.error() << "exponent_bits " << e << " / mantissa_bits " << m << " are invalid";
  return Status::ok();
}

Status verifyTriangularSolve(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(2, 1));
  const Type &a = c.operand(0), &b = c.operand(1);
  if (b.element != a.element || !sameTensorType(c.result(0), b)) // triangular_solve_c4
    return c.error() << "expects a, b and the result of one type, got " << tensorText(a) << ", "
                     << tensorText(b) << " -> " << tensorText(c.result(0));
  const int64_t rank = a.rank();
  if (rank < 2 || b.rank() != rank) // triangular_solve_c1
    return c.error() << "expects a and b of one rank >= 2, got " << a.rank() << " and " << b.rank();
  const size_t r = static_cast<size_t>(rank);
  if (a.shape[r - 2] != a.shape[r - 1]) // triangular_solve_c2
    return c.error() << "expects a square a, got " << tensorText(a);
  if (!std::equal(a.shape.begin(), a.shape.end() - 2, b.shape.begin())) // triangular_solve_c1
    return c.error() << "expects a and b of one batch shape, got " << tensorText(a) << " and "
                     << tensorText(b);
  const bool left_side = c.boolAttr("left_side", false);
  const int64_t b_m = left_side ? b.shape[r - 2] : b.shape[r - 1];
  if (b_m != a.shape[r - 1]) // triangular_solve_c3
    return c.error() << "expects b's " << (left_side ? "rows" : "columns") << " to be "
                     << a.shape[r - 1] << ", got " << tensorText(b);
  const Attribute *t = c.attr("transpose_a");
  const std::string mode = t ? t->str : "NO_TRANSPOSE";
  if (mode != "NO_TRANSPOSE" && mode != "TRANSPOSE" && mode != "ADJOINT")
    return c.error() << "has unknown transpose_a '" << mode << "'";
  return Status::ok();
}

} // namespace rs::ir::detail
