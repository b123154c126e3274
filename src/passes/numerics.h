//===- passes/numerics.h - The numerics pass (runtime.numerics) ------------===//
//
// Pins or relaxes the precision of f32 matrix multiplications before compile, on every
// backend (DESIGN.md "Numerics", reference-system.md §3.2, seed/reproducibility.md
// "Numerics"). Matmul-class ops are `stablehlo.dot_general`, `stablehlo.dot` and
// `stablehlo.convolution`; an op is "f32" when both of its first two operands are f32
// tensors (f16/bf16/f64/integer ops are left alone: TF32 only affects f32 inputs).
//
//   f32   every f32 matmul-class op without an explicit `algorithm` gets
//         precision_config = [HIGHEST, HIGHEST] (already all-HIGHEST ops are untouched);
//         every dot_general whose `#stablehlo.dot_algorithm` uses TF32 is rewritten to the
//         all-f32 algorithm (lhs/rhs/accumulation f32, one component each, one primitive
//         operation, precise accumulation) and keeps its precision_config. Then
//         verifyF32Pinned() proves the pin: no f32 matmul-class op is left at DEFAULT (or
//         HIGH) precision without a non-TF32 algorithm; otherwise the pass fails and the
//         model does not load. A non-TF32 explicit algorithm (e.g. BF16_BF16_F32_X6) states
//         the exporter's intent and is kept. Opaque ops whose internals the pin cannot see
//         (`stablehlo.custom_call`, `stablehlo.cholesky`, `stablehlo.triangular_solve`)
//         are counted and named in the outcome as UNGOVERNED.
//   auto  on a target without TF32 (NumericsOptions::target_has_tf32 false: the CPU
//         backend, CUDA compute capability < 8.0), explicit TF32 algorithms are removed,
//         so the op falls back to its precision_config (plain f32 there); on a TF32 target
//         the module is untouched and DEFAULT resolves to TF32.
//   tf32  the module is untouched; FailedPrecondition when the target has no TF32 (the
//         worker's startup gate reports this first).
//
// Every function and every nested region is walked in program order; the pass collects
// the ops to change, then mutates them. Idempotent: a second run changes nothing.
// Changed attributes are properties (inherent attributes) and keep the property list
// sorted by name, so printGeneric() prints them and parseModule() reads them back.
//
// Errors: FailedPrecondition "<file>:<line>:<col>: 'stablehlo.dot_general' op numerics
// f32: f32 operands left at precision DEFAULT" when the check fails (the first offending
// op, with the count of all of them); FailedPrecondition for tf32 on a target without it;
// InvalidArgument for a malformed precision_config or algorithm attribute, and the
// verifier's (ir/verify.h) when the rewritten module breaks an op's constraints, which
// the pass checks after it ran, as after every pass.
// Thread safety: free functions over the module they are given; no global state.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/ir.h"
#include "support/status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rs::passes {

/// `runtime.numerics` (the pass does not depend on config/; the runtime maps it).
enum class NumericsMode : uint8_t { kF32, kAuto, kTf32 };

/// "f32", "auto" or "tf32".
std::string_view numericsModeName(NumericsMode mode);

struct NumericsOptions {
  NumericsMode mode = NumericsMode::kAuto;
  /// Whether the compile target runs f32 matmuls on TF32 tensor cores at DEFAULT
  /// precision: the device vendor's TF32 rule (pjrt/vendor_profile.h; CUDA: compute
  /// capability 8.0 or higher). False for the CPU backend.
  bool target_has_tf32 = false;
};

/// What the pass did; counters add up over every program of a model (merge()).
struct NumericsReport {
  NumericsMode mode = NumericsMode::kAuto;
  bool target_has_tf32 = false;
  /// f32 ops that got precision_config = [HIGHEST, HIGHEST] (mode f32).
  struct OpsPinned {
    int64_t dot_general = 0; // stablehlo.dot_general and the legacy stablehlo.dot
    int64_t convolution = 0; // stablehlo.convolution
    int64_t total() const { return dot_general + convolution; }
  } ops_pinned;
  /// TF32 dot algorithms rewritten to all-f32 (mode f32).
  int64_t algorithms_rewritten = 0;
  /// TF32 dot algorithms removed because the target lacks TF32 (mode auto).
  int64_t algorithms_stripped = 0;
  /// Names of the opaque ops seen (mode f32), one entry per op, in program order.
  std::vector<std::string> opaque_ops;

  /// Adds `other`'s counters (same mode and target) to this report.
  void merge(const NumericsReport &other);
  /// The `numerics=` text of the `model loaded` line, in the reference's wording
  /// (reference-system.md §3.2): "f32 (rewrote 1 tf32 algorithm(s), pinned 2 dot_general,
  /// pinned 3 convolution, UNGOVERNED opaque ops: stablehlo.custom_call)",
  /// "f32 (nothing to pin)", "tf32", "auto (tf32 active)", "auto (f32: target lacks
  /// TF32)", "auto (stripped 1 tf32 algorithm(s): target lacks TF32)".
  std::string outcome() const;
};

/// Runs the numerics pass on `module` in place (see the file comment).
Result<NumericsReport> pinNumerics(ir::Module &module, const NumericsOptions &options);

/// The check that follows the f32 pin: OK when every f32 matmul-class op of `module` has
/// precision_config all HIGHEST or (dot_general) an explicit non-TF32 algorithm;
/// FailedPrecondition naming the first offending op's location and kind otherwise.
Status verifyF32Pinned(const ir::Module &module);

} // namespace rs::passes
