//===- pjrt/loaded_executable.cc - Running a compiled program -------------===//
//
// LoadedExecutable's lifetime, execute() and run() over device buffers, runHost() with
// staged uploads and read-backs (or results the program wrote to pinned host memory), and
// the serialised bytes and fingerprint of the executable.
//
//===----------------------------------------------------------------------===//
#include "pjrt/client.h"

#include "pjrt/client_impl.h"

#include <cstring>
#include <numeric>
#include <utility>

namespace rs::pjrt {

using namespace capi;
using detail::withExecutable;

LoadedExecutable::LoadedExecutable(std::shared_ptr<const Client> client, PJRT_LoadedExecutable *raw,
                                   size_t num_outputs)
    : client_(std::move(client)), raw_(raw), num_outputs_(num_outputs) {}

LoadedExecutable::LoadedExecutable(LoadedExecutable &&o) noexcept
    : client_(std::move(o.client_)), raw_(std::exchange(o.raw_, nullptr)),
      num_outputs_(o.num_outputs_), host_results_(o.host_results_) {}

LoadedExecutable &LoadedExecutable::operator=(LoadedExecutable &&o) noexcept {
  if (this != &o) {
    reset();
    client_ = std::move(o.client_);
    raw_ = std::exchange(o.raw_, nullptr);
    num_outputs_ = o.num_outputs_;
    host_results_ = o.host_results_;
  }
  return *this;
}

LoadedExecutable::~LoadedExecutable() { reset(); }

void LoadedExecutable::reset() {
  if (raw_ != nullptr) {
    PJRT_LoadedExecutable_Destroy_Args args{};
    args.struct_size = sizeof args;
    args.executable = raw_;
    (void)client_->plugin().call(Slot::kLoadedExecutableDestroy, &args,
                                 "PJRT_LoadedExecutable_Destroy");
    raw_ = nullptr;
  }
}

Result<std::vector<DeviceBuffer>> LoadedExecutable::launch(std::span<PJRT_Buffer *const> args,
                                                           PJRT_Event **done) const {
  const Plugin &plugin = client_->plugin();
  std::vector<int64_t> keep(args.size());
  std::iota(keep.begin(), keep.end(), int64_t{0});
  std::vector<PJRT_Buffer *> outs(num_outputs_, nullptr);
  PJRT_Buffer *const *arg_list = args.data();
  PJRT_Buffer **out_list = outs.data();

  PJRT_ExecuteOptions options{};
  options.struct_size = sizeof options;
  options.non_donatable_input_indices = keep.data();
  options.num_non_donatable_input_indices = keep.size();

  PJRT_LoadedExecutable_Execute_Args exec{};
  exec.struct_size = sizeof exec;
  exec.executable = raw_;
  exec.options = &options;
  exec.argument_lists = &arg_list;
  exec.num_devices = 1;
  exec.num_args = args.size();
  exec.output_lists = &out_list;
  exec.device_complete_events = done;
  RS_RETURN_IF_ERROR(
      plugin.call(Slot::kLoadedExecutableExecute, &exec, "PJRT_LoadedExecutable_Execute"));

  // Own every output before anything can fail, so none leaks.
  std::vector<DeviceBuffer> results;
  results.reserve(outs.size());
  Status wrap_status;
  for (PJRT_Buffer *raw : outs) {
    if (!wrap_status.isOk() || raw == nullptr) {
      if (raw != nullptr)
        (void)DeviceBuffer(client_, raw, DType::kInvalid, {}); // destroys it
      continue;
    }
    auto wrapped = client_->wrapBuffer(raw);
    if (!wrapped.isOk()) {
      wrap_status = wrapped.status();
      continue;
    }
    results.push_back(std::move(wrapped).value());
  }
  RS_RETURN_IF_ERROR(wrap_status);
  if (results.size() != num_outputs_)
    return internalError() << "PJRT_LoadedExecutable_Execute returned " << results.size()
                           << " outputs, expected " << num_outputs_;
  return results;
}

Result<std::vector<DeviceBuffer>>
LoadedExecutable::execute(std::span<const DeviceBuffer *const> args) const {
  std::vector<PJRT_Buffer *> arg_ptrs;
  arg_ptrs.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == nullptr || !args[i]->valid())
      return invalidArgument() << "argument " << i << " is not a device buffer";
    arg_ptrs.push_back(args[i]->raw());
  }
  PJRT_Event *done = nullptr;
  auto results = launch(arg_ptrs, &done);
  Status done_status = client_->awaitEvent(done, "PJRT_LoadedExecutable_Execute (completion)");
  if (!results.isOk())
    return results.status();
  RS_RETURN_IF_ERROR(done_status);
  return results;
}

Result<std::vector<Tensor>> LoadedExecutable::run(std::span<const DeviceBuffer *const> args) const {
  RS_ASSIGN_OR_RETURN(std::vector<DeviceBuffer> buffers, execute(args));
  std::vector<Tensor> out;
  out.reserve(buffers.size());
  for (const DeviceBuffer &b : buffers) {
    RS_ASSIGN_OR_RETURN(Tensor t, b.toHost());
    out.push_back(std::move(t));
  }
  return out;
}

namespace {

/// Owns events; awaitAll() waits for each (Client::awaitEvent) and keeps the first error.
class EventSet {
public:
  explicit EventSet(const Client &client) : client_(client) {}
  ~EventSet() {
    for (PJRT_Event *e : events_)
      client_.plugin().destroyEvent(e);
  }
  EventSet(const EventSet &) = delete;
  EventSet &operator=(const EventSet &) = delete;
  void add(PJRT_Event *e) {
    if (e != nullptr)
      events_.push_back(e);
  }
  /// Awaits and destroys every event; returns the first error.
  Status awaitAll(std::string_view what) {
    Status first;
    for (PJRT_Event *e : events_) {
      Status st = client_.awaitEvent(e, what);
      if (first.isOk())
        first = st;
    }
    events_.clear();
    return first;
  }

private:
  const Client &client_;
  std::vector<PJRT_Event *> events_;
};

} // namespace

Result<std::vector<Tensor>>
LoadedExecutable::runHost(std::span<const Tensor> host_args,
                          std::span<const DeviceBuffer *const> device_args) const {
  StageClock stages; // upload, execute, readback of the current run profile
  const Plugin &plugin = client_->plugin();
  std::vector<PJRT_Buffer *> arg_ptrs;
  arg_ptrs.reserve(host_args.size() + device_args.size());
  std::vector<DeviceBuffer> uploaded;
  uploaded.reserve(host_args.size());
  // Released after every upload below has been awaited (declared before uploads_done).
  StagingLease staged(client_->staging());
  // Every path below awaits these before returning: no upload outlives its host bytes.
  EventSet uploads_done(*client_);
  for (const Tensor &t : host_args) {
    PJRT_Event *done = nullptr;
    const size_t bytes = static_cast<size_t>(t.byteSize());
    const StagingBlock block = bytes > 0 ? staged.acquire(bytes) : StagingBlock{};
    if (block.data != nullptr)
      std::memcpy(block.data, t.data(), bytes);
    auto b = client_->startUpload(t, &done, block.data);
    uploads_done.add(done);
    if (!b.isOk()) {
      (void)uploads_done.awaitAll("PJRT_Client_BufferFromHostBuffer");
      return b.status();
    }
    arg_ptrs.push_back(b->raw());
    uploaded.push_back(std::move(b).value());
  }
  for (size_t i = 0; i < device_args.size(); ++i) {
    if (device_args[i] == nullptr || !device_args[i]->valid()) {
      (void)uploads_done.awaitAll("PJRT_Client_BufferFromHostBuffer");
      return invalidArgument() << "argument " << host_args.size() + i << " is not a device buffer";
    }
    arg_ptrs.push_back(device_args[i]->raw());
  }
  stages.mark(&RunProfile::upload_seconds);
  if (host_results_) {
    PJRT_Event *done = nullptr;
    auto results = launch(arg_ptrs, &done);
    Result<std::vector<Tensor>> out =
        results.isOk() ? readHostResults(std::move(results).value(), done, &stages)
                       : Result<std::vector<Tensor>>(results.status());
    if (!results.isOk())
      client_->plugin().destroyEvent(done);
    Status inputs = uploads_done.awaitAll("PJRT_Client_BufferFromHostBuffer");
    if (out.isOk() && !inputs.isOk())
      return inputs;
    return out;
  }
  // No completion event: a failed run shows up in the read-backs' events.
  auto results = launch(arg_ptrs, nullptr);
  if (!results.isOk()) {
    (void)uploads_done.awaitAll("PJRT_Client_BufferFromHostBuffer");
    return results.status();
  }
  stages.mark(&RunProfile::execute_seconds);

  EventSet copies_done(*client_);
  std::vector<Tensor> out;
  out.reserve(results->size());
  Status status;
  for (const DeviceBuffer &b : *results) {
    out.push_back(Tensor::zeros(b.dtype(), b.shape()));
    const int64_t bytes = b.byteSize();
    if (bytes == 0 || !status.isOk())
      continue;
    PJRT_Buffer_ToHostBuffer_Args args{};
    args.struct_size = sizeof args;
    args.src = b.raw();
    args.dst = out.back().mutableData();
    args.dst_size = static_cast<size_t>(bytes);
    status = plugin.call(Slot::kBufferToHostBuffer, &args, "PJRT_Buffer_ToHostBuffer");
    copies_done.add(args.event);
  }
  Status copies = copies_done.awaitAll("PJRT_Buffer_ToHostBuffer");
  Status inputs = uploads_done.awaitAll("PJRT_Client_BufferFromHostBuffer");
  stages.mark(&RunProfile::readback_seconds);
  RS_RETURN_IF_ERROR(status);
  RS_RETURN_IF_ERROR(copies);
  RS_RETURN_IF_ERROR(inputs);
  return out;
}

Result<std::vector<Tensor>> LoadedExecutable::readHostResults(std::vector<DeviceBuffer> results,
                                                              PJRT_Event *done,
                                                              StageClock *stages) const {
  // The program copies each result into its host buffer before the run completes. A
  // completion poller sees that on this thread; the PJRT event (which also carries an
  // execution's error) is waited on when there is none, its spin ran out or it failed.
  bool polled = false;
  if (const CompletionPoller *poller = client_->completionPoller(); poller != nullptr) {
    std::vector<PJRT_Buffer *> raw;
    raw.reserve(results.size());
    for (const DeviceBuffer &b : results)
      raw.push_back(b.raw());
    polled = poller->waitDefined(raw, client_->eventSpin());
  }
  if (polled)
    client_->plugin().destroyEvent(done);
  else
    RS_RETURN_IF_ERROR(client_->awaitEvent(done, "PJRT_LoadedExecutable_Execute (completion)"));
  stages->mark(&RunProfile::execute_seconds);
  const Plugin &plugin = client_->plugin();
  std::vector<Tensor> out;
  out.reserve(results.size());
  for (DeviceBuffer &b : results) {
    const int64_t bytes = b.byteSize();
    if (bytes == 0) {
      out.push_back(Tensor::zeros(b.dtype(), b.shape()));
      continue;
    }
    PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args args{};
    args.struct_size = sizeof args;
    args.buffer = b.raw();
    RS_RETURN_IF_ERROR(plugin.call(Slot::kBufferOpaqueDeviceMemoryDataPointer, &args,
                                   "PJRT_Buffer_OpaqueDeviceMemoryDataPointer"));
    if (args.device_memory_ptr == nullptr)
      return internalError() << "result in host memory has no address";
    // The tensor views the bytes where the program wrote them and holds the result buffer
    // until its last view is gone: no copy, and no fresh (page-faulting) block per batch.
    const DType dtype = b.dtype();
    Shape shape = b.shape();
    auto owner = std::make_shared<DeviceBuffer>(std::move(b));
    out.push_back(Tensor::view(dtype, std::move(shape),
                               static_cast<const uint8_t *>(args.device_memory_ptr),
                               std::move(owner)));
  }
  stages->mark(&RunProfile::readback_seconds);
  return out;
}

Result<std::string> LoadedExecutable::serialize() const {
  const Plugin &plugin = client_->plugin();
  std::string bytes;
  RS_RETURN_IF_ERROR(withExecutable(plugin, raw_, [&](PJRT_Executable *exe) -> Status {
    PJRT_Executable_Serialize_Args args{};
    args.struct_size = sizeof args;
    args.executable = exe;
    RS_RETURN_IF_ERROR(plugin.call(Slot::kExecutableSerialize, &args, "PJRT_Executable_Serialize"));
    if (args.serialized_bytes != nullptr)
      bytes.assign(args.serialized_bytes, args.serialized_bytes_size);
    if (args.serialized_executable_deleter != nullptr && args.serialized_executable != nullptr)
      args.serialized_executable_deleter(args.serialized_executable);
    return Status::ok();
  }));
  if (bytes.empty())
    return internalError() << "PJRT_Executable_Serialize returned no bytes";
  return bytes;
}

Result<std::string> LoadedExecutable::fingerprint() const {
  const Plugin &plugin = client_->plugin();
  std::string fp;
  RS_RETURN_IF_ERROR(withExecutable(plugin, raw_, [&](PJRT_Executable *exe) -> Status {
    PJRT_Executable_Fingerprint_Args args{};
    args.struct_size = sizeof args;
    args.executable = exe;
    RS_RETURN_IF_ERROR(
        plugin.call(Slot::kExecutableFingerprint, &args, "PJRT_Executable_Fingerprint"));
    if (args.executable_fingerprint != nullptr)
      fp.assign(args.executable_fingerprint, args.executable_fingerprint_size);
    return Status::ok();
  }));
  return fp;
}

} // namespace rs::pjrt
