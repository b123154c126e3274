//===- cpu/compiler.h - Execution plans of the CPU executor ----------------===//
//
// Private to cpu/. A Callable is a compiled function body or region: a frame of value
// slots, the parameters (block arguments, then values captured from enclosing scopes),
// one Step per op with its kernel and slots, the result slots, and for each step the
// slots whose last use it is (released right after it, so intermediates die early).
// An op's results get consecutive slots, so a kernel's outputs are one span.
//
// Compiler builds Callables from ir::Module functions and regions (memoised per
// function; recursion is rejected). The module must verify (ir/verify.h; Program::compile
// checks it first): the kernel plans rely on the op constraints and only lay out the work.
// runCallable() executes one with fresh per-call state; BodyEvaluator executes a region
// many times (reduce, sort, scatter bodies) without allocating after its construction.
//
// Thread safety: Callables are immutable; runCallable is reentrant; a BodyEvaluator
// belongs to one thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/kernels/kernel.h"

#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

namespace rs::cpu {

struct Step {
  std::shared_ptr<const Kernel> kernel;
  OutputMode mode = OutputMode::kPreallocated;
  std::vector<int32_t> inputs; // slots: operands, then captured values
  int32_t first_output = 0;
  int32_t num_outputs = 0;
  std::vector<int32_t> release; // slots dead after this step
};

/// Intermediate buffers that finished calls released, kept for later calls, so that a
/// steady stream of executes touches no fresh pages (no page faults, no zeroing by the
/// kernel) after the first. One cache for the process (every model and batch size): it holds
/// at most the bytes of the largest single call seen, or of the most blocks in use at once
/// (a call's own blocks and its callees' results), so serving several programs keeps about
/// one call's worth of activations, not one per program. Thread-safe: concurrent calls each
/// take distinct blocks.
class BlockCache {
public:
  /// The process's cache.
  static BlockCache &shared();

  /// A cached block of exactly `bytes`, or null.
  std::shared_ptr<uint8_t> take(size_t bytes);
  /// Keeps (bytes, block) pairs of one finished call that nothing else refers to any more,
  /// while the cache holds at most the largest `call_bytes` (all blocks of one call) seen.
  void give(std::vector<std::pair<size_t, std::shared_ptr<uint8_t>>> blocks, size_t call_bytes);
  /// A new block of `bytes` (64-byte aligned) that, once its last reference goes, comes back
  /// to the cache by recycle() instead of being freed: the results of a call (a callee's
  /// output, dropped by its caller a few steps later) are then reused, not given back to
  /// malloc, which would trim them and fault fresh pages in on the next call.
  std::shared_ptr<uint8_t> allocate(size_t bytes);

private:
  /// Keeps an allocate()d block whose last reference went away, within the same bound as
  /// give(), or frees it.
  void recycle(uint8_t *block, size_t bytes);
  /// `block` (of `bytes`) owned by a shared pointer whose deleter recycle()s it.
  std::shared_ptr<uint8_t> recycling(uint8_t *block, size_t bytes);

  std::mutex mutex_;
  std::vector<std::pair<size_t, std::shared_ptr<uint8_t>>> free_;
  size_t cached_bytes_ = 0, limit_bytes_ = 0;
  // Bytes of allocate()d blocks outside the cache now, and their most at once: the cache
  // also keeps up to that many (a call's blocks plus its callees' results still in use).
  size_t out_bytes_ = 0, peak_out_bytes_ = 0;
};

struct Callable {
  std::string name; // "@main", "region of 'stablehlo.while' at file:3:5"
  int32_t num_slots = 0;
  std::vector<TensorType> slot_types;
  std::vector<int32_t> params; // block arguments, then captures
  size_t num_block_args = 0;
  std::vector<ir::ValueId> captures; // enclosing-scope values, in params order
  std::vector<Step> steps;
  std::vector<int32_t> results;
  size_t max_inputs = 0;

  TensorType paramType(size_t i) const { return slot_types[static_cast<size_t>(params[i])]; }
  TensorType resultType(size_t i) const { return slot_types[static_cast<size_t>(results[i])]; }
};

/// For each slot of `c`, the indices of the steps that read it, in step order (a step that
/// reads a slot twice is listed twice). For the planning passes (fusion, row fusion).
std::vector<std::vector<size_t>> slotReaders(const Callable &c);

/// Removes the steps `drop` marks (drop[k] for step k), keeping the others in order.
void eraseSteps(Callable &c, const std::vector<bool> &drop);

class BlockSlots;
struct FoldableBroadcast; // cpu/broadcast_folding.h
/// The elements of each tuple value of a block being compiled.
using TupleElements = std::unordered_map<ir::ValueId, std::vector<ir::ValueId>>;

/// The most bytes of step outputs that one call of `c` holds at once, as runCallable()
/// allocates and releases them (its parameters and its callees' own buffers not counted);
/// saturates at INT64_MAX.
int64_t plannedPeakBytes(const Callable &c);

class Compiler {
public:
  /// `memory_limit_bytes`: tensorType() refuses a value of more bytes (ResourceExhausted).
  Compiler(const ir::Module &module, const KernelRegistry &registry,
           int64_t memory_limit_bytes = std::numeric_limits<int64_t>::max())
      : module_(module), registry_(registry), memory_limit_bytes_(memory_limit_bytes) {}

  /// The compiled function `name` (memoised). NotFound if missing; Unimplemented for a
  /// recursive call chain.
  Result<std::shared_ptr<const Callable>> function(std::string_view name);
  /// Whether the module defines function `name`.
  bool hasFunction(std::string_view name) const { return module_.lookupFunction(name) != nullptr; }
  /// Compiles a one-block region of `owner`.
  Result<std::shared_ptr<Callable>> region(const ir::Region &region, const ir::Operation &owner);

  /// The op's location as ir::Location::toString() gives it ("file:line:col", or for a
  /// portable artifact "file: byte N (source:line:col)"); the module's file name when the
  /// op has no location.
  std::string location(const ir::Operation &op) const;
  /// The static tensor type of value `v` as used by `user` (Unimplemented for tuples,
  /// tokens and dynamic shapes; ResourceExhausted when its byte size overflows int64 or is
  /// over the memory limit).
  Result<TensorType> tensorType(ir::ValueId v, const ir::Operation &user) const;

  /// Byte ranges of every constant tensor the compiled code holds.
  const std::vector<std::pair<const uint8_t *, const uint8_t *>> &constantRanges() const {
    return constant_ranges_;
  }

private:
  /// The steps of `block` (of region or function `owner`), planned, passed over by the
  /// block passes (runBlockPasses) and given their releases (compile_block.cc, as are
  /// planStep and BlockSlots).
  Status compileBlock(const ir::Block &block, const ir::Operation &owner, Callable &c);
  /// The kernel and step of one op of `block`; a broadcast that can fold is recorded in
  /// `broadcasts`.
  Status planStep(const ir::Block &block, const ir::Operation &op, BlockSlots &slots,
                  std::vector<FoldableBroadcast> &broadcasts, Callable &c);

  const ir::Module &module_;
  const KernelRegistry &registry_;
  int64_t memory_limit_bytes_;
  std::map<std::string, std::shared_ptr<const Callable>, std::less<>> functions_;
  std::set<std::string, std::less<>> in_progress_;
  std::vector<std::pair<const uint8_t *, const uint8_t *>> constant_ranges_;
};

/// The value slots of one block being compiled (Compiler::compileBlock): a value of the
/// block gets a new slot; a value from an enclosing scope becomes a captured parameter.
class BlockSlots {
public:
  BlockSlots(const Compiler &compiler, Callable &c) : compiler_(compiler), c_(c) {}
  /// A new slot for `v` (Compiler::tensorType's errors, naming `user`).
  Result<int32_t> define(ir::ValueId v, const ir::Operation &user);
  /// The slot of `v`, defined as a captured parameter when `v` is not of this block.
  Result<int32_t> use(ir::ValueId v, const ir::Operation &user);
  bool defines(ir::ValueId v) const { return slot_of_.count(v) != 0; }
  /// Makes `v` another name for `slot`.
  void alias(ir::ValueId v, int32_t slot) { slot_of_[v] = slot; }

private:
  const Compiler &compiler_;
  Callable &c_;
  std::unordered_map<ir::ValueId, int32_t> slot_of_;
};

/// Runs `c` on its block arguments and captured values; returns its results.
std::vector<Tensor> runCallable(const Callable &c, std::span<const Tensor> block_args,
                                std::span<const Tensor *const> captures, const RunContext &rc);

/// Evaluates a region whose block arguments are scalars (rank 0) many times, e.g. the
/// body of a reduce per element pair. Construction allocates the frame and every step's
/// output once; run() then allocates nothing.
class BodyEvaluator {
public:
  BodyEvaluator(const Callable &c, std::span<const Tensor *const> captures, const RunContext &rc);
  /// Binds block argument `i` to the element at `data` (of the argument's dtype).
  void setArg(size_t i, const void *data);
  void run();
  /// The bytes of result `i` (valid until the next run()).
  const uint8_t *result(size_t i) const;

private:
  const Callable &c_;
  const RunContext &rc_;
  std::vector<Tensor> frame_;
  std::vector<const Tensor *> inputs_;
  std::vector<DType> arg_types_;
};

/// Folds values into N scalar accumulators through a body (acc..., x...) -> (acc...), the
/// shape of reduce and reduce_window bodies. Allocates only at construction.
class BodyFold {
public:
  /// `types`: the N accumulator element types.
  BodyFold(const Callable &body, std::span<const Tensor *const> captures, const RunContext &rc,
           std::span<const DType> types);
  /// Sets the accumulators to the N values at `init[i]`.
  void reset(std::span<const uint8_t *const> init);
  /// acc = body(acc, x): `x[i]` points at one element of type i.
  void add(std::span<const uint8_t *const> x);
  const uint8_t *acc(size_t i) const { return acc_.data() + offsets_[i]; }

private:
  BodyEvaluator eval_;
  std::vector<size_t> offsets_, sizes_;
  std::vector<uint8_t> acc_, tmp_;
};

} // namespace rs::cpu
