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
#include <string_view>
#include <utility>
#include <vector>

namespace rs::runtime {

/// Facts about the device a backend runs on (for logs, metadata and evidence).
struct DeviceInfo {
  std::string platform;    // "cpu" or "cuda"
  std::string device_kind; // CPU model name or GPU name
  int device_ordinal = 0;
  /// The device's architecture as its vendor profile reads it (pjrt/vendor_profile.h): CUDA
  /// compute capability "major.minor" ("9.0" on the H200); empty on the CPU.
  std::string compute_capability;
  /// Whether DEFAULT-precision f32 matmuls run in TF32 here (the vendor profile's TF32 rule
  /// on compute_capability; false on the CPU): the numerics pass's target_has_tf32.
  bool has_tf32 = false;
  /// What produced the executables, for executable-cache keys and logs: "" for the
  /// built-in CPU executor; for PJRT the plugin path, API version and its attributes.
  std::string backend_version;
  /// How a run's completion is seen (pjrt::DeviceDescription::completion); "" on the CPU.
  /// Not part of backend_version: it changes no executable and no result.
  std::string completion;
};

/// Tensors placed once where a backend runs and reused by every run, e.g. a model's
/// weights (DESIGN.md "Request path": no per-request weight copy). Made by
/// Backend::upload(); passed to Executable::executeWithResident() of executables of the
/// same backend. Immutable; concurrent runs may share them.
class ResidentTensors {
public:
  virtual ~ResidentTensors() = default;
  virtual size_t size() const = 0;
  /// The tensors when they stay on the host (the default Backend::upload()); nullptr when
  /// they live in device memory.
  virtual const std::vector<Tensor> *hostTensors() const { return nullptr; }
  /// Identifies the backend instance that made them (nullptr for host tensors).
  virtual const void *owner() const { return nullptr; }
};

/// The default ResidentTensors: the host tensors themselves (shared storage, no copy).
class HostResidentTensors final : public ResidentTensors {
public:
  explicit HostResidentTensors(std::vector<Tensor> tensors) : tensors_(std::move(tensors)) {}
  size_t size() const override { return tensors_.size(); }
  const std::vector<Tensor> *hostTensors() const override { return &tensors_; }

private:
  std::vector<Tensor> tensors_;
};

/// A compiled program. execute() errors: InvalidArgument when argument count, dtypes or
/// shapes differ from the program's signature; Internal for a backend failure.
class Executable {
public:
  virtual ~Executable() = default;
  /// Runs the program. `args` must match the signature of `main` exactly.
  virtual Result<std::vector<Tensor>> execute(std::span<const Tensor> args) const = 0;

  /// Runs main(inputs..., resident...): `inputs` from the host, then the tensors of
  /// `resident` (Backend::upload() of the same backend) in their order. The default
  /// handles host-resident tensors by concatenating and calling execute(); a device
  /// backend passes its device buffers without copying them. InvalidArgument when
  /// `resident` came from another backend.
  virtual Result<std::vector<Tensor>> executeWithResident(std::span<const Tensor> inputs,
                                                          const ResidentTensors &resident) const {
    const std::vector<Tensor> *host = resident.hostTensors();
    if (host == nullptr)
      return invalidArgument() << "resident tensors were uploaded by another backend";
    std::vector<Tensor> args(inputs.begin(), inputs.end());
    args.insert(args.end(), host->begin(), host->end());
    return execute(args);
  }

  /// The compiled program as bytes for the executable cache (DESIGN.md "Caches"), loaded
  /// again by Backend::deserialize(). Unimplemented where a backend cannot (the CPU one).
  virtual Result<std::string> serialize() const {
    return unimplemented() << "this backend does not serialize executables";
  }
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

  /// Places `tensors` for reuse by every run (see ResidentTensors). The default keeps the
  /// host tensors (no copy); PJRT uploads them to device memory once. Errors: the
  /// backend's (e.g. ResourceExhausted when device memory is full).
  virtual Result<std::shared_ptr<const ResidentTensors>> upload(std::span<const Tensor> tensors) {
    return std::shared_ptr<const ResidentTensors>(
        std::make_shared<HostResidentTensors>(std::vector<Tensor>(tensors.begin(), tensors.end())));
  }

  /// Loads bytes from Executable::serialize() made by the same backend build on the same
  /// device kind; `options` as given to the compile() that made them. Unimplemented by
  /// default; a corrupt or foreign blob gives the backend's error (never a crash).
  virtual Result<std::unique_ptr<Executable>> deserialize(std::string_view bytes,
                                                          const CompileOptions &options) {
    (void)bytes;
    (void)options;
    return unimplemented() << "this backend does not load serialized executables";
  }
};

} // namespace rs::runtime
