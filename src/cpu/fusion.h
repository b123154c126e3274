//===- cpu/fusion.h - Loop fusion of elementwise steps ---------------------===//
//
// Private to cpu/. XLA fuses a chain of elementwise ops into one loop; the executor did one
// pass over memory per op. fuseElementwiseSteps() replaces each run of consecutive
// elementwise steps (Kernel::elementwise) over one element count with one step that runs
// them tile by tile: every op computes a tile of about a thousand elements before the next
// op starts on it, values that no other step reads stay in a per-thread scratch area that
// fits the L1 cache, and only the values read later (or returned) are written out.
//
// Determinism: each element of each op is computed by the same function as unfused, from the
// same operand values; tiles are fixed by the element count, so results are the same bits
// as without fusion, for any thread count.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/compiler.h"

namespace rs::cpu {

/// Fuses runs of two or more consecutive elementwise steps of `c` that produce the same
/// element count (at least kMinFusedElements); steps without inputs (constants) between
/// them, and steps of at most 4096 elements that read no value of the run (a bias vector's
/// reshape), move ahead of the run. Every value a fused run defines that a later step or the
/// callable's results read gets a new slot (outputs of one step must be consecutive slots);
/// later steps and the results are renamed to it. Call before liveness is computed
/// (Compiler::compileBlock).
void fuseElementwiseSteps(Callable &c);

/// Smallest element count fused: below it a pass costs less than the loop's bookkeeping.
constexpr int64_t kMinFusedElements = 256;

} // namespace rs::cpu
