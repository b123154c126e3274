//===- passes/refine_shapes.h - Shape refinement (stablehlo-refine-shapes) -===//
//
// Turns a shape-polymorphic module (tensor<?x...> arguments, shapes computed at run time)
// into a static one for concrete argument types, with the semantics of StableHLO's
// stablehlo-refine-shapes pass (openxla/stablehlo stablehlo/transforms/
// StablehloRefineShapes.cpp) and JAX's shape-assertion check (openxla/xla
// xla/python/refine_polymorphic_shapes.cc, CheckShapeAssertionsPass):
//
//   - the entry function's arguments take the given types; each integer scalar argument
//     with a given value (a JAX "dimension argument") is known to hold that value;
//   - ops are visited in program order; each result whose type has a `?` gets the static
//     shape that the op's rule gives for its operands' refined types (refine_infer.cc);
//   - small integer and boolean values are folded (at most 1024 elements): constant,
//     convert, reshape, broadcast_in_dim, concatenate, slice, get_dimension_size (of a
//     refined dimension), add, subtract, multiply, divide, remainder, maximum, minimum, and,
//     or, xor, not, negate, abs, sign, compare, select and clamp; a folded op becomes a
//     stablehlo.constant, and constants left without uses are removed;
//   - dynamic_broadcast_in_dim, dynamic_reshape, dynamic_iota, real_dynamic_slice,
//     dynamic_pad, dynamic_gather and dynamic_conv become broadcast_in_dim, reshape, iota,
//     slice, pad, gather and convolution once their shape operands are folded;
//   - `stablehlo.custom_call @shape_assertion(%pred, %dims...)` must have a folded
//     predicate; it is removed when true;
//   - func.call refines its callee for the call's operand types and folded scalar
//     operands; a callee called with different refinements is cloned (`@f_1`, `@f_2`,
//     private), so each function has one static signature; what a callee returns folded
//     folds at the call (as after inlining); while, if and case bodies, and the bodies of
//     reduce, sort, scatter and the other region ops, are refined in place;
//   - function types follow their arguments and returned values; values are renumbered in
//     definition order, so the printed module parses back equal; the result is verified
//     (ir/verify.h).
// The module keeps every argument, dimension arguments included: a caller passes the
// same values it gave the pass.
//
// Errors (InvalidArgument, "<file>:<line>:<col>: error: '<op>' op ..." as the verifier
// words them): an argument count or type that does not fit the declared one ("argument 1
// of @main: tensor<3x5xf32> does not refine tensor<?x4xf32>"), or is not static; a
// dimension value for an argument that is not an integer scalar; a shape operand that is not
// a constant after refinement; a refined dimension that contradicts a declared one; an op
// whose dynamic result has no shape rule; a failing shape assertion, quoting its
// error_message with `{0}`, `{1}`... replaced by the values of its dimension operands;
// a recursive call; and the verifier's error on the refined module.
// Thread safety: a free function over the module it is given; no global state.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/ir.h"
#include "support/status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rs::passes {

struct RefineOptions {
  /// The function to refine from; `main` when empty.
  std::string entry;
  /// One static type per argument of the entry function; empty keeps the declared types
  /// (which must then be static).
  std::vector<ir::Type> arg_types;
  /// Per argument (missing entries mean none): the value an integer scalar argument holds
  /// (a dimension argument), which the pass folds into the shape computations.
  std::vector<std::optional<int64_t>> dimension_values;
};

/// What the pass did, in counts of ops.
struct RefineReport {
  int64_t values_refined = 0;     ///< results and block arguments given a static type
  int64_t ops_folded = 0;         ///< ops turned into stablehlo.constant
  int64_t ops_made_static = 0;    ///< dynamic_* ops rewritten to their static forms
  int64_t assertions_removed = 0; ///< shape_assertion custom calls that held
  int64_t functions_cloned = 0;   ///< callees cloned for a second refinement
  int64_t constants_removed = 0;  ///< constants left without uses

  /// "refined 12 value(s), folded 5 op(s), made 2 op(s) static, removed 1 shape
  /// assertion(s), cloned 0 function(s)"; "nothing to refine" when all are 0.
  std::string outcome() const;
};

/// Options for the refinement in which every dimension variable takes one value: each `?`
/// of the arguments of `entry` (a func.func) becomes `size`, and each leading integer scalar
/// argument (JAX passes one dimension argument per variable, before the other arguments)
/// holds `size`. What the conformance runner and `reactant-server run --pass refine-shapes`
/// use; a module whose dimension variables must differ needs its own options.
RefineOptions uniformRefinement(const ir::Operation &entry, int64_t size);

/// Refines `module` in place (see the file comment). On error the module is partly
/// refined and must not be used.
Result<RefineReport> refineShapes(ir::Module &module, const RefineOptions &options);

} // namespace rs::passes
