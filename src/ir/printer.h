//===- ir/printer.h - MLIR generic-form printer ---------------------------===//
//
// Prints a Module in MLIR's generic op form, which XLA's parser accepts for every op:
//   "builtin.module"() <{sym_name = "m"}> ({
//     "func.func"() <{function_type = (tensor<2xf32>) -> tensor<2xf32>, sym_name = "main"}> ({
//     ^bb0(%0: tensor<2xf32>):
//       %1 = "stablehlo.add"(%0, %0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
//       "func.return"(%1) : (tensor<2xf32>) -> ()
//     }) : () -> ()
//   }) {mhlo.num_partitions = 1 : i32} : () -> ()
// Values are named by ValueId (`%7`; a multi-result op's results are `%7:3` and
// `%7#2`), so parsing the output gives back the same ids when they were in definition
// order. Properties go in `<{...}>`, discardable attributes in `{...}`. Dense constants
// print as a splat when all elements are equal, as a list when small, and as a
// little-endian hex blob otherwise; floats print exactly (shortest round-trip decimal,
// hex bit patterns for NaN/Inf). Output is deterministic: no hash or pointer order.
//
// With PrintOptions::locations, each op that has a source position ends with MLIR's
// `loc("file":line:col)` (after its type), which MLIR reads as the op's location and our
// parser skips, so the output parses to the same Module.
// Thread safety: pure functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/ir.h"

#include <string>

namespace rs::ir {

/// What printGeneric adds to the generic form.
struct PrintOptions {
  /// Ends every op that has a source position with ` loc("file":line:col)`: the position a
  /// portable artifact's debug location names (Location::source, a number it lacks printed
  /// as 0), else a text module's file:line:col. Ops with neither (an artifact op without a
  /// file location) get none.
  bool locations = false;
};

/// The whole module in generic form, ending with a newline.
std::string printGeneric(const Module &m);
/// The whole module in generic form with what `options` adds; printGeneric(m, {}) is
/// printGeneric(m).
std::string printGeneric(const Module &m, const PrintOptions &options);
/// One operation (and its regions) in generic form, without a trailing newline; values
/// are named by id as in printGeneric.
std::string printOperation(const Operation &op, const Module &m);
/// MLIR spelling of a type ("tensor<2x3xf32>"); same as Type::toString().
std::string printType(const Type &t);
/// MLIR spelling of an attribute ("array<i64: 1, 2>", "#stablehlo<precision DEFAULT>",
/// "dense<1.000000e+00> : tensor<f32>" style).
std::string printAttribute(const Attribute &a);

} // namespace rs::ir
