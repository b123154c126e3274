//===- cpu/executor.h - The built-in CPU executor for StableHLO ------------===//
//
// Compiles a function of a parsed StableHLO module (ir/ir.h) into an execution plan and
// runs it on host tensors. compile() walks the entry function, its callees (func.call)
// and every nested region once: each op gets a kernel whose attributes, shapes and dtypes
// are decoded and checked then (STYLE.md rule 7), so run() has no op-level error path.
//
// Shapes are row-major and static; a scalar is rank 0. Element types: f32, f64, i1,
// i8..i64 and ui8..ui64 for arithmetic; data movement ops also take f16 and bf16.
// Arithmetic follows the StableHLO spec (openxla/stablehlo docs/spec.md) and, where the
// spec leaves a choice, XLA: integer x / 0 = -1 (all ones), INT_MIN / -1 = INT_MIN,
// x % 0 = x, INT_MIN % -1 = 0; shifts by >= the bit width give 0 (arithmetic right shift:
// the sign); float -> int conversion truncates, saturates and maps NaN to 0; f32 math is
// done in f32 (dot_general and convolution accumulate in f32).
//
// Determinism: for the same inputs a Program gives bit-identical outputs on every run and
// for any CpuContext thread count. Work is split only over independent output elements,
// in tiles whose boundaries depend on the shapes alone, and every reduction keeps one
// order. Computation runs in the default floating-point environment (no flush-to-zero),
// whatever the caller's. (Results may differ between batch sizes, as the tiles do.)
//
// Memory: intermediates are freed right after their last use; arguments (which may be
// read-only views of mapped weights) are never written; outputs never alias arguments or
// the module's constants.
//
// Errors of compile(): the verifier's InvalidArgument "<file>:<line>:<col>: error:
// 'stablehlo.foo' op <what>" when an op breaks a StableHLO constraint (ir/verify.h: compile
// verifies the module first, so the kernel plans see verified ops only); NotFound when the
// entry function is missing; Unimplemented
// "<file>:<line>:<col>: 'stablehlo.foo' op is not supported by the cpu executor" for an
// unsupported op (or "... op element type f16 is not supported ...", and so on);
// InvalidArgument "<file>:<line>:<col>: 'stablehlo.foo' op <what>" for a malformed op. An op
// of a portable artifact is located as "<file>: byte <offset> (<source>:<line>:<col>)"
// (ir::Location::toString()). ResourceExhausted when one value's bytes overflow int64 or
// exceed the memory limit (CpuOptions::memory_limit_bytes), or when the entry function's
// intermediate buffers live at once do.
// Errors of run(): InvalidArgument when the argument count, a dtype or a shape differs
// from the entry function's signature; ResourceExhausted when allocating the call's
// buffers fails (std::bad_alloc).
//
// Thread safety: a Program is immutable after compile(); run() may be called from several
// threads at once (per-run state is local to the call).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/context.h"
#include "ir/ir.h"
#include "support/status.h"
#include "support/tensor.h"

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rs::cpu {

/// A static tensor type: element type and row-major shape.
struct TensorType {
  DType dtype = DType::kInvalid;
  Shape shape;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numElements() const { return elementCount(shape); }
  int64_t byteSize() const { return numElements() * dtypeSize(dtype); }
  bool operator==(const TensorType &o) const { return dtype == o.dtype && shape == o.shape; }
  bool operator!=(const TensorType &o) const { return !(*this == o); }
  /// MLIR spelling, "tensor<2x3xf32>".
  std::string toString() const;
};

struct Callable; // a compiled function body or region (cpu/compiler.h)

class Program {
public:
  /// Compiles function `entry` of `module` (see the file comment for errors). The Program
  /// keeps no reference to `module`; it keeps `ctx` alive.
  static Result<std::unique_ptr<Program>> compile(const ir::Module &module, std::string_view entry,
                                                  std::shared_ptr<CpuContext> ctx);

  /// Runs the program. `args` must match inputTypes() in count, dtype and shape
  /// (InvalidArgument otherwise, naming the argument). Returns one owned tensor per result.
  Result<std::vector<Tensor>> run(std::span<const Tensor> args) const;

  const std::vector<TensorType> &inputTypes() const { return input_types_; }
  const std::vector<TensorType> &outputTypes() const { return output_types_; }
  const CpuContext &context() const { return *ctx_; }

private:
  Program() = default;

  std::shared_ptr<CpuContext> ctx_;
  std::shared_ptr<const Callable> entry_;
  std::vector<TensorType> input_types_;
  std::vector<TensorType> output_types_;
  std::string name_;
  std::string file_;       // the module's file, for errors
  int64_t peak_bytes_ = 0; // plannedPeakBytes() of entry_
  // Byte ranges of the constants the program holds: an output that lies in one is copied.
  std::vector<std::pair<const uint8_t *, const uint8_t *>> constant_ranges_;
};

} // namespace rs::cpu
