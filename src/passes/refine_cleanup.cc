//===- passes/refine_cleanup.cc - What refine-shapes leaves behind ---------===//
//
// Folding leaves constants without uses (the operands of the folded ops) and gaps in the
// value table (the removed values, and the table entries of cloned functions); both are
// cleared once the module is refined.
//
//===----------------------------------------------------------------------===//
#include "passes/refine_shapes_impl.h"

#include <algorithm>
#include <set>

namespace rs::passes::detail {
namespace {

void collectUses(const ir::Block &b, std::set<ir::ValueId> &used) {
  for (const ir::Operation &op : b.ops) {
    used.insert(op.operands.begin(), op.operands.end());
    for (const ir::Region &r : op.regions)
      for (const ir::Block &inner : r.blocks)
        collectUses(inner, used);
  }
}

int64_t removeIn(ir::Block &b, const std::set<ir::ValueId> &used) {
  int64_t removed = 0;
  std::erase_if(b.ops, [&](const ir::Operation &op) {
    const bool dead =
        op.name == "stablehlo.constant" && op.results.size() == 1 && !used.count(op.results[0]);
    removed += dead;
    return dead;
  });
  for (ir::Operation &op : b.ops)
    for (ir::Region &r : op.regions)
      for (ir::Block &inner : r.blocks)
        removed += removeIn(inner, used);
  return removed;
}

class Renumber {
public:
  explicit Renumber(const ir::Module &m) : m_(m) {}
  ir::ValueId define(ir::ValueId old) {
    const ir::ValueId id = static_cast<ir::ValueId>(types_.size());
    types_.push_back(m_.typeOf(old));
    ids_[old] = id;
    return id;
  }
  void op(ir::Operation &o) {
    for (ir::ValueId &v : o.operands)
      if (auto it = ids_.find(v); it != ids_.end())
        v = it->second;
    for (ir::Region &r : o.regions)
      for (ir::Block &b : r.blocks) {
        for (ir::ValueId &v : b.arguments)
          v = define(v);
        for (ir::Operation &inner : b.ops)
          op(inner);
      }
    for (ir::ValueId &v : o.results)
      v = define(v);
  }
  std::vector<ir::Type> take() { return std::move(types_); }

private:
  const ir::Module &m_;
  std::map<ir::ValueId, ir::ValueId> ids_;
  std::vector<ir::Type> types_;
};

} // namespace

int64_t removeUnusedConstants(ir::Module &m) {
  std::set<ir::ValueId> used;
  for (const ir::Operation &op : m.ops)
    for (const ir::Region &r : op.regions)
      for (const ir::Block &b : r.blocks)
        collectUses(b, used);
  int64_t removed = 0;
  for (ir::Operation &op : m.ops)
    for (ir::Region &r : op.regions)
      for (ir::Block &b : r.blocks)
        removed += removeIn(b, used);
  return removed;
}

void renumberValues(ir::Module &m) {
  Renumber r(m);
  for (ir::Operation &op : m.ops)
    r.op(op);
  m.value_types = r.take();
}

} // namespace rs::passes::detail
