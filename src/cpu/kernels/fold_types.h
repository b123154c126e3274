//===- cpu/kernels/fold_types.h - One element type per reduction -----------===//
//
// Private to cpu/. StableHLO lets reduce, reduce_window, scatter and select_and_scatter
// accumulate in a wider type than their inputs (spec "is_promotable"; the verifier checks
// only the shapes and arities of those ops). The CPU executor folds in the input element
// type: these checks refuse the other programs, naming the value whose type differs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/compiler.h"

namespace rs::cpu {

/// Checks that input i, init value i (rank 0) and result i of a reduce or reduce_window
/// (N inputs, N init values, N results) share one element type; `types` gets them.
/// InvalidArgument "init value <i> of type <t> is not a scalar of the input element type",
/// "result <i> of type <t>, expected <t'>".
Status checkFoldTypes(OpView &v, size_t n, std::vector<DType> &types);

/// Checks that a compiled region takes scalars (rank 0) of `arg_types` and returns
/// `result_types.size()` scalars of `result_types` (InvalidArgument naming `what`: "<what>
/// must take 2 and return 1 values, got ...", "<what> argument 0 is ..., expected ...").
Status checkScalarBody(OpView &v, const Callable &body, std::span<const DType> arg_types,
                       std::span<const DType> result_types, std::string_view what);

/// The opening of a reduce or reduce_window plan (N inputs, N init values, N results):
/// checkFoldTypes into `types`, each type's element size (checkElementSize), and region 0
/// compiled into `body` and checked to fold two scalars of each type into one
/// (checkScalarBody, "body"). Returns the first of those errors.
Status planFold(OpView &v, size_t n, std::vector<DType> &types, RegionRef &body);

} // namespace rs::cpu
