//===- ir/verify.h - The StableHLO op verifier -----------------------------===//
//
// Checks a module against the constraints that the StableHLO specification states per op
// (openxla/stablehlo docs/spec.md, the "Constraints" of each op): operand and result
// counts and types, shapes, attribute ranges and dimension numbers. Each check names its
// constraint id in the source (`// convolution_c4`).
//
// Where it runs: after reading a module (ir/parser.h: parseModule for text,
// parseModuleFile for text and portable artifacts), after every pass (passes/), and at
// the start of the CPU executor's compile, so that both backends see verified modules and
// the CPU kernel plans only choose layouts.
//
// Scope: every op's operand and result values must be values of the module. The per-op
// checks cover the ops the CPU executor runs (elementwise, compare, select, clamp,
// convert, data movement, slices, dot_general, convolution, gather, scatter, reduce,
// reduce_window, select_and_scatter, sort, map, top_k, triangular_solve, control flow and
// calls) and apply when the op's operand and result types are statically shaped tensors;
// ops with dynamic, quantized, tuple or token types are left to the backend that compiles
// them. Element types that a spec constraint allows but one backend cannot run are that
// backend's error (Unimplemented), not the verifier's.
//
// Errors: InvalidArgument "<loc>: error: '<op name>' op <what>" for the first failing op in
// program order (an op before the ops of its regions), <loc> as the parser's errors give it
// ("model.b8.mlir:42:10", "model.b8.mlir: byte 518 (model.py:12:3)"), or the module's file
// name for an op without a location. Thread safety: free functions over a const module.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/ir.h"
#include "support/status.h"

namespace rs::ir {

/// Verifies every op of `module` (see the file comment); OK when all constraints hold.
Status verifyModule(const Module &module);

} // namespace rs::ir
