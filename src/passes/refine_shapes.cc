//===- passes/refine_shapes.cc - Shape refinement (stablehlo-refine-shapes) -===//
//
// The walk: from the entry function, each op in program order is refined (result types,
// folding, dynamic-to-static rewrite, shape assertions); a call refines its callee first
// (in place, or a clone for a second signature), a region op its regions; each function's
// type follows its refined arguments and results. Afterwards the clones are appended,
// constants without uses removed, values renumbered (refine_cleanup.cc) and the module
// verified.
//
//===----------------------------------------------------------------------===//
#include "passes/refine_shapes.h"

#include "ir/verify.h"
#include "passes/refine_shapes_impl.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

namespace rs::passes {
namespace {

using namespace detail;

/// `actual` is `declared` with its dynamic dimensions made static.
bool refines(const ir::Type &declared, const ir::Type &actual) {
  if (declared.kind != ir::TypeKind::kTensor || actual.kind != ir::TypeKind::kTensor)
    return declared == actual;
  if (declared.element != actual.element || declared.shape.size() != actual.shape.size() ||
      isDynamic(actual))
    return false;
  for (size_t i = 0; i < declared.shape.size(); ++i)
    if (declared.shape[i] >= 0 && declared.shape[i] != actual.shape[i])
      return false;
  return true;
}

class Refiner {
public:
  /// `entry` is refined in place by the caller and may not be called.
  Refiner(ir::Module &m, RefineReport &report, const std::string &entry)
      : m_(m), report_(report), original_types_(m.value_types), used_{entry}, in_progress_{entry} {
    for (ir::Operation &op : m.ops)
      if (op.name == "func.func") {
        pristine_.emplace(std::string(ir::functionName(op)), op);
        by_name_[std::string(ir::functionName(op))] = &op;
      }
  }

  /// Refines `func` for arguments of `types` holding `values` (where known).
  Status refineFunction(ir::Operation &func, const std::vector<ir::Type> &types,
                        const std::vector<std::optional<Folded>> &values);
  /// The functions cloned while refining, to append to the module.
  std::deque<ir::Operation> &clones() { return clones_; }

private:
  Status refineBlock(ir::Block &block, bool args_known);
  /// Refines one op; sets `erase` when the op is to be removed (a shape assertion held).
  Status refineOp(ir::Operation &op, bool &erase);
  Status refineRegions(ir::Operation &op);
  /// Folds the results of `call` that its refined `callee` returns folded.
  Status foldCall(ir::Operation &call, const ir::Operation &callee);
  /// Turns `op` into a stablehlo.constant holding `f`.
  void replaceWithConstant(ir::Operation &op, const Folded &f);
  Status checkShapeAssertion(const ir::Operation &op);
  /// The function a call is to target: its callee refined for the call, or a clone.
  Result<std::string> specialize(const ir::Operation &call);
  ir::Operation cloneFunction(const ir::Operation &func, const std::string &name);
  void setType(ir::ValueId v, const ir::Type &t) {
    ir::Type &slot = m_.value_types[static_cast<size_t>(v)];
    if (slot != t) {
      slot = t;
      ++report_.values_refined;
    }
  }
  void setShape(ir::ValueId v, const Shape &s) {
    ir::Type t = m_.typeOf(v);
    t.shape = s;
    setType(v, t);
  }

  ir::Module &m_;
  RefineReport &report_;
  const std::vector<ir::Type> original_types_; // for cloning unrefined functions
  FoldedValues known_;
  std::map<std::string, ir::Operation> pristine_; // every function before refinement
  std::map<std::string, ir::Operation *> by_name_;
  std::map<std::string, std::string> specializations_; // call key -> function name
  std::set<std::string> used_;                         // functions refined in place or cloned
  std::set<std::string> in_progress_;                  // callees (by original name) being refined
  std::deque<ir::Operation> clones_;                   // stable addresses while refining
};

Status Refiner::refineFunction(ir::Operation &func, const std::vector<ir::Type> &types,
                               const std::vector<std::optional<Folded>> &values) {
  const std::string name(ir::functionName(func));
  if (func.regions.size() != 1 || func.regions[0].blocks.size() != 1)
    return opError(func, m_) << "@" << name << " has no single-block body";
  ir::Block &block = func.regions[0].blocks[0];
  if (types.size() != block.arguments.size())
    return opError(func, m_) << "@" << name << " takes " << block.arguments.size()
                             << " arguments, refined with " << types.size();
  for (size_t i = 0; i < types.size(); ++i) {
    const ir::ValueId arg = block.arguments[i];
    if (isDynamic(types[i]))
      return opError(func, m_) << "argument " << i << " of @" << name << " is refined to "
                               << types[i].toString() << ", which is not static";
    if (!refines(m_.typeOf(arg), types[i]))
      return opError(func, m_) << "argument " << i << " of @" << name << ": " << types[i].toString()
                               << " does not refine " << m_.typeOf(arg).toString();
    setType(arg, types[i]);
    if (i < values.size() && values[i])
      known_[arg] = *values[i];
  }
  RS_RETURN_IF_ERROR(refineBlock(block, true));
  ir::Type fn = ir::functionType(func);
  fn.elements = types;
  fn.results.clear();
  if (!block.ops.empty())
    for (ir::ValueId v : block.ops.back().operands)
      fn.results.push_back(m_.typeOf(v));
  ir::Attribute a;
  a.kind = ir::AttrKind::kType;
  a.type = std::make_shared<ir::Type>(std::move(fn));
  setProperty(func, "function_type", std::move(a));
  return Status::ok();
}

Status Refiner::refineBlock(ir::Block &block, bool args_known) {
  for (ir::ValueId arg : block.arguments) {
    if (isDynamic(m_.typeOf(arg)))
      return invalidArgument() << (m_.file.empty() ? "<unknown>" : m_.file)
                               << ": error: block argument of type " << m_.typeOf(arg).toString()
                               << " is still dynamic";
    if (!args_known)
      known_.erase(arg);
  }
  std::vector<ir::Operation> kept;
  kept.reserve(block.ops.size());
  for (ir::Operation &op : block.ops) {
    bool erase = false;
    RS_RETURN_IF_ERROR(refineOp(op, erase));
    if (!erase)
      kept.push_back(std::move(op));
  }
  block.ops = std::move(kept);
  return Status::ok();
}

Status Refiner::checkShapeAssertion(const ir::Operation &op) {
  // CheckShapeAssertionsPass (jax): operand 0 is the i1 predicate, the others the values
  // that `{0}`, `{1}`... of error_message name.
  auto it = op.operands.empty() ? known_.end() : known_.find(op.operands[0]);
  if (it == known_.end() || it->second.values.size() != 1)
    return opError(op, m_) << "shape_assertion predicate (operand 0) is not a constant after "
                              "refinement";
  if (it->second.values[0] != 0)
    return Status::ok();
  const ir::Attribute *msg = op.attr("error_message");
  std::string text = msg && msg->kind == ir::AttrKind::kString ? msg->str : "";
  for (size_t k = 1; k < op.operands.size(); ++k) {
    auto v = known_.find(op.operands[k]);
    const std::string value = v != known_.end() && v->second.values.size() == 1
                                  ? std::to_string(v->second.values[0])
                                  : std::string("?");
    const std::string field = "{" + std::to_string(k - 1) + "}";
    for (size_t p = 0; (p = text.find(field, p)) != std::string::npos; p += value.size())
      text.replace(p, field.size(), value);
  }
  return opError(op, m_) << "shape assertion failed: " << text;
}

ir::Operation Refiner::cloneFunction(const ir::Operation &func, const std::string &name) {
  std::map<ir::ValueId, ir::ValueId> ids;
  auto fresh = [&](ir::ValueId old) {
    const ir::ValueId id = static_cast<ir::ValueId>(m_.value_types.size());
    m_.value_types.push_back(original_types_[static_cast<size_t>(old)]);
    ids[old] = id;
    return id;
  };
  auto cloneOp = [&](auto &self, ir::Operation &op) -> void {
    for (ir::ValueId &v : op.operands)
      if (auto it = ids.find(v); it != ids.end())
        v = it->second;
    for (ir::ValueId &v : op.results)
      v = fresh(v);
    for (ir::Region &r : op.regions)
      for (ir::Block &b : r.blocks) {
        for (ir::ValueId &v : b.arguments)
          v = fresh(v);
        for (ir::Operation &inner : b.ops)
          self(self, inner);
      }
  };
  ir::Operation copy = func;
  cloneOp(cloneOp, copy);
  ir::Attribute s;
  s.kind = ir::AttrKind::kString;
  s.str = name;
  setProperty(copy, "sym_name", s);
  s.str = "private";
  setProperty(copy, "sym_visibility", s);
  return copy;
}

Result<std::string> Refiner::specialize(const ir::Operation &call) {
  const ir::Attribute *callee = call.attr("callee");
  if (!callee || !pristine_.count(callee->str))
    return opError(call, m_) << "calls an unknown function";
  std::string key = callee->str;
  std::vector<ir::Type> types;
  std::vector<std::optional<Folded>> values;
  for (ir::ValueId v : call.operands) {
    types.push_back(m_.typeOf(v));
    key += "|" + types.back().toString();
    auto it = known_.find(v);
    if (it != known_.end() && it->second.shape.empty()) {
      values.push_back(it->second);
      key += "=" + std::to_string(it->second.values[0]);
    } else {
      values.emplace_back();
    }
  }
  // StableHLO programs do not recurse (func.call of a function being refined).
  if (in_progress_.count(callee->str))
    return opError(call, m_) << "calls @" << callee->str << " recursively";
  if (auto it = specializations_.find(key); it != specializations_.end())
    return it->second;
  std::string name = callee->str;
  ir::Operation *target = by_name_[name];
  if (!used_.insert(name).second) {
    for (int n = 1; by_name_.count(name); ++n)
      name = callee->str + "_" + std::to_string(n);
    clones_.push_back(cloneFunction(pristine_.at(callee->str), name));
    target = &clones_.back();
    by_name_[name] = target;
    used_.insert(name);
    ++report_.functions_cloned;
  }
  specializations_[key] = name;
  in_progress_.insert(callee->str);
  RS_RETURN_IF_ERROR(refineFunction(*target, types, values));
  in_progress_.erase(callee->str);
  return name;
}

Status Refiner::foldCall(ir::Operation &call, const ir::Operation &callee) {
  // The callee is specialized for the call's folded scalar operands, so what it returns
  // folded is the call's result (as after inlining, which JAX runs before refinement).
  const ir::Block &body = callee.regions[0].blocks[0];
  if (body.ops.empty())
    return Status::ok();
  const std::vector<ir::ValueId> &returned = body.ops.back().operands;
  for (size_t i = 0; i < call.results.size() && i < returned.size(); ++i)
    if (auto it = known_.find(returned[i]); it != known_.end())
      known_[call.results[i]] = it->second;
  if (call.results.size() == 1 && known_.count(call.results[0]))
    replaceWithConstant(call, known_.at(call.results[0]));
  return Status::ok();
}

void Refiner::replaceWithConstant(ir::Operation &op, const Folded &f) {
  op.name = "stablehlo.constant";
  op.operands.clear();
  op.regions.clear();
  op.properties.clear();
  op.attributes.clear();
  setProperty(op, "value", denseAttribute(f));
  ++report_.ops_folded;
}

Status Refiner::refineRegions(ir::Operation &op) {
  if (op.name == "stablehlo.while" && op.regions.size() == 2) {
    // while_c1, while_c2: cond and body take the loop-carried values' types; their
    // values change per iteration, so none is known.
    for (ir::Region &r : op.regions)
      for (ir::Block &b : r.blocks)
        for (size_t i = 0; i < b.arguments.size() && i < op.operands.size(); ++i)
          setType(b.arguments[i], m_.typeOf(op.operands[i]));
  }
  for (ir::Region &r : op.regions)
    for (ir::Block &b : r.blocks)
      RS_RETURN_IF_ERROR(refineBlock(b, false));
  const bool branches = op.name == "stablehlo.if" || op.name == "stablehlo.case";
  if (branches && !op.regions.empty() && op.regions[0].blocks.size() == 1) {
    const ir::Block &b = op.regions[0].blocks[0];
    for (size_t i = 0; i < op.results.size() && !b.ops.empty() && i < b.ops.back().operands.size();
         ++i)
      if (isDynamic(m_.typeOf(op.results[i])))
        setType(op.results[i], m_.typeOf(b.ops.back().operands[i]));
  }
  return Status::ok();
}

Status Refiner::refineOp(ir::Operation &op, bool &erase) {
  if (op.name == "stablehlo.custom_call") {
    const ir::Attribute *target = op.attr("call_target_name");
    if (target && target->str == "shape_assertion") {
      RS_RETURN_IF_ERROR(checkShapeAssertion(op));
      erase = true;
      ++report_.assertions_removed;
      return Status::ok();
    }
  }
  if (op.name == "func.call") {
    RS_ASSIGN_OR_RETURN(std::string name, specialize(op));
    ir::Attribute callee;
    callee.kind = ir::AttrKind::kSymbolRef;
    callee.str = name;
    setProperty(op, "callee", std::move(callee));
    const ir::Type &fn = ir::functionType(*by_name_.at(name));
    for (size_t i = 0; i < op.results.size() && i < fn.results.size(); ++i) {
      if (!refines(m_.typeOf(op.results[i]), fn.results[i]))
        return opError(op, m_) << "result " << i << " of type "
                               << m_.typeOf(op.results[i]).toString() << " refines to "
                               << fn.results[i].toString() << " in @" << name;
      setType(op.results[i], fn.results[i]);
    }
    return foldCall(op, *by_name_.at(name));
  }
  RS_RETURN_IF_ERROR(refineRegions(op));
  std::vector<ir::Type> before;
  for (ir::ValueId v : op.results)
    before.push_back(m_.typeOf(v));
  RS_ASSIGN_OR_RETURN(bool made_static, makeStatic(op, m_, known_));
  if (made_static) {
    ++report_.ops_made_static;
    for (size_t i = 0; i < op.results.size(); ++i)
      report_.values_refined += m_.typeOf(op.results[i]) != before[i];
  }
  const bool dynamic = std::any_of(op.results.begin(), op.results.end(),
                                   [&](ir::ValueId v) { return isDynamic(m_.typeOf(v)); });
  if (dynamic) {
    RS_ASSIGN_OR_RETURN(std::vector<Shape> shapes, inferShapes(op, m_));
    for (size_t i = 0; i < shapes.size(); ++i)
      setShape(op.results[i], shapes[i]);
  }
  if (op.results.size() != 1)
    return Status::ok();
  std::optional<Folded> f = foldOp(op, m_, known_, m_.typeOf(op.results[0]));
  if (!f)
    return Status::ok();
  if (op.name != "stablehlo.constant")
    replaceWithConstant(op, *f);
  known_[op.results[0]] = std::move(*f);
  return Status::ok();
}

} // namespace

Result<RefineReport> refineShapes(ir::Module &module, const RefineOptions &options) {
  const std::string entry_name = options.entry.empty() ? "main" : options.entry;
  ir::Operation *entry = nullptr;
  for (ir::Operation &op : module.ops)
    if (op.name == "func.func" && ir::functionName(op) == entry_name)
      entry = &op;
  if (!entry)
    return invalidArgument() << (module.file.empty() ? "<unknown>" : module.file)
                             << ": error: no entry function @" << entry_name;
  std::vector<ir::Type> types = options.arg_types;
  if (types.empty())
    types = ir::functionType(*entry).elements;
  std::vector<std::optional<Folded>> values(types.size());
  for (size_t i = 0; i < options.dimension_values.size() && i < types.size(); ++i) {
    if (!options.dimension_values[i])
      continue;
    const ir::Type &t = types[i];
    if (!t.isTensor() || t.rank() != 0 || !foldableType(t.element) || t.element == DType::kBool)
      return opError(*entry, module) << "argument " << i << " of type " << t.toString()
                                     << " is given a dimension value but is not an integer scalar";
    values[i] = Folded{t.element, {}, {*options.dimension_values[i]}};
  }
  RefineReport report;
  Refiner refiner(module, report, entry_name);
  RS_RETURN_IF_ERROR(refiner.refineFunction(*entry, types, values));
  for (ir::Operation &clone : refiner.clones())
    module.ops.push_back(std::move(clone));
  report.constants_removed = removeUnusedConstants(module);
  renumberValues(module);
  RS_RETURN_IF_ERROR(ir::verifyModule(module));
  return report;
}

} // namespace rs::passes
