//===- cpu/broadcast_folding.h - Broadcasts read in place by binary ops ----===//
//
// Private to cpu/. A broadcast_in_dim of a scalar, a bias vector or a per-row value whose
// only uses are operands of elementwise binary ops is not materialised: the ops read its
// operand directly, element (i / repeat) % period (Kernel::withBroadcastOperand), and every
// element is computed as before. A broadcast that only adds size-1 dims is a reshape.
// Compiler::compileBlock records the candidates while planning and folds them first among
// the block passes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/compiler.h"

namespace rs::cpu {

/// A broadcast_in_dim whose output element i is its operand's element index.at(i).
struct FoldableBroadcast {
  size_t step = 0;
  int32_t src = 0, slot = 0;
  BroadcastIndex index;
};

/// Whether a broadcast_in_dim reads its operand as a BroadcastIndex (then set in `index`).
bool broadcastPattern(const OpView &v, BroadcastIndex &index);
/// Whether a broadcast_in_dim repeats nothing (a reshape that adds size-1 dims).
bool broadcastIsReshape(const OpView &v);
/// Folds each of `broadcasts` whose every use is operand 0 or 1 of an elementwise binary op
/// into those ops and drops its step.
void foldBroadcasts(const std::vector<FoldableBroadcast> &broadcasts, Callable &c);

} // namespace rs::cpu
