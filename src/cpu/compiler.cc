//===- cpu/compiler.cc - Execution plans of the CPU executor ---------------===//
//
// OpView's diagnostics and its compilation of regions and callees; the Callable helpers
// the block passes and the executor share (erasing steps, the planned peak, slot
// readers); and Compiler's functions (memoised, recursion rejected) and regions. Compiling
// one block into steps is in compile_block.cc.
//
//===----------------------------------------------------------------------===//
#include "cpu/compiler.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>
#include <sstream>
#include <unordered_map>

namespace rs::cpu {
namespace {

std::string locationOf(const ir::Operation &op, const ir::Module &module) {
  if (op.loc.line > 0 || op.loc.byte_offset >= 0)
    return op.loc.toString();
  return module.file.empty() ? std::string("<unknown>") : module.file;
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

int64_t plannedPeakBytes(const Callable &c) {
  std::vector<bool> allocated(static_cast<size_t>(c.num_slots), false);
  int64_t live = 0, peak = 0;
  for (const Step &s : c.steps) {
    if (s.mode != OutputMode::kAssigned)
      for (int32_t o = s.first_output; o < s.first_output + s.num_outputs; ++o) {
        allocated[static_cast<size_t>(o)] = true;
        if (__builtin_add_overflow(live, c.slot_types[static_cast<size_t>(o)].byteSize(), &live))
          return std::numeric_limits<int64_t>::max();
      }
    peak = std::max(peak, live);
    for (int32_t r : s.release)
      if (allocated[static_cast<size_t>(r)])
        live -= c.slot_types[static_cast<size_t>(r)].byteSize();
  }
  return peak;
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
  // Every buffer the plan allocates has one of these types: one that no allocation can hold
  // is refused here, before a kernel computes with its size (a request would fail with
  // std::bad_alloc, or the size would wrap).
  int64_t bytes = dtypeSize(t.element);
  for (int64_t d : t.shape)
    if (__builtin_mul_overflow(bytes, d, &bytes))
      return resourceExhausted() << location(user) << ": '" << user.name << "' op type "
                                 << t.toString() << " needs more than "
                                 << std::numeric_limits<int64_t>::max() << " bytes";
  if (bytes > memory_limit_bytes_)
    return resourceExhausted() << location(user) << ": '" << user.name << "' op type "
                               << t.toString() << " needs " << bytes
                               << " bytes, more than the cpu executor's memory limit of "
                               << memory_limit_bytes_ << " bytes";
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

} // namespace rs::cpu
