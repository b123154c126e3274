//===- pjrt/client.h - PJRT client, device buffers and executables --------===//
//
// RAII wrappers over the PJRT C API objects a server needs (`../shared/reference/pjrt.md`
// sections 1.5, 1.6 and 6):
//
//   Client            one PJRT_Client bound to one device (runtime.device_ordinal). On a
//                     CUDA plugin the client is created with visible_devices = [ordinal]
//                     so it allocates on that GPU only; memory_fraction / preallocate
//                     are the plugin's create options (runtime.mem_fraction,
//                     runtime.preallocate).
//   DeviceBuffer      one PJRT_Buffer on the client's device (a tensor in device memory).
//                     Weights are uploaded once as DeviceBuffers and passed to every run.
//   LoadedExecutable  one compiled program. execute() takes device buffers in `main`'s
//                     argument order (inputs then weights) and returns device buffers,
//                     one per result; run() also reads the results back to the host.
//
// Tensors are row-major, dense (the default PJRT layout); dtypes map one-to-one to
// PJRT_Buffer_Type (bool = PRED, one byte per element). Programs are MLIR text (pretty or
// generic StableHLO) or MLIR bytecode, compiled with format "mlir"; the entry function
// must be `func.func public @main`.
//
// Lifetime: buffers and executables keep their Client (and the Plugin) alive, so PJRT
// objects are always destroyed before the client that made them. Every PJRT_Error and
// PJRT_Event returned by the plugin is destroyed.
//
// Errors: the plugin's errors keep their code and message, prefixed with the PJRT
// function ("PJRT_Client_Compile: ..."); InvalidArgument for a dtype PJRT cannot hold or
// a wrong argument count; NotFound when the requested device ordinal is not present.
//
// Thread safety: all methods are const and may be called concurrently (PJRT is
// thread-safe); a DeviceBuffer may be an argument of concurrent runs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pjrt/completion_poller.h"
#include "pjrt/host_staging.h"
#include "pjrt/plugin.h"
#include "pjrt/vendor_profile.h"
#include "support/run_profile.h"
#include "support/status.h"
#include "support/tensor.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rs::pjrt {

class Client;

/// The PJRT element type for `dtype`, or INVALID.
capi::PJRT_Buffer_Type toPjrtType(DType dtype);
/// The DType for a PJRT element type, or kInvalid.
DType fromPjrtType(capi::PJRT_Buffer_Type type);

struct ClientOptions {
  /// CUDA ordinal of the device to use (runtime.device_ordinal). The client is created
  /// with visible_devices = [device_ordinal]; -1 = every device visible, use the first.
  int device_ordinal = 0;
  /// Fraction of device memory the allocator may use (runtime.mem_fraction), in (0, 1];
  /// unset = the plugin's default (0.75).
  std::optional<double> memory_fraction;
  /// Whether the allocator claims memory_fraction at client creation
  /// (runtime.preallocate); unset = the plugin's default (true).
  std::optional<bool> preallocate;
  /// How long a thread waiting for a PJRT event (an execution, an upload, a read-back) polls
  /// PJRT_Event_IsReady before it blocks in PJRT_Event_Await (runtime.event_spin_us); 0 =
  /// block at once. See Plugin::awaitEvent.
  std::chrono::microseconds event_spin{0};
  /// Most bytes of page-locked staging memory for request uploads (pjrt/host_staging.h);
  /// 0 = upload from the request's own memory.
  size_t staging_bytes = size_t{256} << 20;
  /// The plugin's vendor (runtime.backend), which reads the device's capability from its
  /// attributes; nullptr = the profile of the platform the plugin reports, if any.
  const VendorProfile *vendor = nullptr;
  /// Whether runHost() may see a program finish through the vendor's CompletionPoller
  /// (pjrt/completion_poller.h) instead of the PJRT completion event, where the vendor
  /// has one that works here.
  bool poll_completion = true;
};

/// What the plugin reports about the client and its device.
struct DeviceDescription {
  std::string platform_name;          // "cuda"
  std::string platform_version;       // "cuda 13000"
  std::string device_kind;            // "NVIDIA H200"
  int device_id = 0;                  // PJRT global device id
  int local_hardware_id = -1;         // CUDA ordinal, -1 if not reported
  std::string compute_capability;     // "9.0" (VendorProfile::deviceCapability); "" if unknown
  std::vector<NamedValue> attributes; // every DeviceDescription attribute
  /// How the client sees a program finish: CompletionPoller::describe(), or "PJRT events
  /// (<why no poller>)".
  std::string completion;
};

/// A tensor in device memory. Move-only; destroying it frees the device memory.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer &&o) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&o) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer();

  DType dtype() const { return dtype_; }
  const Shape &shape() const { return shape_; }
  int64_t byteSize() const { return elementCount(shape_) * dtypeSize(dtype_); }
  bool valid() const { return raw_ != nullptr; }
  capi::PJRT_Buffer *raw() const { return raw_; }

  /// Copies the buffer to a new owned host tensor (waits for pending writes).
  Result<Tensor> toHost() const;

private:
  friend class Client;
  friend class LoadedExecutable;
  DeviceBuffer(std::shared_ptr<const Client> client, capi::PJRT_Buffer *raw, DType dtype,
               Shape shape);
  void reset();

  std::shared_ptr<const Client> client_;
  capi::PJRT_Buffer *raw_ = nullptr;
  DType dtype_ = DType::kInvalid;
  Shape shape_;
};

/// A compiled program loaded on the client's device. Move-only.
class LoadedExecutable {
public:
  LoadedExecutable(LoadedExecutable &&o) noexcept;
  LoadedExecutable &operator=(LoadedExecutable &&o) noexcept;
  LoadedExecutable(const LoadedExecutable &) = delete;
  LoadedExecutable &operator=(const LoadedExecutable &) = delete;
  ~LoadedExecutable();

  /// Results of `main` per run.
  size_t numOutputs() const { return num_outputs_; }
  /// Whether every result lands in host memory (memory kind "pinned_host", as compiled from
  /// a program whose results carry `mhlo.memory_kind = "pinned_host"`): runHost() then
  /// returns tensors that view the results where the program wrote them once the run has
  /// completed (each holds its result buffer until the tensor and its views are gone),
  /// instead of copying each from the device after it.
  bool resultsInHostMemory() const { return host_results_; }

  /// Runs the program on `args` (main's arguments in order) and waits until it has
  /// finished; returns one device buffer per result. Nothing is donated: the arguments
  /// stay valid. Errors: the plugin's (bad argument count or shapes included).
  Result<std::vector<DeviceBuffer>> execute(std::span<const DeviceBuffer *const> args) const;
  /// execute() and then every result read back to the host.
  Result<std::vector<Tensor>> run(std::span<const DeviceBuffer *const> args) const;
  /// Uploads `host_args`, runs main(host_args..., device_args...) and reads every result
  /// back with a single wait: the uploads, the run and the read-backs are queued back to
  /// back instead of each waited for in turn. Same results as Client::upload(), execute()
  /// and DeviceBuffer::toHost(). The host tensors must stay alive during the call only.
  /// Fills the thread's current RunProfile (support/run_profile.h) when one is installed.
  Result<std::vector<Tensor>> runHost(std::span<const Tensor> host_args,
                                      std::span<const DeviceBuffer *const> device_args) const;

  /// The executable's bytes (PJRT_Executable_Serialize) for the executable cache; load
  /// them with Client::deserialize() on the same plugin build and GPU model only.
  Result<std::string> serialize() const;
  /// PJRT_Executable_Fingerprint, or Unimplemented where the plugin has none.
  Result<std::string> fingerprint() const;

private:
  friend class Client;
  LoadedExecutable(std::shared_ptr<const Client> client, capi::PJRT_LoadedExecutable *raw,
                   size_t num_outputs);
  /// Launches the program; owns the outputs. `done` (optional) receives the completion
  /// event, which the caller must await or destroy.
  Result<std::vector<DeviceBuffer>> launch(std::span<capi::PJRT_Buffer *const> args,
                                           capi::PJRT_Event **done) const;
  void reset();

  /// runHost()'s read of results in host memory, after `done` (the completion event);
  /// marks the execute and readback stages on `stages`.
  Result<std::vector<Tensor>> readHostResults(std::vector<DeviceBuffer> results,
                                              capi::PJRT_Event *done, StageClock *stages) const;

  std::shared_ptr<const Client> client_;
  capi::PJRT_LoadedExecutable *raw_ = nullptr;
  size_t num_outputs_ = 0;
  bool host_results_ = false;
};

/// A PJRT client bound to one device.
class Client : public std::enable_shared_from_this<Client> {
public:
  /// Creates the client and picks its device. Errors: the plugin's (e.g. no GPU);
  /// NotFound "device ordinal N not found; devices: 0, 1" when the ordinal is absent;
  /// InvalidArgument for memory_fraction outside (0, 1].
  static Result<std::shared_ptr<const Client>> create(std::shared_ptr<const Plugin> plugin,
                                                      const ClientOptions &options);
  ~Client();
  Client(const Client &) = delete;
  Client &operator=(const Client &) = delete;

  const Plugin &plugin() const { return *plugin_; }
  const DeviceDescription &device() const { return device_; }
  /// Plugin::awaitEvent with this client's event_spin.
  Status awaitEvent(capi::PJRT_Event *event, std::string_view what) const;

  /// Copies `tensor` into a new device buffer (waits until the host bytes were read).
  Result<DeviceBuffer> upload(const Tensor &tensor) const;

  /// Compiles MLIR `program` (text or bytecode) with serialized CompileOptionsProto
  /// bytes (pjrt/compile_options.h).
  Result<LoadedExecutable> compile(std::string_view program,
                                   std::string_view compile_options) const;
  /// Loads bytes from LoadedExecutable::serialize().
  Result<LoadedExecutable> deserialize(std::string_view bytes) const;

  capi::PJRT_Client *raw() const { return raw_; }
  capi::PJRT_Device *rawDevice() const { return device_raw_; }

private:
  friend class LoadedExecutable;
  Client() = default;
  Result<LoadedExecutable> wrapExecutable(capi::PJRT_LoadedExecutable *raw) const;
  /// Starts an upload of `data` (dtype and shape of `tensor`; `tensor.data()` when null);
  /// `*done` receives the event that fires once the host bytes were read (the caller
  /// awaits or destroys it; the bytes must stay untouched until then).
  Result<DeviceBuffer> startUpload(const Tensor &tensor, capi::PJRT_Event **done,
                                   const void *data = nullptr) const;
  /// The staging pool for request uploads, or nullptr.
  HostStaging *staging() const { return staging_.get(); }
  /// The vendor's completion poller, or nullptr.
  const CompletionPoller *completionPoller() const { return completion_.get(); }
  std::chrono::microseconds eventSpin() const { return event_spin_; }
  Result<DeviceBuffer> wrapBuffer(capi::PJRT_Buffer *raw) const;

  std::shared_ptr<const Plugin> plugin_;
  capi::PJRT_Client *raw_ = nullptr;
  capi::PJRT_Device *device_raw_ = nullptr;
  DeviceDescription device_;
  std::chrono::microseconds event_spin_{0};
  std::unique_ptr<HostStaging> staging_;         // destroyed before the PJRT client
  std::unique_ptr<CompletionPoller> completion_; // nullptr: wait on PJRT events
};

} // namespace rs::pjrt
