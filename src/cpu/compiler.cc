//===- cpu/compiler.cc - Execution plans of the CPU executor ---------------===//
#include "cpu/compiler.h"

#include "cpu/fusion.h"
#include "cpu/row_fusion.h"
#include "cpu/view_folding.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <sstream>
#include <unordered_map>

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

std::string locationOf(const ir::Operation &op, const ir::Module &module) {
  if (op.loc.line > 0)
    return op.loc.toString();
  return module.file.empty() ? std::string("<unknown>") : module.file;
}

bool isTerminator(const ir::Operation &op) {
  return op.name == "stablehlo.return" || op.name == "func.return";
}

/// A broadcast_in_dim whose output element i is its operand's element index.at(i).
struct FoldableBroadcast {
  size_t step = 0;
  int32_t src = 0, slot = 0;
  BroadcastIndex index;
};

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

} // namespace

//===----------------------------------------------------------------------===//
// OpView
//===----------------------------------------------------------------------===//

OpView::OpView(const ir::Operation &op, std::vector<TensorType> operands,
               std::vector<TensorType> results, Compiler &compiler)
    : op_(op), operands_(std::move(operands)), results_(std::move(results)), compiler_(compiler) {}

StatusBuilder OpView::error() const {
  StatusBuilder b(StatusCode::kInvalidArgument);
  b << compiler_.location(op_) << ": '" << op_.name << "' op ";
  return b;
}

StatusBuilder OpView::unsupported() const {
  StatusBuilder b(StatusCode::kUnimplemented);
  b << compiler_.location(op_) << ": '" << op_.name << "' op ";
  return b;
}

Status OpView::unsupportedType(DType t) const {
  return unsupported() << "element type " << dtypeMlirName(t)
                       << " is not supported by the cpu executor";
}

Status OpView::expectArity(size_t operands, size_t results) const {
  if (operands_.size() != operands)
    return error() << "expects " << operands << " operands, got " << operands_.size();
  if (results_.size() != results)
    return error() << "expects " << results << " results, got " << results_.size();
  return Status::ok();
}

Result<std::vector<int64_t>> OpView::intList(std::string_view attr_name) const {
  return decoded(ir::intListAttr(op_, attr_name));
}

Result<std::vector<int64_t>> OpView::intList(std::string_view attr_name,
                                             std::vector<int64_t> fallback) const {
  return decoded(ir::intListAttr(op_, attr_name, std::move(fallback)));
}

Result<int64_t> OpView::intAttr(std::string_view attr_name) const {
  return decoded(ir::intAttr(op_, attr_name));
}

Result<int64_t> OpView::intAttr(std::string_view attr_name, int64_t fallback) const {
  return decoded(ir::intAttr(op_, attr_name, fallback));
}

bool OpView::boolAttr(std::string_view attr_name, bool fallback) const {
  return ir::boolAttr(op_, attr_name, fallback);
}

Result<RegionRef> OpView::compileRegion(size_t index) {
  if (index >= op_.regions.size())
    return error() << "expects at least " << index + 1 << " regions, got " << op_.regions.size();
  RS_ASSIGN_OR_RETURN(std::shared_ptr<Callable> callable,
                      compiler_.region(op_.regions[index], op_));
  RegionRef ref;
  ref.capture_begin = operands_.size() + extra_inputs_.size();
  ref.capture_count = callable->captures.size();
  extra_inputs_.insert(extra_inputs_.end(), callable->captures.begin(), callable->captures.end());
  ref.callable = std::move(callable);
  return ref;
}

Result<std::shared_ptr<const Callable>> OpView::compileCallee(std::string_view callee) {
  if (!compiler_.hasFunction(callee)) // the call's line, not just the file
    return StatusBuilder(StatusCode::kNotFound)
           << compiler_.location(op_) << ": '" << op_.name << "' op calls @" << callee
           << ", which the module does not define";
  return compiler_.function(callee);
}

//===----------------------------------------------------------------------===//
// Compiler
//===----------------------------------------------------------------------===//

void eraseSteps(Callable &c, const std::vector<bool> &drop) {
  std::vector<Step> kept;
  kept.reserve(c.steps.size());
  for (size_t k = 0; k < c.steps.size(); ++k)
    if (!drop[k])
      kept.push_back(std::move(c.steps[k]));
  c.steps = std::move(kept);
}

std::vector<std::vector<size_t>> slotReaders(const Callable &c) {
  std::vector<std::vector<size_t>> readers(static_cast<size_t>(c.num_slots));
  for (size_t i = 0; i < c.steps.size(); ++i)
    for (int32_t in : c.steps[i].inputs)
      readers[static_cast<size_t>(in)].push_back(i);
  return readers;
}

std::string Compiler::location(const ir::Operation &op) const { return locationOf(op, module_); }

Result<TensorType> Compiler::tensorType(ir::ValueId v, const ir::Operation &user) const {
  if (v < 0 || static_cast<size_t>(v) >= module_.value_types.size())
    return invalidArgument() << location(user) << ": '" << user.name << "' op uses unknown value "
                             << v;
  const ir::Type &t = module_.typeOf(v);
  bool ok = t.isTensor() && t.element != DType::kInvalid;
  for (int64_t d : t.shape)
    ok = ok && d >= 0;
  if (!ok)
    return unimplemented() << location(user) << ": '" << user.name << "' op type " << t.toString()
                           << " is not supported by the cpu executor";
  return TensorType{t.element, t.shape};
}

Result<std::shared_ptr<const Callable>> Compiler::function(std::string_view name) {
  if (auto it = functions_.find(name); it != functions_.end())
    return it->second;
  const ir::Operation *func = module_.lookupFunction(name);
  if (!func)
    return notFound() << (module_.file.empty() ? std::string("module") : module_.file)
                      << ": function @" << name << " not found";
  if (in_progress_.count(name))
    return unimplemented() << location(*func) << ": function @" << name
                           << " is called recursively, which the cpu executor does not support";
  if (func->regions.size() != 1 || func->regions[0].blocks.size() != 1)
    return unimplemented() << location(*func) << ": function @" << name
                           << " has no single-block body, which the cpu executor needs";
  in_progress_.emplace(name);
  auto c = std::make_shared<Callable>();
  c->name = "@" + std::string(name);
  Status st = compileBlock(func->regions[0].blocks[0], *func, *c);
  in_progress_.erase(in_progress_.find(name));
  if (!st.isOk()) // name the function the op is in (for a call, the whole chain, innermost first)
    return Status(st.code(), st.message() + " (in function @" + std::string(name) + ")");
  if (!c->captures.empty())
    return invalidArgument() << location(*func) << ": function @" << name
                             << " uses values defined outside it";
  functions_.emplace(std::string(name), c);
  return std::shared_ptr<const Callable>(c);
}

Result<std::shared_ptr<Callable>> Compiler::region(const ir::Region &region,
                                                   const ir::Operation &owner) {
  if (region.blocks.size() != 1)
    return unimplemented() << location(owner) << ": '" << owner.name << "' op has a region with "
                           << region.blocks.size()
                           << " blocks, which the cpu executor does not support";
  auto c = std::make_shared<Callable>();
  c->name = "region of '" + owner.name + "' at " + location(owner);
  RS_RETURN_IF_ERROR(compileBlock(region.blocks[0], owner, *c));
  return c;
}

Status Compiler::compileBlock(const ir::Block &block, const ir::Operation &owner, Callable &c) {
  std::unordered_map<ir::ValueId, int32_t> slot_of;
  auto define = [&](ir::ValueId v, const ir::Operation &user) -> Result<int32_t> {
    RS_ASSIGN_OR_RETURN(TensorType t, tensorType(v, user));
    int32_t s = c.num_slots++;
    c.slot_types.push_back(std::move(t));
    slot_of[v] = s;
    return s;
  };
  // A use: a value of this block, or one captured from an enclosing scope.
  auto use = [&](ir::ValueId v, const ir::Operation &user) -> Result<int32_t> {
    if (auto it = slot_of.find(v); it != slot_of.end())
      return it->second;
    RS_ASSIGN_OR_RETURN(int32_t s, define(v, user));
    c.captures.push_back(v);
    c.params.push_back(s);
    return s;
  };

  for (ir::ValueId arg : block.arguments) {
    RS_ASSIGN_OR_RETURN(int32_t s, define(arg, owner));
    c.params.push_back(s);
  }
  c.num_block_args = block.arguments.size();

  if (block.ops.empty() || !isTerminator(block.ops.back()))
    return invalidArgument() << location(owner) << ": '" << owner.name
                             << "' op has a block that does not end in a return";

  const KernelRegistry &registry = kernelRegistry();
  std::vector<FoldableBroadcast> broadcasts;
  // Tuples exist only while compiling: stablehlo.tuple records its elements' values, and
  // stablehlo.get_tuple_element makes its result another name for the element (a tensor's
  // slot, or a nested tuple's elements), so neither runs a step (spec "tuple",
  // "get_tuple_element"). A tuple that reaches any other op, a return or a block argument
  // has no slot type and is Unimplemented there.
  std::unordered_map<ir::ValueId, std::vector<ir::ValueId>> tuple_elements;
  for (size_t i = 0; i + 1 < block.ops.size(); ++i) {
    const ir::Operation &op = block.ops[i];
    if (op.name == "stablehlo.tuple") {
      if (op.results.size() != 1)
        return invalidArgument() << location(op) << ": '" << op.name
                                 << "' op expects 1 result, got " << op.results.size();
      tuple_elements[op.results[0]] = op.operands;
      continue;
    }
    if (op.name == "stablehlo.get_tuple_element") {
      const ir::Attribute *index = op.attr("index");
      if (op.operands.size() != 1 || op.results.size() != 1 || !index ||
          index->kind != ir::AttrKind::kInteger)
        return invalidArgument() << location(op) << ": '" << op.name
                                 << "' op expects 1 operand, 1 result and an integer 'index'";
      auto it = tuple_elements.find(op.operands[0]);
      if (it == tuple_elements.end())
        return unimplemented() << location(op) << ": '" << op.name
                               << "' op reads a tuple not built by stablehlo.tuple in the same "
                                  "block, which the cpu executor does not support";
      if (index->int_value < 0 || static_cast<size_t>(index->int_value) >= it->second.size())
        return invalidArgument() << location(op) << ": '" << op.name << "' op index "
                                 << index->int_value << " not in [0, " << it->second.size()
                                 << ")"; // get_tuple_element_c1
      const ir::ValueId element = it->second[static_cast<size_t>(index->int_value)];
      if (auto nested = tuple_elements.find(element); nested != tuple_elements.end()) {
        std::vector<ir::ValueId> elements = nested->second;
        tuple_elements[op.results[0]] = std::move(elements);
      } else {
        RS_ASSIGN_OR_RETURN(int32_t s, use(element, op));
        slot_of[op.results[0]] = s;
      }
      continue;
    }
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
    // reshape: it shares the operand's storage and is a view for view folding. (Not for a
    // block argument, e.g. a weight vector: its copy is tiny, and as views of the arguments
    // these made resnet_bench b1 ~5% slower, measured before call results were recycled
    // into the BlockCache.)
    const bool argument =
        !op.operands.empty() && std::find(block.arguments.begin(), block.arguments.end(),
                                          op.operands[0]) != block.arguments.end();
    const bool reshape =
        op.name == "stablehlo.broadcast_in_dim" && !argument && broadcastIsReshape(view);
    const KernelEntry *planner = reshape ? registry.find("stablehlo.reshape") : entry;
    RS_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, planner->plan(view));
    RS_ASSIGN_OR_RETURN(kernel, adaptSubByteKernel(view, std::move(kernel), planner->mode));

    Step step;
    step.kernel = std::move(kernel);
    step.mode = planner->mode;
    for (ir::ValueId v : op.operands) {
      RS_ASSIGN_OR_RETURN(int32_t s, use(v, op));
      step.inputs.push_back(s);
    }
    for (ir::ValueId v : view.extraInputs()) {
      RS_ASSIGN_OR_RETURN(int32_t s, use(v, op));
      step.inputs.push_back(s);
    }
    step.first_output = c.num_slots;
    step.num_outputs = static_cast<int32_t>(op.results.size());
    for (ir::ValueId v : op.results) {
      if (slot_of.count(v))
        return invalidArgument() << location(op) << ": '" << op.name << "' op redefines value "
                                 << v;
      RS_ASSIGN_OR_RETURN(int32_t s, define(v, op));
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
  }
  const ir::Operation &ret = block.ops.back();
  for (ir::ValueId v : ret.operands) {
    RS_ASSIGN_OR_RETURN(int32_t s, use(v, ret));
    c.results.push_back(s);
  }

  foldBroadcasts(broadcasts, c);
  foldViewsIntoProducts(c);
  fuseRowSteps(c);
  fuseElementwiseSteps(c);

  // Liveness: release each slot after the last step that reads it (or, for a result
  // nobody reads, after the step that defines it). Results and parameters stay.
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
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

namespace {

/// Output storage of one runCallable() call. A block is handed out again, for an output of
/// the same byte size, once nothing but the pool refers to it (the slot that held it was
/// released and no view, result or capture shares it), so a call touches fresh pages only
/// for its peak set of live intermediates, not once per op; and those come from the
/// process's BlockCache when an earlier call left them there. Blocks are 64-byte aligned, as
/// Tensor::zeros gives.
class BufferPool {
public:
  explicit BufferPool(BlockCache &cache) : cache_(cache) {}
  BufferPool(const BufferPool &) = delete;
  BufferPool &operator=(const BufferPool &) = delete;

  ~BufferPool() {
    std::vector<std::pair<size_t, std::shared_ptr<uint8_t>>> unused;
    size_t call_bytes = 0;
    for (Block &b : blocks_) {
      call_bytes += b.bytes;
      if (b.data.use_count() == 1)
        unused.emplace_back(b.bytes, std::move(b.data));
    }
    cache_.give(std::move(unused), call_bytes);
  }

  Tensor take(const TensorType &t, bool zero) {
    const size_t n = static_cast<size_t>(elementCount(t.shape) * dtypeSize(t.dtype));
    std::shared_ptr<uint8_t> block;
    for (Block &b : blocks_)
      if (b.bytes == n && b.data.use_count() == 1) {
        block = b.data;
        break;
      }
    if (!block) {
      block = cache_.take(n);
      if (!block)
        block = cache_.allocate(n);
      blocks_.push_back(Block{n, block});
    }
    if (zero)
      std::memset(block.get(), 0, n);
    const uint8_t *data = block.get();
    return Tensor::view(t.dtype, t.shape, data, std::shared_ptr<const void>(std::move(block)));
  }

private:
  struct Block {
    size_t bytes;
    std::shared_ptr<uint8_t> data;
  };
  BlockCache &cache_;
  std::vector<Block> blocks_;
};

} // namespace

BlockCache &BlockCache::shared() {
  static BlockCache *cache = new BlockCache(); // never destroyed: calls may outlive statics
  return *cache;
}

std::shared_ptr<uint8_t> BlockCache::take(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < free_.size(); ++i)
    if (free_[i].first == bytes) {
      std::shared_ptr<uint8_t> block = std::move(free_[i].second);
      free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
      cached_bytes_ -= bytes;
      out_bytes_ += bytes;
      peak_out_bytes_ = std::max(peak_out_bytes_, out_bytes_);
      return block;
    }
  return nullptr;
}

void BlockCache::give(std::vector<std::pair<size_t, std::shared_ptr<uint8_t>>> blocks,
                      size_t call_bytes) {
  // Blocks not kept are dropped after the lock is released (their deleter recycles them).
  std::vector<std::pair<size_t, std::shared_ptr<uint8_t>>> dropped;
  std::lock_guard<std::mutex> lock(mutex_);
  limit_bytes_ = std::max(limit_bytes_, call_bytes);
  for (auto &b : blocks) {
    if (cached_bytes_ + b.first <= std::max(limit_bytes_, peak_out_bytes_)) {
      cached_bytes_ += b.first;
      out_bytes_ -= b.first;
      free_.push_back(std::move(b));
    } else {
      dropped.push_back(std::move(b));
    }
  }
}

std::shared_ptr<uint8_t> BlockCache::allocate(size_t bytes) {
  auto *p = static_cast<uint8_t *>(::operator new[](bytes ? bytes : 1, std::align_val_t(64)));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    out_bytes_ += bytes;
    peak_out_bytes_ = std::max(peak_out_bytes_, out_bytes_);
  }
  return recycling(p, bytes);
}

std::shared_ptr<uint8_t> BlockCache::recycling(uint8_t *block, size_t bytes) {
  return std::shared_ptr<uint8_t>(block, [this, bytes](uint8_t *q) { recycle(q, bytes); });
}

void BlockCache::recycle(uint8_t *block, size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    out_bytes_ -= bytes;
    if (cached_bytes_ + bytes <= std::max(limit_bytes_, peak_out_bytes_)) {
      cached_bytes_ += bytes;
      free_.emplace_back(bytes, recycling(block, bytes));
      return;
    }
  }
  ::operator delete[](block, std::align_val_t(64));
}

std::vector<Tensor> runCallable(const Callable &c, std::span<const Tensor> block_args,
                                std::span<const Tensor *const> captures, const RunContext &rc) {
  assert(block_args.size() == c.num_block_args);
  assert(captures.size() == c.captures.size());
  std::vector<Tensor> frame(static_cast<size_t>(c.num_slots));
  for (size_t i = 0; i < block_args.size(); ++i)
    frame[static_cast<size_t>(c.params[i])] = block_args[i];
  for (size_t i = 0; i < captures.size(); ++i)
    frame[static_cast<size_t>(c.params[c.num_block_args + i])] = *captures[i];
  std::vector<const Tensor *> in(c.max_inputs);
  BufferPool pool(BlockCache::shared());
  for (const Step &s : c.steps) {
    for (size_t k = 0; k < s.inputs.size(); ++k)
      in[k] = &frame[static_cast<size_t>(s.inputs[k])];
    std::span<Tensor> out(frame.data() + s.first_output, static_cast<size_t>(s.num_outputs));
    if (s.mode != OutputMode::kAssigned)
      for (int32_t k = 0; k < s.num_outputs; ++k)
        out[static_cast<size_t>(k)] =
            pool.take(c.slot_types[static_cast<size_t>(s.first_output + k)],
                      /*zero=*/s.mode == OutputMode::kPreallocated);
    s.kernel->run(KernelIo{rc, std::span<const Tensor *const>(in.data(), s.inputs.size()), out});
    for (int32_t r : s.release)
      frame[static_cast<size_t>(r)] = Tensor();
  }
  std::vector<Tensor> results;
  results.reserve(c.results.size());
  for (int32_t r : c.results)
    results.push_back(frame[static_cast<size_t>(r)]);
  return results;
}

BodyEvaluator::BodyEvaluator(const Callable &c, std::span<const Tensor *const> captures,
                             const RunContext &rc)
    : c_(c), rc_(rc), frame_(static_cast<size_t>(c.num_slots)), inputs_(c.max_inputs) {
  assert(captures.size() == c.captures.size());
  for (size_t i = 0; i < captures.size(); ++i)
    frame_[static_cast<size_t>(c.params[c.num_block_args + i])] = *captures[i];
  for (const Step &s : c.steps)
    if (s.mode != OutputMode::kAssigned)
      for (int32_t k = 0; k < s.num_outputs; ++k) {
        const TensorType &t = c.slot_types[static_cast<size_t>(s.first_output + k)];
        frame_[static_cast<size_t>(s.first_output + k)] = Tensor::zeros(t.dtype, t.shape);
      }
  for (size_t i = 0; i < c.num_block_args; ++i)
    arg_types_.push_back(c.slot_types[static_cast<size_t>(c.params[i])].dtype);
}

void BodyEvaluator::setArg(size_t i, const void *data) {
  frame_[static_cast<size_t>(c_.params[i])] =
      Tensor::view(arg_types_[i], {}, static_cast<const uint8_t *>(data), nullptr);
}

void BodyEvaluator::run() {
  for (const Step &s : c_.steps) {
    for (size_t k = 0; k < s.inputs.size(); ++k)
      inputs_[k] = &frame_[static_cast<size_t>(s.inputs[k])];
    std::span<Tensor> out(frame_.data() + s.first_output, static_cast<size_t>(s.num_outputs));
    s.kernel->run(
        KernelIo{rc_, std::span<const Tensor *const>(inputs_.data(), s.inputs.size()), out});
  }
}

const uint8_t *BodyEvaluator::result(size_t i) const {
  return frame_[static_cast<size_t>(c_.results[i])].data();
}

BodyFold::BodyFold(const Callable &body, std::span<const Tensor *const> captures,
                   const RunContext &rc, std::span<const DType> types)
    : eval_(body, captures, rc) {
  size_t total = 0;
  for (DType t : types) {
    offsets_.push_back(total);
    sizes_.push_back(static_cast<size_t>(dtypeSize(t)));
    total += (sizes_.back() + 7) / 8 * 8; // keeps every accumulator 8-byte aligned
  }
  acc_.assign(total, 0);
  tmp_.assign(total, 0);
  for (size_t i = 0; i < types.size(); ++i)
    eval_.setArg(i, acc_.data() + offsets_[i]);
}

void BodyFold::reset(std::span<const uint8_t *const> init) {
  for (size_t i = 0; i < offsets_.size(); ++i)
    std::memcpy(acc_.data() + offsets_[i], init[i], sizes_[i]);
}

void BodyFold::add(std::span<const uint8_t *const> x) {
  const size_t n = offsets_.size();
  for (size_t i = 0; i < n; ++i)
    eval_.setArg(n + i, x[i]);
  eval_.run();
  // Results may alias the accumulators (a body returning its arguments): copy via tmp.
  for (size_t i = 0; i < n; ++i)
    std::memcpy(tmp_.data() + offsets_[i], eval_.result(i), sizes_[i]);
  std::memcpy(acc_.data(), tmp_.data(), acc_.size());
}

} // namespace rs::cpu
