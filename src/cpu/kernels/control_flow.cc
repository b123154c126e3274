//===- cpu/kernels/control_flow.cc - while, case, if, func.call, composite -===//
//
// stablehlo.while: operands[N] -> results[N] (same types); cond (N args) -> i1 scalar,
// body (N args) -> N values; loops while cond holds (spec "while").
// stablehlo.case: index (i32 scalar) and K branches without arguments, each returning
// the results; an index outside [0, K) selects the last branch (spec "case").
// stablehlo.if: pred (i1 scalar), true_branch, false_branch (spec "if").
// func.call: callee (@symbol) compiled once and shared; argument and result types match
// the callee's signature. stablehlo.composite: a call of its `decomposition`.
// stablehlo.optimization_barrier: results are the operands.
// Regions may use values of enclosing scopes (passed as captured kernel inputs). Outputs
// are assigned from the region results (they may share storage with inputs, which no
// kernel ever writes). Any element type. The ops are verified (ir/verify_control_flow.cc:
// the region and callee signatures, while_c1..c3, case_c1..c3, if_c1..c3); the plans
// compile the regions. Errors at plan time: InvalidArgument for a call without a callee.
//
//===----------------------------------------------------------------------===//
#include "cpu/compiler.h"
#include "cpu/kernels/kernel.h"

namespace rs::cpu {
namespace {

std::span<const Tensor *const> capturesOf(const RegionRef &r, const KernelIo &io) {
  return io.in.subspan(r.capture_begin, r.capture_count);
}

void assignOutputs(std::vector<Tensor> results, const KernelIo &io) {
  for (size_t i = 0; i < results.size(); ++i)
    io.out[i] = std::move(results[i]);
}

//===----------------------------------------------------------------------===//
// while
//===----------------------------------------------------------------------===//

struct WhilePlan {
  size_t n = 0;
  RegionRef cond, body;
};

Status planWhile(OpView &v, WhilePlan &p) {
  p.n = v.operands().size();
  RS_ASSIGN_OR_RETURN(p.cond, v.compileRegion(0));
  RS_ASSIGN_OR_RETURN(p.body, v.compileRegion(1));
  return Status::ok();
}

void runWhile(const WhilePlan &p, const KernelIo &io) {
  std::vector<Tensor> state;
  state.reserve(p.n);
  for (size_t i = 0; i < p.n; ++i)
    state.push_back(*io.in[i]);
  for (;;) {
    std::vector<Tensor> c = runCallable(*p.cond.callable, state, capturesOf(p.cond, io), io.rc);
    if (!*c[0].dataAs<bool>())
      break;
    state = runCallable(*p.body.callable, state, capturesOf(p.body, io), io.rc);
  }
  assignOutputs(std::move(state), io);
}

//===----------------------------------------------------------------------===//
// case and if
//===----------------------------------------------------------------------===//

struct BranchPlan {
  std::vector<RegionRef> branches;
  bool is_if = false;
};

Status planBranches(OpView &v, BranchPlan &p) {
  for (size_t i = 0; i < v.op().regions.size(); ++i) {
    RS_ASSIGN_OR_RETURN(RegionRef r, v.compileRegion(i));
    p.branches.push_back(std::move(r));
  }
  return Status::ok();
}

Status planCase(OpView &v, BranchPlan &p) { return planBranches(v, p); }

Status planIf(OpView &v, BranchPlan &p) {
  p.is_if = true;
  return planBranches(v, p);
}

void runBranches(const BranchPlan &p, const KernelIo &io) {
  const int64_t k = static_cast<int64_t>(p.branches.size());
  int64_t index;
  if (p.is_if) {
    index = *io.in[0]->dataAs<bool>() ? 0 : 1;
  } else {
    index = *io.in[0]->dataAs<int32_t>();
    if (index < 0 || index >= k)
      index = k - 1;
  }
  const RegionRef &r = p.branches[static_cast<size_t>(index)];
  assignOutputs(runCallable(*r.callable, {}, capturesOf(r, io), io.rc), io);
}

//===----------------------------------------------------------------------===//
// func.call and optimization_barrier
//===----------------------------------------------------------------------===//

struct CallPlan {
  std::shared_ptr<const Callable> callee;
};

/// func.call's `callee`, or stablehlo.composite's `decomposition` (spec "composite": the op
/// has the semantics of a call to its decomposition; its name and composite_attributes do
/// not change the result).
Status planCallOf(OpView &v, CallPlan &p, std::string_view attr_name) {
  const ir::Attribute *callee = v.attr(attr_name);
  if (!callee || callee->kind != ir::AttrKind::kSymbolRef)
    return v.error() << "is missing attribute '" << attr_name << "'";
  RS_ASSIGN_OR_RETURN(p.callee, v.compileCallee(callee->str));
  return Status::ok();
}

Status planCall(OpView &v, CallPlan &p) { return planCallOf(v, p, "callee"); }
Status planComposite(OpView &v, CallPlan &p) { return planCallOf(v, p, "decomposition"); }

void runCall(const CallPlan &p, const KernelIo &io) {
  std::vector<Tensor> args;
  args.reserve(io.in.size());
  for (const Tensor *t : io.in)
    args.push_back(*t);
  assignOutputs(runCallable(*p.callee, args, {}, io.rc), io);
}

struct BarrierPlan {};

Status planBarrier(OpView &, BarrierPlan &) { return Status::ok(); }

void runBarrier(const BarrierPlan &, const KernelIo &io) {
  for (size_t i = 0; i < io.out.size(); ++i)
    io.out[i] = *io.in[i];
}

} // namespace

void registerControlFlowKernels(KernelRegistry &r) {
  r.add("stablehlo.while", &makeKernel<WhilePlan, planWhile, runWhile>, OutputMode::kAssigned);
  r.add("stablehlo.case", &makeKernel<BranchPlan, planCase, runBranches>, OutputMode::kAssigned);
  r.add("stablehlo.if", &makeKernel<BranchPlan, planIf, runBranches>, OutputMode::kAssigned);
  r.add("func.call", &makeKernel<CallPlan, planCall, runCall>, OutputMode::kAssigned);
  r.add("stablehlo.composite", &makeKernel<CallPlan, planComposite, runCall>,
        OutputMode::kAssigned);
  r.add("stablehlo.optimization_barrier", &makeKernel<BarrierPlan, planBarrier, runBarrier>,
        OutputMode::kAssigned);
}

} // namespace rs::cpu
