//===- cpu/row_fusion.h - Row-blocked runs of reductions and their users ---===//
//
// Private to cpu/. Softmax and layer norm are reductions over the last dim interleaved with
// elementwise ops on the rows and on the per-row results: max, subtract, exp, sum, divide
// (or mean, subtract, square, mean, rsqrt, scale, shift). Run one op at a time, each is a
// pass over the whole tensor, from memory once it outgrows the cache. fuseRowSteps()
// replaces such a run of steps with one step that computes it a block of rows at a time:
// every op of the run on rows [r0, r1) before the next block, so a block's values stay in
// the L1/L2 cache; values no later step reads live in a per-thread scratch area, and only
// the others are written out.
//
// A run starts at a reduce of trailing dims on the fast path (Kernel::reducedRowWidth) with
// R results and takes the steps after it while each is (a) such a reduce with R results,
// (b) an elementwise kernel over a multiple of R elements whose operands computed in the run
// are either read elementwise or, through a folded broadcast, one per row (index i / width),
// or (c) a reshape of a value of the run that no step after the run reads. Constants and
// steps of at most 4096 elements that read no value of the run (a bias vector's reshape)
// between them move ahead of the run.
//
// Determinism: each element of each op is computed by the same function as unfused
// (Kernel::runElements, Kernel::runReducedRows: the reduce kernel's own row order), from the
// same operand values; blocks are fixed by the shapes, so results are the same bits as
// without the fusion for any thread count.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/compiler.h"

namespace rs::cpu {

/// Fuses the runs of `c` described above (two or more steps, R > 1). Every value of a run
/// that a later step or the callable's results read gets a new slot (the fused step's
/// outputs are consecutive); later steps and the results are renamed to it. Call after
/// foldViewsIntoProducts and before fuseElementwiseSteps (Compiler::compileBlock).
void fuseRowSteps(Callable &c);

} // namespace rs::cpu
