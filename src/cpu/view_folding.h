//===- cpu/view_folding.h - Strided views read or written by products ------===//
//
// Private to cpu/. Attention layers move heads around with transpose, slice and reshape ops
// that feed a dot_general or consume its result; each was a full strided copy (a pass over
// memory) although the product's matrices are plain strided views of the tensor before it.
// foldViewsIntoProducts() removes those copies: a chain of view ops (Kernel::outputView)
// whose values only a product reads becomes the product's operand view
// (Kernel::withOperandView), and a chain of view ops (transposes, reshapes) that alone reads
// a product's result becomes the layout and shape the product writes
// (Kernel::withResultView).
//
// Determinism: the product reads the same values and writes them to the same elements; in
// the GEMM every output element is one FMA chain in k order whatever the strides (gemm.h),
// so results are the same bits as with the copies.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/compiler.h"

namespace rs::cpu {

/// Folds view chains into the products of `c` as above and drops the view steps it made
/// dead. A chain qualifies when each value it reads is read by one step only and is no
/// result of `c`; an operand chain must hold at least one step that copies (reshapes alone
/// are free), a result chain may be reshapes alone (the product then keeps its row-major
/// layout under its consumer's shape, so an epilogue can still follow it). Call after
/// foldBroadcasts and before fuseRowSteps (Compiler::compileBlock); slots are not renumbered
/// (a dropped step's slot is never defined nor read).
void foldViewsIntoProducts(Callable &c);

} // namespace rs::cpu
