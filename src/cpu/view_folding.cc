//===- cpu/view_folding.cc - Strided views read or written by products -----===//
#include "cpu/view_folding.h"

#include <optional>
#include <unordered_set>

namespace rs::cpu {
namespace {

struct Graph {
  std::vector<int> defined_by; // slot -> step, or -1 (parameters)
  std::vector<int> reads;      // slot -> number of step inputs that name it
  std::vector<int> reader;     // slot -> the last step that reads it, or -1
  std::unordered_set<int32_t> results;
};

Graph graphOf(const Callable &c) {
  Graph g;
  g.defined_by.assign(static_cast<size_t>(c.num_slots), -1);
  g.reads.assign(static_cast<size_t>(c.num_slots), 0);
  g.reader.assign(static_cast<size_t>(c.num_slots), -1);
  for (size_t i = 0; i < c.steps.size(); ++i) {
    const Step &s = c.steps[i];
    for (int32_t o = s.first_output; o < s.first_output + s.num_outputs; ++o)
      g.defined_by[static_cast<size_t>(o)] = static_cast<int>(i);
    for (int32_t in : s.inputs) {
      ++g.reads[static_cast<size_t>(in)];
      g.reader[static_cast<size_t>(in)] = static_cast<int>(i);
    }
  }
  g.results.insert(c.results.begin(), c.results.end());
  return g;
}

/// Whether the single output of step `k` is a view of its operand 0 that only one step
/// input reads.
bool viewStep(const Callable &c, const Graph &g, int k, const std::vector<bool> &dropped) {
  if (k < 0 || dropped[static_cast<size_t>(k)])
    return false;
  const Step &s = c.steps[static_cast<size_t>(k)];
  if (s.num_outputs != 1 || s.inputs.empty() || g.reads[static_cast<size_t>(s.first_output)] != 1 ||
      g.results.count(s.first_output))
    return false;
  StridedView probe = StridedView::rowMajor(c.slot_types[static_cast<size_t>(s.inputs[0])].shape);
  return s.kernel->outputView(probe);
}

/// Folds the view chain that ends in operand `q` of step `i` into it; true when it did.
bool foldOperand(Callable &c, const Graph &g, size_t i, int q, std::vector<bool> &dropped) {
  Step &s = c.steps[i];
  std::vector<int> chain; // steps from the source to the operand
  for (int32_t slot = s.inputs[static_cast<size_t>(q)];;) {
    const int k = g.defined_by[static_cast<size_t>(slot)];
    if (!viewStep(c, g, k, dropped))
      break;
    chain.insert(chain.begin(), k);
    slot = c.steps[static_cast<size_t>(k)].inputs[0];
  }
  // The longest tail of the chain that composes into one strided view.
  size_t first = 0;
  StridedView view;
  for (size_t j = 0; j < chain.size(); ++j) {
    if (j == first)
      view = StridedView::rowMajor(
          c.slot_types[static_cast<size_t>(c.steps[static_cast<size_t>(chain[j])].inputs[0])]
              .shape);
    if (!c.steps[static_cast<size_t>(chain[j])].kernel->outputView(view))
      first = j + 1;
  }
  bool copies = false;
  for (size_t j = first; j < chain.size(); ++j)
    copies = copies || c.steps[static_cast<size_t>(chain[j])].mode != OutputMode::kAssigned;
  if (!copies)
    return false;
  std::unique_ptr<Kernel> k = s.kernel->withOperandView(q, view);
  if (!k)
    return false;
  s.kernel = std::move(k);
  s.inputs[static_cast<size_t>(q)] = c.steps[static_cast<size_t>(chain[first])].inputs[0];
  for (size_t j = first; j < chain.size(); ++j)
    dropped[static_cast<size_t>(chain[j])] = true;
  return true;
}

/// The view of a tensor of `from` that `to` (a view of it, as outputView gives) reads, turned
/// around: `from` as a view of a row-major tensor of to.shape. Only for a permutation of the
/// dims (every element read once, in some dim order); nullopt otherwise.
std::optional<StridedView> invertPermutation(const Shape &from, const StridedView &to) {
  if (to.offset != 0 || elementCount(from) != elementCount(to.shape) || elementCount(from) == 0)
    return std::nullopt;
  const std::vector<int64_t> from_strides = rowMajorStrides(from);
  const std::vector<int64_t> to_strides = rowMajorStrides(to.shape);
  StridedView out{from, std::vector<int64_t>(from.size(), 0), 0};
  std::vector<bool> used(to.shape.size(), false);
  for (size_t e = 0; e < from.size(); ++e) {
    if (from[e] == 1)
      continue;
    bool found = false;
    for (size_t d = 0; d < to.shape.size() && !found; ++d)
      if (!used[d] && to.shape[d] == from[e] && to.strides[d] == from_strides[e]) {
        used[d] = found = true;
        out.strides[e] = to_strides[d];
      }
    if (!found)
      return std::nullopt;
  }
  for (size_t d = 0; d < to.shape.size(); ++d)
    if (!used[d] && to.shape[d] != 1)
      return std::nullopt;
  return out;
}

/// Lets step `i` write its result in the layout of the longest chain of view steps after it
/// (each the only reader of the value before it) that it accepts (Kernel::withResultView),
/// and drops those steps; true when it did. A chain of reshapes only gives the product its
/// consumer's shape (so that an elementwise epilogue can follow it).
bool foldResult(Callable &c, const Graph &g, size_t i, std::vector<bool> &dropped) {
  Step &s = c.steps[i];
  if (s.num_outputs != 1)
    return false;
  std::vector<size_t> chain;
  for (int32_t slot = s.first_output;
       g.reads[static_cast<size_t>(slot)] == 1 && !g.results.count(slot);) {
    const int r = g.reader[static_cast<size_t>(slot)];
    if (r < 0 || dropped[static_cast<size_t>(r)])
      break;
    const Step &t = c.steps[static_cast<size_t>(r)];
    if (t.inputs.size() != 1 || t.num_outputs != 1)
      break;
    chain.push_back(static_cast<size_t>(r));
    slot = t.first_output;
  }
  const Shape &from = c.slot_types[static_cast<size_t>(s.first_output)].shape;
  StridedView view = StridedView::rowMajor(from);
  std::unique_ptr<Kernel> best;
  size_t best_len = 0;
  for (size_t n = 0; n < chain.size(); ++n) {
    if (!c.steps[chain[n]].kernel->outputView(view))
      break;
    if (std::optional<StridedView> inverse = invertPermutation(from, view))
      if (std::unique_ptr<Kernel> k = s.kernel->withResultView(*inverse)) {
        best = std::move(k);
        best_len = n + 1;
      }
  }
  if (!best)
    return false;
  s.kernel = std::move(best);
  s.first_output = c.steps[chain[best_len - 1]].first_output;
  for (size_t n = 0; n < best_len; ++n)
    dropped[chain[n]] = true;
  return true;
}

} // namespace

void foldViewsIntoProducts(Callable &c) {
  std::vector<bool> dropped(c.steps.size(), false);
  bool changed = false;
  const Graph g = graphOf(c); // reads stay valid: a fold moves one read from a dropped value
  for (size_t i = 0; i < c.steps.size(); ++i) {
    if (c.steps[i].inputs.size() != 2)
      continue;
    for (int q = 0; q < 2; ++q)
      changed = foldOperand(c, g, i, q, dropped) || changed;
  }
  for (size_t i = 0; i < c.steps.size(); ++i)
    if (!dropped[i])
      changed = foldResult(c, g, i, dropped) || changed;
  if (changed)
    eraseSteps(c, dropped);
}

} // namespace rs::cpu
