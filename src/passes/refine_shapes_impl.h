//===- passes/refine_shapes_impl.h - Private declarations of refine-shapes -===//
//
// Private to passes/refine_*.cc. The pass keeps, per value, its refined type in the
// module's value table and, for small integer and boolean values whose elements it can
// compute, a Folded copy of those elements. refine_fold.cc computes Folded results,
// refine_infer.cc computes static result shapes, refine_dynamic.cc turns the dynamic ops
// into their static forms, refine_cleanup.cc removes dead constants and renumbers values,
// refine_support.cc holds the shared helpers, refine_shapes.cc walks the functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/ir.h"
#include "passes/properties.h"
#include "support/status.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rs::passes::detail {

/// The most elements a folded value may have; larger results are left to the backend.
inline constexpr int64_t kFoldElementLimit = 1024;

/// The elements of an integer or boolean tensor known while refining, row-major, each
/// held as int64 (unsigned 64-bit values keep their bit pattern; bools are 0 or 1).
struct Folded {
  DType dtype = DType::kInvalid;
  Shape shape;
  std::vector<int64_t> values;
};

/// Known elements by value id.
using FoldedValues = std::map<ir::ValueId, Folded>;

/// Whether the pass folds values of `t`: bool and integers of 8 to 64 bits.
bool foldableType(DType t);
/// The elements of a dense integer or boolean attribute of at most kFoldElementLimit
/// elements, or nullopt.
std::optional<Folded> foldedFromAttribute(const ir::Attribute &a);
/// A `value` attribute for stablehlo.constant holding `f` (dense, of its dtype and shape).
ir::Attribute denseAttribute(const Folded &f);

/// The result of `op` when every operand it reads is in `known` and the op is one the pass
/// folds (file comment of refine_shapes.h); nullopt otherwise, also when the result would
/// exceed kFoldElementLimit elements or an element would be undefined (division by zero).
/// `result_type` is the op's result type, refined by inferShapes first.
std::optional<Folded> foldOp(const ir::Operation &op, const ir::Module &m,
                             const FoldedValues &known, const ir::Type &result_type);

/// The static shape of every result of `op`, from its operands' (refined) types and its
/// attributes; an error "<loc>: error: '<op>' op ..." when an operand is dynamic or the
/// op has no rule. Results that are static already keep their shape.
Result<std::vector<Shape>> inferShapes(const ir::Operation &op, const ir::Module &m);

/// Rewrites a dynamic op (dynamic_broadcast_in_dim, dynamic_reshape, dynamic_iota,
/// real_dynamic_slice, dynamic_pad, dynamic_gather, dynamic_conv) in place into its static
/// form, reading its shape operands from `known`; sets the result type. False (and no
/// change) when `op` is not one of them; an error naming the operand that is not a
/// constant, or the dimension that does not match.
Result<bool> makeStatic(ir::Operation &op, ir::Module &m, const FoldedValues &known);

/// Removes the stablehlo.constant ops of `m` whose result has no use; their count.
int64_t removeUnusedConstants(ir::Module &m);
/// Gives the values of `m` new ids in definition order (each function's block arguments,
/// then its ops' results, regions before the next op) and drops the unused types, so the
/// printed module parses back equal (ir/ir.h, "Values").
void renumberValues(ir::Module &m);

/// "<loc>: error: '<op>' op " as the verifier prefixes its errors (ir/verify.h).
StatusBuilder opError(const ir::Operation &op, const ir::Module &m);
/// An array<i64: ...> attribute.
ir::Attribute i64Array(std::vector<int64_t> values);
/// Whether `t` is a tensor with a dynamic dimension.
bool isDynamic(const ir::Type &t);

} // namespace rs::passes::detail
