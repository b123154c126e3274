//===- cpu/broadcast_folding.cc - Broadcasts read in place by binary ops ---===//
#include "cpu/broadcast_folding.h"

#include <algorithm>

namespace rs::cpu {

/// Whether a broadcast_in_dim reads its operand as a BroadcastIndex: ignoring size-1 dims,
/// the result dims are [dims not read][operand dims][dims not read][operand dims][dims not
/// read], the operand dims in order (a bias vector, a per-row scalar, a scalar; an attention
/// mask [B, 1, 1, S] over [B, H, S, S]).
bool broadcastPattern(const OpView &v, BroadcastIndex &index) {
  const TensorType &in = v.operand(0), &out = v.result(0);
  std::vector<int64_t> dims;
  if (in.dtype != out.dtype || !v.attr("broadcast_dimensions") ||
      !ir::decodeIntList(*v.attr("broadcast_dimensions"), dims) ||
      static_cast<int64_t>(dims.size()) != in.rank())
    return false;
  std::vector<int64_t> in_dim_of(out.shape.size(), -1); // out dim -> operand dim read
  for (size_t j = 0; j < dims.size(); ++j) {
    if (dims[j] < 0 || dims[j] >= out.rank())
      return false;
    if (in.shape[j] != 1) {
      if (in.shape[j] != out.shape[static_cast<size_t>(dims[j])])
        return false;
      in_dim_of[static_cast<size_t>(dims[j])] = static_cast<int64_t>(j);
    }
  }
  // Phases over non-size-1 out dims: 0 leading (not read), 1 first read group, 2 not read,
  // 3 second read group, 4 trailing (not read).
  int phase = 0;
  int64_t last_in = -1, first = 1, gap = 1, second = 1, trail = 1;
  for (size_t d = 0; d < out.shape.size(); ++d) {
    const int64_t size = out.shape[d];
    if (size == 1)
      continue;
    if (in_dim_of[d] >= 0) {
      if (phase == 4 || in_dim_of[d] <= last_in)
        return false;
      last_in = in_dim_of[d];
      if (phase <= 1) {
        phase = 1;
        first *= size;
      } else {
        phase = 3;
        second *= size;
      }
    } else if (phase == 1 || phase == 2) {
      phase = 2;
      gap *= size;
    } else if (phase >= 3) {
      phase = 4;
      trail *= size;
    }
  }
  index = BroadcastIndex{};
  if (phase <= 2) {
    index.repeat = gap;
    index.period = first;
  } else {
    index.repeat = trail;
    index.period = second;
    index.outer_repeat = trail * second * gap;
    index.outer_period = first;
  }
  return index.period * index.outer_period == elementCount(in.shape) && elementCount(out.shape) > 0;
}

/// Whether a broadcast_in_dim repeats nothing: each operand dim keeps its size and the
/// dims stay in order, so the result is the operand's values in the same row-major order
/// with size-1 dims added (a reshape).
bool broadcastIsReshape(const OpView &v) {
  const TensorType &in = v.operand(0), &out = v.result(0);
  std::vector<int64_t> dims;
  if (in.dtype != out.dtype || in.numElements() != out.numElements() ||
      !v.attr("broadcast_dimensions") ||
      !ir::decodeIntList(*v.attr("broadcast_dimensions"), dims) ||
      static_cast<int64_t>(dims.size()) != in.rank())
    return false;
  for (size_t j = 0; j < dims.size(); ++j)
    if (dims[j] < 0 || dims[j] >= out.rank() || (j > 0 && dims[j] <= dims[j - 1]) ||
        in.shape[j] != out.shape[static_cast<size_t>(dims[j])])
      return false;
  return true;
}

/// Folds each broadcast whose every use is operand 0 or 1 of an elementwise binary op into
/// those ops (Kernel::withBroadcastOperand) and drops its step: the ops read the broadcast's
/// operand directly, computing every element as before, and the broadcast result is never
/// materialised.
void foldBroadcasts(const std::vector<FoldableBroadcast> &broadcasts, Callable &c) {
  std::vector<bool> folded_into(c.steps.size(), false), drop(c.steps.size(), false);
  for (const FoldableBroadcast &b : broadcasts) {
    if (std::find(c.results.begin(), c.results.end(), b.slot) != c.results.end())
      continue;
    std::vector<std::pair<size_t, std::unique_ptr<Kernel>>> uses;
    bool ok = true;
    for (size_t k = b.step + 1; ok && k < c.steps.size(); ++k) {
      const Step &s = c.steps[k];
      for (size_t q = 0; ok && q < s.inputs.size(); ++q) {
        if (s.inputs[q] != b.slot)
          continue;
        if (q > 1 || folded_into[k] || s.inputs[1 - q] == b.slot ||
            s.mode != OutputMode::kOverwritten) {
          ok = false;
          break;
        }
        std::unique_ptr<Kernel> fused =
            s.kernel->withBroadcastOperand(static_cast<int>(q), b.index);
        if (!fused)
          ok = false;
        else
          uses.emplace_back(k, std::move(fused));
      }
    }
    if (!ok || uses.empty())
      continue;
    for (auto &[k, kernel] : uses) {
      Step &s = c.steps[k];
      for (int32_t &in : s.inputs)
        if (in == b.slot)
          in = b.src;
      s.kernel = std::move(kernel);
      folded_into[k] = true;
    }
    drop[b.step] = true;
  }
  eraseSteps(c, drop);
}

} // namespace rs::cpu
