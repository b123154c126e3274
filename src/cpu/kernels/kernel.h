//===- cpu/kernels/kernel.h - Kernel interface of the CPU executor ---------===//
//
// Private to cpu/. Every op family lives in one file under kernels/ with the layout of
// STYLE.md rule 7: a <Op>Plan struct; `Status plan<Op>(OpView &, <Op>Plan &)` decodes the
// op's attributes and lays out the work at compile time, for a verified module (ir/verify.h:
// the op constraints hold), refusing only what the executor cannot run; `void
// run<Op>(const <Op>Plan &, const KernelIo &)` has no error path; registration last
// (register<Family>Kernels, called from kernelRegistry() in kernels/common.cc).
//
// A kernel's inputs are the op's operands followed by the values its regions capture
// from enclosing scopes (OpView::compileRegion reports where those start). Outputs are
// either preallocated by the executor (zero-filled, owned: OutputMode::kPreallocated), or
// preallocated without the zero fill for kernels that write every output element
// (OutputMode::kOverwritten: elementwise, convert, compare/select/clamp, broadcast, transpose,
// slice, reduce, dot_general), or assigned by the kernel itself (OutputMode::kAssigned: constants,
// reshapes, control flow), which may then share storage with an input or a constant but never
// write to it. Preallocated outputs may reuse the storage of a dead intermediate of the same
// call (run_callable.cc BufferPool).
//
// Thread safety: plans are immutable after planning and shared by concurrent runs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/context.h"
#include "cpu/executor.h"
#include "cpu/kernels/element_types.h"
#include "cpu/kernels/half.h"
#include "ir/ir.h"
#include "ir/op_attributes.h"
#include "support/integer_element.h"
#include "support/status.h"
#include "support/tensor.h"

#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace rs::cpu {

class Compiler;

/// What a running kernel may use besides its tensors.
struct RunContext {
  const CpuContext *cpu = nullptr;
};

struct KernelIo {
  const RunContext &rc;
  std::span<const Tensor *const> in;
  std::span<Tensor> out;
};

/// A strided view of a row-major tensor: element (i_0, ..., i_{r-1}) of a view of `shape`
/// is element offset + sum_d i_d * strides[d] (flat, in elements) of the viewed tensor.
struct StridedView {
  Shape shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;

  /// The view of a whole row-major tensor of `shape`.
  static StridedView rowMajor(const Shape &shape);
  /// Gives the view the shape `shape` (same element count), its elements taken in row-major
  /// order (stablehlo.reshape of the viewed values). False, with the view unchanged, when
  /// that is no strided view (dims split or merged across non-contiguous strides) or the
  /// view has no elements.
  bool reshape(const Shape &shape);
};

/// The element of a broadcast_in_dim's operand that output element i reads, for result dims
/// (ignoring size-1 dims) [not read][read: outer_period][not read][read: period][not read:
/// repeat], the read dims in operand order: at(i) = ((i / outer_repeat) % outer_period) *
/// period + (i / repeat) % period, where outer_repeat = repeat * period * (the middle dims).
/// outer_period 1: one read group (a bias vector, a per-row scalar, a scalar); two groups:
/// e.g. an attention mask [B, 1, 1, S] over [B, H, S, S].
struct BroadcastIndex {
  int64_t repeat = 1, period = 1;
  int64_t outer_repeat = 1, outer_period = 1;

  int64_t at(int64_t i) const {
    return ((i / outer_repeat) % outer_period) * period + (i / repeat) % period;
  }
};

/// An elementwise pass fused into the kernel that produces its input (cpu/fusion.cc):
/// run on each piece of the producer's output right after the producer wrote it, while the
/// piece is still in cache.
class OutputEpilogue {
public:
  virtual ~OutputEpilogue() = default;
  /// Computes elements [begin, begin + len) (flat row-major indices of the producer's
  /// output) of the pass; `io` is the fused step's, whose inputs after the producer's own
  /// operands and outputs after its own result belong to the pass.
  virtual void runRange(const KernelIo &io, int64_t begin, int64_t len) const = 0;
};

class Kernel {
public:
  virtual ~Kernel() = default;
  virtual void run(const KernelIo &io) const = 0;
  /// Elementwise binary kernels: the same op with operand `operand` (0 or 1) read from a
  /// tensor of index.period * index.outer_period elements, output element i using its element
  /// index.at(i) (a broadcast_in_dim folded into the op by the compiler; every element
  /// computed as before). nullptr when the kernel cannot.
  virtual std::unique_ptr<Kernel> withBroadcastOperand(int operand,
                                                       const BroadcastIndex &index) const {
    (void)operand, (void)index;
    return nullptr;
  }

  /// A kernel with one row-major output that it completes in pieces (dot_general: output
  /// tiles) may return a copy of itself that runs `epilogue` over each piece right after
  /// writing it, the same bits as a separate pass. nullptr when it cannot.
  virtual std::unique_ptr<Kernel>
  withEpilogue(std::shared_ptr<const OutputEpilogue> epilogue) const {
    (void)epilogue;
    return nullptr;
  }

  /// View folding (cpu/view_folding.h). A kernel whose output is its operand 0 read through
  /// strides (transpose, slice, reshape) maps `view`, a view of that operand's values in some
  /// tensor, to the view of its output's values in the same tensor, and returns true; false
  /// (view unspecified) when the kernel is no such view or the result is not strided.
  virtual bool outputView(StridedView &view) const {
    (void)view;
    return false;
  }
  /// dot_general: a copy of the kernel that reads operand `operand` (0 or 1) as `view` (of
  /// the operand's shape) of the tensor then passed in its place, every output element
  /// computed as before. nullptr when it cannot.
  virtual std::unique_ptr<Kernel> withOperandView(int operand, const StridedView &view) const {
    (void)operand, (void)view;
    return nullptr;
  }
  /// dot_general: a copy of the kernel that writes its result as `view` (of the result's
  /// shape) of the output tensor it is then given (whose every element the view covers once),
  /// every element computed as before. nullptr when it cannot.
  virtual std::unique_ptr<Kernel> withResultView(const StridedView &view) const {
    (void)view;
    return nullptr;
  }

  /// Row fusion (cpu/row_fusion.h). A reduce of the trailing dims of one input, R rows of
  /// `width` elements -> R results, gives its row width (> 0); 0 for any other kernel.
  virtual int64_t reducedRowWidth() const { return 0; }
  /// Computes results [r, r + count) of such a reduce, the same bits as run(): `rows` points
  /// at the first element of input row r, `init` at the init value, `out` at result r.
  virtual void runReducedRows(const uint8_t *rows, const uint8_t *init, uint8_t *out,
                              int64_t count) const {
    (void)rows, (void)init, (void)out, (void)count;
  }
  /// An elementwise binary kernel with a folded broadcast operand: its index; else nullptr.
  virtual const BroadcastIndex *broadcastIndex() const { return nullptr; }

  /// Loop fusion (cpu/fusion.cc). True for an elementwise kernel: one output whose element i
  /// is computed from element i of each operand alone, except operand broadcastOperand() (a
  /// folded broadcast_in_dim), which is read by element index as a whole tensor.
  virtual bool elementwise() const { return false; }
  /// The operand read through a folded broadcast (Kernel::withBroadcastOperand), or -1.
  virtual int broadcastOperand() const { return -1; }
  /// Computes output elements [begin, begin + len) of an elementwise() kernel, the same bits
  /// run() gives them: in[k] points at element `begin` of operand k, or at the first element
  /// of broadcastOperand(); `out` points at output element `begin`. Never called otherwise.
  virtual void runElements(const uint8_t *const *in, uint8_t *out, int64_t begin,
                           int64_t len) const {
    (void)in, (void)out, (void)begin, (void)len;
  }
};

enum class OutputMode : uint8_t { kPreallocated, kOverwritten, kAssigned };

/// A region compiled for an op, with the range of the op's kernel inputs that carry the
/// region's captured values.
struct RegionRef {
  std::shared_ptr<const Callable> callable;
  size_t capture_begin = 0; // index into KernelIo::in
  size_t capture_count = 0;
};

/// The compile-time view of one op: operand/result types, attributes (the reads of
/// ir::OpAttributeReader: intList, intAttr, boolAttr, prefixed), diagnostics, and
/// compilation of its regions and callees.
class OpView : public ir::OpAttributeReader<OpView> {
public:
  OpView(const ir::Operation &op, std::vector<TensorType> operands, std::vector<TensorType> results,
         Compiler &compiler);

  const ir::Operation &op() const { return op_; }
  const std::string &name() const { return op_.name; }
  const std::vector<TensorType> &operands() const { return operands_; }
  const std::vector<TensorType> &results() const { return results_; }
  const TensorType &operand(size_t i) const { return operands_[i]; }
  const TensorType &result(size_t i) const { return results_[i]; }
  const ir::Attribute *attr(std::string_view attr_name) const { return op_.attr(attr_name); }

  /// InvalidArgument "<loc>: 'op' op " followed by what is streamed in.
  StatusBuilder error() const;
  /// Unimplemented "<loc>: 'op' op " followed by what is streamed in.
  StatusBuilder unsupported() const;
  /// Unimplemented "<loc>: 'op' op element type <t> is not supported by the cpu executor".
  Status unsupportedType(DType t) const;

  /// Checks the operand and result counts (InvalidArgument otherwise).
  Status expectArity(size_t operands, size_t results) const;

  /// Compiles region `index` of the op (one block). Its captured outer values become
  /// extra kernel inputs, reported in the RegionRef.
  Result<RegionRef> compileRegion(size_t index);
  /// Compiles (or reuses) function `callee` of the module.
  Result<std::shared_ptr<const Callable>> compileCallee(std::string_view callee);

  /// Values appended to the operands as kernel inputs (the regions' captures).
  const std::vector<ir::ValueId> &extraInputs() const { return extra_inputs_; }

private:
  const ir::Operation &op_;
  std::vector<TensorType> operands_;
  std::vector<TensorType> results_;
  Compiler &compiler_;
  std::vector<ir::ValueId> extra_inputs_;
};

//===----------------------------------------------------------------------===//
// Registry
//===----------------------------------------------------------------------===//

using PlanFn = Result<std::unique_ptr<Kernel>> (*)(OpView &);

struct KernelEntry {
  PlanFn plan = nullptr;
  OutputMode mode = OutputMode::kPreallocated;
};

class KernelRegistry {
public:
  void add(std::string op_name, PlanFn plan, OutputMode mode = OutputMode::kPreallocated);
  /// The entry for an op name, or nullptr.
  const KernelEntry *find(std::string_view op_name) const;

private:
  std::vector<std::pair<std::string, KernelEntry>> entries_; // sorted by name
};

/// The registry with every kernel family (built once, immutable).
const KernelRegistry &kernelRegistry();

void registerElementwiseKernels(KernelRegistry &r);
void registerComplexPartKernels(KernelRegistry &r);
void registerCompareSelectKernels(KernelRegistry &r);
void registerConvertKernels(KernelRegistry &r);
void registerDataMovementKernels(KernelRegistry &r);
void registerSliceKernels(KernelRegistry &r);
void registerReduceKernels(KernelRegistry &r);
void registerReduceWindowKernels(KernelRegistry &r);
void registerDotGeneralKernels(KernelRegistry &r);
void registerConvolutionKernels(KernelRegistry &r);
void registerGatherKernels(KernelRegistry &r);
void registerScatterKernels(KernelRegistry &r);
void registerSortKernels(KernelRegistry &r);
void registerControlFlowKernels(KernelRegistry &r);
void registerMapKernels(KernelRegistry &r);
void registerTriangularSolveKernels(KernelRegistry &r);
void registerSpecialFunctionKernels(KernelRegistry &r);
void registerFftKernels(KernelRegistry &r);

/// Adapts the kernel planned for `v` to the sub-byte integers (i2, ui2, i4, ui4), which
/// kernels compute as 8-bit integers (sub_byte.cc): the results of an op that writes one
/// (modes kPreallocated, kOverwritten) are wrapped to the bit width after each run, or
/// saturated for a convert from a float. Unimplemented for the ops whose 8-bit result is not
/// the N-bit one (shift_right_logical, popcnt, count_leading_zeros). `kernel` unchanged
/// for any other op. Called by the compiler for every op.
Result<std::unique_ptr<Kernel>> adaptSubByteKernel(OpView &v, std::unique_ptr<Kernel> kernel,
                                                   OutputMode mode);

/// Adapts a plan struct and its run function to the Kernel interface.
template <typename Plan, void (*RunFn)(const Plan &, const KernelIo &)>
class PlannedKernel final : public Kernel {
public:
  explicit PlannedKernel(Plan plan) : plan_(std::move(plan)) {}
  void run(const KernelIo &io) const override { RunFn(plan_, io); }

private:
  Plan plan_;
};

template <typename Plan, Status (*PlanF)(OpView &, Plan &),
          void (*RunF)(const Plan &, const KernelIo &)>
Result<std::unique_ptr<Kernel>> makeKernel(OpView &view) {
  Plan plan;
  RS_RETURN_IF_ERROR(PlanF(view, plan));
  return std::unique_ptr<Kernel>(std::make_unique<PlannedKernel<Plan, RunF>>(std::move(plan)));
}

/// PlannedKernel of an op whose output is a strided view of its operand 0: ViewF(plan, view)
/// is its Kernel::outputView.
template <typename Plan, void (*RunFn)(const Plan &, const KernelIo &),
          bool (*ViewFn)(const Plan &, StridedView &)>
class PlannedViewKernel final : public Kernel {
public:
  explicit PlannedViewKernel(Plan plan) : plan_(std::move(plan)) {}
  void run(const KernelIo &io) const override { RunFn(plan_, io); }
  bool outputView(StridedView &view) const override { return ViewFn(plan_, view); }

private:
  Plan plan_;
};

template <typename Plan, Status (*PlanF)(OpView &, Plan &),
          void (*RunF)(const Plan &, const KernelIo &), bool (*ViewF)(const Plan &, StridedView &)>
Result<std::unique_ptr<Kernel>> makeViewKernel(OpView &view) {
  Plan plan;
  RS_RETURN_IF_ERROR(PlanF(view, plan));
  return std::unique_ptr<Kernel>(
      std::make_unique<PlannedViewKernel<Plan, RunF, ViewF>>(std::move(plan)));
}

//===----------------------------------------------------------------------===//
// Shapes and strided copies
//===----------------------------------------------------------------------===//

/// A strided element copy: out[sum i_d*out_strides[d]] = in[sum i_d*in_strides[d]] for
/// every index i of `shape`, offsets in elements. Element size 1, 2, 4, 8 or 16 bytes.
/// Splits large copies over the context's threads (each tile owns distinct outputs).
struct StridedCopy {
  Shape shape;
  std::vector<int64_t> in_strides;
  std::vector<int64_t> out_strides;
  int64_t in_offset = 0;
  int64_t out_offset = 0;
  int64_t elem_size = 4;

  /// Drops size-1 dims and merges dims contiguous in both operands (fewer, longer loops).
  void simplify();
  /// Copies; `in_delta` and `out_delta` (elements) are added to the planned offsets.
  void run(const RunContext &rc, const uint8_t *in, uint8_t *out, int64_t in_delta = 0,
           int64_t out_delta = 0) const;
  /// The same on the calling thread only (for use inside a tile).
  void runSerial(const uint8_t *in, uint8_t *out, int64_t in_delta = 0,
                 int64_t out_delta = 0) const;
};

/// Fills `n` elements of `elem_size` bytes at `out` with the element at `value`.
void fillElements(uint8_t *out, int64_t n, const uint8_t *value, int64_t elem_size);

/// If `region` is one block `{ %r = "<op>"(%arg0, %arg1) ; return %r }` (arguments in
/// either order), the op's name, else "". Fast paths of reduce-like ops key on it.
std::string_view binaryBodyOp(const ir::Region &region);

/// Unimplemented unless elements of `t` are 1, 2, 4, 8 or 16 bytes (what copies handle).
Status checkElementSize(OpView &v, DType t);

/// Grain of parallel elementwise work: elements per tile (a constant, so tiles depend only
/// on the element count).
constexpr int64_t kElementwiseGrain = 16384;

} // namespace rs::cpu
