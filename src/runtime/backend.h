//===- runtime/backend.h - The Backend interface ---------------------------===//
//
// What every execution backend implements (the built-in CPU executor in cpu/, XLA
// through PJRT in pjrt/), so everything above runtime/ is backend-agnostic.
//
// A Backend compiles a parsed module's `main` into an Executable. An Executable runs
// `main(args...)` on host tensors (row-major) and returns host tensors, one per result.
// Arguments are the model inputs followed by the weights (bundle calling convention).
// Thread safety: compile() may be called from any thread; one Executable may be run
// from several threads at once (per-run state is local to the call).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/ir.h"
#include "support/status.h"
#include "support/tensor.h"

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace rs::runtime {

/// Facts about the device a backend runs on (for logs, metadata and evidence).
struct DeviceInfo {
  std::string platform;    // "cpu" or "cuda"
  std::string device_kind; // CPU model name or GPU name
  int device_ordinal = 0;
};

/// A compiled program. execute() errors: InvalidArgument when argument count, dtypes or
/// shapes differ from the program's signature; Internal for a backend failure.
class Executable {
public:
  virtual ~Executable() = default;
  /// Runs the program. `args` must match the signature of `main` exactly.
  virtual Result<std::vector<Tensor>> execute(std::span<const Tensor> args) const = 0;
};

struct CompileOptions {
  /// Name of the entry function.
  std::string entry = "main";
};

class Backend {
public:
  virtual ~Backend() = default;
  /// Compiles `module` (already verified and through passes). Errors: Unimplemented with
  /// the op name and location for an op the backend does not support; InvalidArgument
  /// for a malformed program.
  virtual Result<std::unique_ptr<Executable>> compile(const ir::Module &module,
                                                      const CompileOptions &options) = 0;
  virtual DeviceInfo deviceInfo() const = 0;
};

} // namespace rs::runtime
