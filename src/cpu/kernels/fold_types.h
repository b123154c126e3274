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

#include <algorithm>

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

/// One tile's state on the general path of a reduce or reduce_window: the body's fold over
/// the kernel's captures, the N init values (inputs N..2N-1), a pointer per folded value
/// for BodyFold::add, and the N element sizes.
struct FoldTile {
  FoldTile(const RegionRef &body, std::span<const DType> types, const KernelIo &io);
  BodyFold fold;
  std::vector<const uint8_t *> init, x;
  std::vector<int64_t> sizes;
};

/// Runs a reduce or reduce_window plan `p` (members n, types, body, fast, outer) over its
/// p.outer outputs in parallel tiles of about `grain_elements` read elements, each output
/// reading `per_output`: p.fast(p, in, init, out, begin, end) on each tile when the plan has
/// a fast path, else general(tile, begin, end) with a FoldTile per tile. The tiles depend on
/// the shapes alone (the determinism of cpu/executor.h).
template <typename Plan, typename General>
void runFoldTiles(const Plan &p, const KernelIo &io, int64_t per_output, int64_t grain_elements,
                  General &&general) {
  const int64_t grain = std::max<int64_t>(1, grain_elements / std::max<int64_t>(1, per_output));
  const int64_t tiles = (p.outer + grain - 1) / grain;
  if (p.fast) {
    const uint8_t *in = io.in[0]->data(), *init = io.in[1]->data();
    uint8_t *out = io.out[0].mutableData();
    io.rc.cpu->parallelFor(tiles, [&](int64_t t) {
      p.fast(p, in, init, out, t * grain, std::min(p.outer, (t + 1) * grain));
    });
    return;
  }
  io.rc.cpu->parallelFor(tiles, [&](int64_t t) {
    FoldTile tile(p.body, p.types, io);
    general(tile, t * grain, std::min(p.outer, (t + 1) * grain));
  });
}

} // namespace rs::cpu
