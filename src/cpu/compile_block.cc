//===- cpu/compile_block.cc - Compiling one block into steps -------------===//
//
// Compiler::compileBlock: each op of a block becomes a Step (its kernel planned from an
// OpView, its operands and results given slots), stablehlo.tuple and get_tuple_element
// are resolved at compile time, then the block passes run (broadcast folding, view
// folding, row and elementwise fusion) and every slot gets its release point.
//
//===----------------------------------------------------------------------===//
#include "cpu/compiler.h"

#include "cpu/broadcast_folding.h"
#include "cpu/fusion.h"
#include "cpu/row_fusion.h"
#include "cpu/view_folding.h"

#include <algorithm>

namespace rs::cpu {
namespace {

/// Why an op without a kernel is not run: ops that only make sense across several
/// devices or with a host or peer program on the other side say so; any other op "is not
/// supported by the cpu executor".
std::string unsupportedOpReason(std::string_view name) {
  static constexpr std::string_view kMultiDevice[] = {
      "stablehlo.all_gather",           "stablehlo.all_reduce",         "stablehlo.all_to_all",
      "stablehlo.collective_broadcast", "stablehlo.collective_permute", "stablehlo.reduce_scatter",
      "stablehlo.partition_id",         "stablehlo.replica_id",         "interpreter.run_parallel"};
  static constexpr std::string_view kHostCommunication[] = {"stablehlo.infeed", "stablehlo.outfeed",
                                                            "stablehlo.send", "stablehlo.recv"};
  for (std::string_view n : kMultiDevice)
    if (n == name)
      return "is not supported by the cpu executor: it needs a multi-device (replica or "
             "partition) setting, and the cpu executor runs a single device";
  for (std::string_view n : kHostCommunication)
    if (n == name)
      return "is not supported by the cpu executor: it communicates with the host or another "
             "program, which the cpu executor does not provide";
  if (name == "stablehlo.after_all" || name == "stablehlo.create_token")
    return "is not supported by the cpu executor: tokens only order host communication "
           "(infeed, outfeed, send, recv), which the cpu executor does not provide";
  return "is not supported by the cpu executor";
}

bool isTerminator(const ir::Operation &op) {
  return op.name == "stablehlo.return" || op.name == "func.return";
}

} // namespace

Result<int32_t> BlockSlots::define(ir::ValueId v, const ir::Operation &user) {
  RS_ASSIGN_OR_RETURN(TensorType t, compiler_.tensorType(v, user));
  const int32_t s = c_.num_slots++;
  c_.slot_types.push_back(std::move(t));
  slot_of_[v] = s;
  return s;
}

Result<int32_t> BlockSlots::use(ir::ValueId v, const ir::Operation &user) {
  if (auto it = slot_of_.find(v); it != slot_of_.end())
    return it->second;
  RS_ASSIGN_OR_RETURN(int32_t s, define(v, user));
  c_.captures.push_back(v);
  c_.params.push_back(s);
  return s;
}

namespace {

/// Tuples exist only while compiling: stablehlo.tuple records its elements' values, and
/// stablehlo.get_tuple_element makes its result another name for the element (a tensor's
/// slot, or a nested tuple's elements), so neither runs a step (spec "tuple",
/// "get_tuple_element"). A tuple that reaches any other op, a return or a block argument
/// has no slot type and is Unimplemented there. True when `op` was one of the two.
Result<bool> lowerTuples(const Compiler &compiler, const ir::Operation &op, TupleElements &tuples,
                         BlockSlots &slots) {
  if (op.name == "stablehlo.tuple") {
    if (op.results.size() != 1)
      return invalidArgument() << compiler.location(op) << ": '" << op.name
                               << "' op expects 1 result, got " << op.results.size();
    tuples[op.results[0]] = op.operands;
    return true;
  }
  if (op.name != "stablehlo.get_tuple_element")
    return false;
  const ir::Attribute *index = op.attr("index");
  if (op.operands.size() != 1 || op.results.size() != 1 || !index ||
      index->kind != ir::AttrKind::kInteger)
    return invalidArgument() << compiler.location(op) << ": '" << op.name
                             << "' op expects 1 operand, 1 result and an integer 'index'";
  auto it = tuples.find(op.operands[0]);
  if (it == tuples.end())
    return unimplemented() << compiler.location(op) << ": '" << op.name
                           << "' op reads a tuple not built by stablehlo.tuple in the same "
                              "block, which the cpu executor does not support";
  if (index->int_value < 0 || static_cast<size_t>(index->int_value) >= it->second.size())
    return invalidArgument() << compiler.location(op) << ": '" << op.name << "' op index "
                             << index->int_value << " not in [0, " << it->second.size()
                             << ")"; // get_tuple_element_c1
  const ir::ValueId element = it->second[static_cast<size_t>(index->int_value)];
  if (auto nested = tuples.find(element); nested != tuples.end()) {
    std::vector<ir::ValueId> elements = nested->second;
    tuples[op.results[0]] = std::move(elements);
  } else {
    RS_ASSIGN_OR_RETURN(int32_t s, slots.use(element, op));
    slots.alias(op.results[0], s);
  }
  return true;
}

/// The planning passes over a compiled block, in their order (each file says why).
void runBlockPasses(const std::vector<FoldableBroadcast> &broadcasts, Callable &c) {
  foldBroadcasts(broadcasts, c);
  foldViewsIntoProducts(c);
  fuseRowSteps(c);
  fuseElementwiseSteps(c);
}

/// Liveness: release each slot after the last step that reads it (or, for a result
/// nobody reads, after the step that defines it). Results and parameters stay.
void assignReleases(Callable &c) {
  std::vector<int64_t> last(static_cast<size_t>(c.num_slots), -1);
  for (size_t i = 0; i < c.steps.size(); ++i) {
    const Step &s = c.steps[i];
    for (int32_t in : s.inputs)
      last[static_cast<size_t>(in)] = static_cast<int64_t>(i);
    for (int32_t o = s.first_output; o < s.first_output + s.num_outputs; ++o)
      if (last[static_cast<size_t>(o)] < static_cast<int64_t>(i))
        last[static_cast<size_t>(o)] = static_cast<int64_t>(i);
  }
  std::vector<bool> keep(static_cast<size_t>(c.num_slots), false);
  for (int32_t r : c.results)
    keep[static_cast<size_t>(r)] = true;
  for (int32_t p : c.params)
    keep[static_cast<size_t>(p)] = true;
  for (int32_t s = 0; s < c.num_slots; ++s)
    if (!keep[static_cast<size_t>(s)] && last[static_cast<size_t>(s)] >= 0)
      c.steps[static_cast<size_t>(last[static_cast<size_t>(s)])].release.push_back(s);
}

} // namespace

Status Compiler::planStep(const ir::Block &block, const ir::Operation &op, BlockSlots &slots,
                          std::vector<FoldableBroadcast> &broadcasts, Callable &c) {
  const KernelRegistry &registry = kernelRegistry();
  const KernelEntry *entry = registry.find(op.name);
  if (!entry)
    return unimplemented() << location(op) << ": '" << op.name << "' op "
                           << unsupportedOpReason(op.name);
  std::vector<TensorType> operand_types, result_types;
  for (ir::ValueId v : op.operands) {
    RS_ASSIGN_OR_RETURN(TensorType t, tensorType(v, op));
    operand_types.push_back(std::move(t));
  }
  for (ir::ValueId v : op.results) {
    RS_ASSIGN_OR_RETURN(TensorType t, tensorType(v, op));
    result_types.push_back(std::move(t));
  }
  OpView view(op, std::move(operand_types), std::move(result_types), *this);
  // A broadcast_in_dim that only adds size-1 dims to a value computed in this block is a
  // reshape: it shares the operand's storage and is a view for view folding. Not for a
  // block argument (a weight vector, say): its copy is tiny, and as a view of the argument
  // it costs more than it saves (docs/performance.md).
  const bool argument = !op.operands.empty() &&
                        std::find(block.arguments.begin(), block.arguments.end(), op.operands[0]) !=
                            block.arguments.end();
  const bool reshape =
      op.name == "stablehlo.broadcast_in_dim" && !argument && broadcastIsReshape(view);
  const KernelEntry *planner = reshape ? registry.find("stablehlo.reshape") : entry;
  RS_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, planner->plan(view));
  RS_ASSIGN_OR_RETURN(kernel, adaptSubByteKernel(view, std::move(kernel), planner->mode));

  Step step;
  step.kernel = std::move(kernel);
  step.mode = planner->mode;
  for (ir::ValueId v : op.operands) {
    RS_ASSIGN_OR_RETURN(int32_t s, slots.use(v, op));
    step.inputs.push_back(s);
  }
  for (ir::ValueId v : view.extraInputs()) {
    RS_ASSIGN_OR_RETURN(int32_t s, slots.use(v, op));
    step.inputs.push_back(s);
  }
  step.first_output = c.num_slots;
  step.num_outputs = static_cast<int32_t>(op.results.size());
  for (ir::ValueId v : op.results) {
    if (slots.defines(v))
      return invalidArgument() << location(op) << ": '" << op.name << "' op redefines value " << v;
    RS_ASSIGN_OR_RETURN(int32_t s, slots.define(v, op));
    (void)s;
  }
  if (op.name == "stablehlo.broadcast_in_dim" && !reshape && step.inputs.size() == 1 &&
      step.num_outputs == 1) {
    FoldableBroadcast b;
    if (broadcastPattern(view, b.index)) {
      b.step = c.steps.size();
      b.src = step.inputs[0];
      b.slot = step.first_output;
      broadcasts.push_back(b);
    }
  }
  c.max_inputs = std::max(c.max_inputs, step.inputs.size());
  if (op.name == "stablehlo.constant")
    if (const ir::Attribute *a = op.attr("value"); a && a->tensor.valid())
      constant_ranges_.emplace_back(a->tensor.data(), a->tensor.data() + a->tensor.byteSize());
  c.steps.push_back(std::move(step));
  return Status::ok();
}

Status Compiler::compileBlock(const ir::Block &block, const ir::Operation &owner, Callable &c) {
  BlockSlots slots(*this, c);
  for (ir::ValueId arg : block.arguments) {
    RS_ASSIGN_OR_RETURN(int32_t s, slots.define(arg, owner));
    c.params.push_back(s);
  }
  c.num_block_args = block.arguments.size();
  if (block.ops.empty() || !isTerminator(block.ops.back()))
    return invalidArgument() << location(owner) << ": '" << owner.name
                             << "' op has a block that does not end in a return";

  std::vector<FoldableBroadcast> broadcasts;
  TupleElements tuples;
  for (size_t i = 0; i + 1 < block.ops.size(); ++i) {
    const ir::Operation &op = block.ops[i];
    RS_ASSIGN_OR_RETURN(bool lowered, lowerTuples(*this, op, tuples, slots));
    if (!lowered)
      RS_RETURN_IF_ERROR(planStep(block, op, slots, broadcasts, c));
  }
  const ir::Operation &ret = block.ops.back();
  for (ir::ValueId v : ret.operands) {
    RS_ASSIGN_OR_RETURN(int32_t s, slots.use(v, ret));
    c.results.push_back(s);
  }
  runBlockPasses(broadcasts, c);
  assignReleases(c);
  return Status::ok();
}

} // namespace rs::cpu
