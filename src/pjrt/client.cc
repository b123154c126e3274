//===- pjrt/client.cc - PJRT client, device buffers and executables -------===//
#include "pjrt/client.h"

#include <cstring>
#include <numeric>
#include <sstream>
#include <utility>

namespace rs::pjrt {

using namespace capi;

namespace {

/// A PJRT_NamedValue naming a static string (names must outlive the call only).
PJRT_NamedValue namedValue(const char *name, PJRT_NamedValue_Type type) {
  PJRT_NamedValue v{};
  v.struct_size = sizeof v;
  v.name = name;
  v.name_size = std::char_traits<char>::length(name);
  v.type = type;
  v.value_size = 1;
  return v;
}

/// Reads a string-valued client query (platform name / version).
std::string clientString(const Plugin &plugin, PJRT_Client *client, Slot slot,
                         std::string_view what) {
  PJRT_Client_String_Args args{};
  args.struct_size = sizeof args;
  args.client = client;
  if (!plugin.call(slot, &args, what).isOk() || args.value == nullptr)
    return "";
  return std::string(args.value, args.value_size);
}

} // namespace

PJRT_Buffer_Type toPjrtType(DType dtype) {
  switch (dtype) {
  case DType::kBool: return PJRT_Buffer_Type_PRED;
  case DType::kI8: return PJRT_Buffer_Type_S8;
  case DType::kI16: return PJRT_Buffer_Type_S16;
  case DType::kI32: return PJRT_Buffer_Type_S32;
  case DType::kI64: return PJRT_Buffer_Type_S64;
  case DType::kU8: return PJRT_Buffer_Type_U8;
  case DType::kU16: return PJRT_Buffer_Type_U16;
  case DType::kU32: return PJRT_Buffer_Type_U32;
  case DType::kU64: return PJRT_Buffer_Type_U64;
  case DType::kF16: return PJRT_Buffer_Type_F16;
  case DType::kBF16: return PJRT_Buffer_Type_BF16;
  case DType::kF32: return PJRT_Buffer_Type_F32;
  case DType::kF64: return PJRT_Buffer_Type_F64;
  case DType::kComplex64: return PJRT_Buffer_Type_C64;
  case DType::kComplex128: return PJRT_Buffer_Type_C128;
  default: break; // kInvalid; the sub-byte ints and minifloats never reach a bundle's I/O
  }
  return PJRT_Buffer_Type_INVALID;
}

DType fromPjrtType(PJRT_Buffer_Type type) {
  switch (type) {
  case PJRT_Buffer_Type_PRED: return DType::kBool;
  case PJRT_Buffer_Type_S8: return DType::kI8;
  case PJRT_Buffer_Type_S16: return DType::kI16;
  case PJRT_Buffer_Type_S32: return DType::kI32;
  case PJRT_Buffer_Type_S64: return DType::kI64;
  case PJRT_Buffer_Type_U8: return DType::kU8;
  case PJRT_Buffer_Type_U16: return DType::kU16;
  case PJRT_Buffer_Type_U32: return DType::kU32;
  case PJRT_Buffer_Type_U64: return DType::kU64;
  case PJRT_Buffer_Type_F16: return DType::kF16;
  case PJRT_Buffer_Type_BF16: return DType::kBF16;
  case PJRT_Buffer_Type_F32: return DType::kF32;
  case PJRT_Buffer_Type_F64: return DType::kF64;
  case PJRT_Buffer_Type_C64: return DType::kComplex64;
  case PJRT_Buffer_Type_C128: return DType::kComplex128;
  default: break;
  }
  return DType::kInvalid;
}

//===----------------------------------------------------------------------===//
// DeviceBuffer
//===----------------------------------------------------------------------===//

DeviceBuffer::DeviceBuffer(std::shared_ptr<const Client> client, PJRT_Buffer *raw, DType dtype,
                           Shape shape)
    : client_(std::move(client)), raw_(raw), dtype_(dtype), shape_(std::move(shape)) {}

DeviceBuffer::DeviceBuffer(DeviceBuffer &&o) noexcept
    : client_(std::move(o.client_)), raw_(std::exchange(o.raw_, nullptr)), dtype_(o.dtype_),
      shape_(std::move(o.shape_)) {}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&o) noexcept {
  if (this != &o) {
    reset();
    client_ = std::move(o.client_);
    raw_ = std::exchange(o.raw_, nullptr);
    dtype_ = o.dtype_;
    shape_ = std::move(o.shape_);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { reset(); }

void DeviceBuffer::reset() {
  if (raw_ != nullptr) {
    PJRT_Buffer_Destroy_Args args{};
    args.struct_size = sizeof args;
    args.buffer = raw_;
    (void)client_->plugin().call(Slot::kBufferDestroy, &args, "PJRT_Buffer_Destroy");
    raw_ = nullptr;
  }
}

Result<Tensor> DeviceBuffer::toHost() const {
  if (raw_ == nullptr)
    return failedPrecondition() << "device buffer is empty";
  const Plugin &plugin = client_->plugin();
  PJRT_Buffer_ToHostBuffer_Args query{};
  query.struct_size = sizeof query;
  query.src = raw_;
  RS_RETURN_IF_ERROR(plugin.call(Slot::kBufferToHostBuffer, &query, "PJRT_Buffer_ToHostBuffer"));
  plugin.destroyEvent(query.event);
  const int64_t expected = byteSize();
  if (query.dst_size != static_cast<size_t>(expected))
    return internalError() << "device buffer " << dtypeMlirName(dtype_) << shapeToString(shape_)
                           << " has a host size of " << query.dst_size << " bytes, expected "
                           << expected << " (non-dense layout)";
  Tensor out = Tensor::zeros(dtype_, shape_);
  if (expected == 0)
    return out;
  PJRT_Buffer_ToHostBuffer_Args args{};
  args.struct_size = sizeof args;
  args.src = raw_;
  args.dst = out.mutableData();
  args.dst_size = static_cast<size_t>(expected);
  RS_RETURN_IF_ERROR(plugin.call(Slot::kBufferToHostBuffer, &args, "PJRT_Buffer_ToHostBuffer"));
  RS_RETURN_IF_ERROR(client_->awaitEvent(args.event, "PJRT_Buffer_ToHostBuffer"));
  return out;
}

//===----------------------------------------------------------------------===//
// LoadedExecutable
//===----------------------------------------------------------------------===//

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
  for (const DeviceBuffer &b : results) {
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
    out.push_back(Tensor::copyOf(
        b.dtype(), b.shape(),
        std::span<const uint8_t>(static_cast<const uint8_t *>(args.device_memory_ptr),
                                 static_cast<size_t>(bytes))));
  }
  stages->mark(&RunProfile::readback_seconds);
  return out;
}

namespace {

/// Runs `fn` on the PJRT_Executable of `loaded`, destroying it afterwards.
template <typename Fn>
Status withExecutable(const Plugin &plugin, PJRT_LoadedExecutable *loaded, Fn &&fn) {
  PJRT_LoadedExecutable_GetExecutable_Args get{};
  get.struct_size = sizeof get;
  get.loaded_executable = loaded;
  RS_RETURN_IF_ERROR(plugin.call(Slot::kLoadedExecutableGetExecutable, &get,
                                 "PJRT_LoadedExecutable_GetExecutable"));
  Status st = fn(get.executable);
  PJRT_Executable_Destroy_Args destroy{};
  destroy.struct_size = sizeof destroy;
  destroy.executable = get.executable;
  (void)plugin.call(Slot::kExecutableDestroy, &destroy, "PJRT_Executable_Destroy");
  return st;
}

} // namespace

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

//===----------------------------------------------------------------------===//
// Client
//===----------------------------------------------------------------------===//

Result<std::shared_ptr<const Client>> Client::create(std::shared_ptr<const Plugin> plugin,
                                                     const ClientOptions &options) {
  if (options.memory_fraction &&
      !(*options.memory_fraction > 0.0 && *options.memory_fraction <= 1.0))
    return invalidArgument() << "runtime.mem_fraction must be in (0, 1], got "
                             << *options.memory_fraction;
  std::vector<PJRT_NamedValue> create_options;
  const int64_t visible[1] = {options.device_ordinal};
  if (options.device_ordinal >= 0) {
    PJRT_NamedValue v = namedValue("visible_devices", PJRT_NamedValue_kInt64List);
    v.int64_array_value = visible;
    v.value_size = 1;
    create_options.push_back(v);
  }
  if (options.memory_fraction) {
    PJRT_NamedValue v = namedValue("memory_fraction", PJRT_NamedValue_kFloat);
    v.float_value = static_cast<float>(*options.memory_fraction);
    create_options.push_back(v);
  }
  if (options.preallocate) {
    PJRT_NamedValue v = namedValue("preallocate", PJRT_NamedValue_kBool);
    v.bool_value = *options.preallocate;
    create_options.push_back(v);
  }

  std::shared_ptr<Client> client(new Client());
  client->plugin_ = std::move(plugin);
  client->event_spin_ = options.event_spin;
  const Plugin &p = *client->plugin_;

  PJRT_Client_Create_Args create{};
  create.struct_size = sizeof create;
  create.create_options = create_options.data();
  create.num_options = create_options.size();
  RS_RETURN_IF_ERROR(p.call(Slot::kClientCreate, &create, "PJRT_Client_Create"));
  client->raw_ = create.client;

  DeviceDescription &d = client->device_;
  d.platform_name =
      clientString(p, client->raw_, Slot::kClientPlatformName, "PJRT_Client_PlatformName");
  d.platform_version =
      clientString(p, client->raw_, Slot::kClientPlatformVersion, "PJRT_Client_PlatformVersion");

  PJRT_Client_AddressableDevices_Args devs{};
  devs.struct_size = sizeof devs;
  devs.client = client->raw_;
  RS_RETURN_IF_ERROR(
      p.call(Slot::kClientAddressableDevices, &devs, "PJRT_Client_AddressableDevices"));
  if (devs.num_addressable_devices == 0)
    return unavailable() << "pjrt client (" << d.platform_name << ") has no addressable devices";

  std::ostringstream seen;
  for (size_t i = 0; i < devs.num_addressable_devices; ++i) {
    PJRT_Device *dev = devs.addressable_devices[i];
    PJRT_Device_LocalHardwareId_Args hw{};
    hw.struct_size = sizeof hw;
    hw.device = dev;
    int ordinal = -1;
    if (p.call(Slot::kDeviceLocalHardwareId, &hw, "PJRT_Device_LocalHardwareId").isOk())
      ordinal = hw.local_hardware_id;
    seen << (i ? ", " : "") << ordinal;
    if (options.device_ordinal < 0 || ordinal == options.device_ordinal) {
      client->device_raw_ = dev;
      d.local_hardware_id = ordinal;
      break;
    }
  }
  if (client->device_raw_ == nullptr)
    return notFound() << "device ordinal " << options.device_ordinal
                      << " not found; addressable devices: " << seen.str();

  PJRT_Device_GetDescription_Args get{};
  get.struct_size = sizeof get;
  get.device = client->device_raw_;
  RS_RETURN_IF_ERROR(p.call(Slot::kDeviceGetDescription, &get, "PJRT_Device_GetDescription"));

  PJRT_DeviceDescription_Id_Args id{};
  id.struct_size = sizeof id;
  id.device_description = get.device_description;
  RS_RETURN_IF_ERROR(p.call(Slot::kDeviceDescriptionId, &id, "PJRT_DeviceDescription_Id"));
  d.device_id = id.id;

  PJRT_DeviceDescription_Kind_Args kind{};
  kind.struct_size = sizeof kind;
  kind.device_description = get.device_description;
  RS_RETURN_IF_ERROR(p.call(Slot::kDeviceDescriptionKind, &kind, "PJRT_DeviceDescription_Kind"));
  if (kind.device_kind != nullptr)
    d.device_kind.assign(kind.device_kind, kind.device_kind_size);

  PJRT_DeviceDescription_Attributes_Args attrs{};
  attrs.struct_size = sizeof attrs;
  attrs.device_description = get.device_description;
  RS_RETURN_IF_ERROR(
      p.call(Slot::kDeviceDescriptionAttributes, &attrs, "PJRT_DeviceDescription_Attributes"));
  d.attributes = decodeNamedValues(attrs.attributes, attrs.num_attributes);
  const VendorProfile *vendor =
      options.vendor != nullptr ? options.vendor : vendorProfileForPlatform(d.platform_name);
  if (vendor != nullptr)
    d.compute_capability = vendor->deviceCapability(d.attributes);
  if (options.staging_bytes > 0)
    client->staging_ = std::make_unique<HostStaging>(p, client->raw_, options.staging_bytes);
  std::string why = "not asked for";
  if (options.poll_completion && vendor == nullptr)
    why = "no vendor profile for platform '" + d.platform_name + "'";
  else if (options.poll_completion)
    client->completion_ = vendor->completionPoller(p, d.local_hardware_id, &why);
  d.completion =
      client->completion_ ? client->completion_->describe() : "PJRT events (" + why + ")";
  return std::shared_ptr<const Client>(std::move(client));
}

Client::~Client() {
  staging_.reset(); // unmapped while the client exists
  if (raw_ != nullptr) {
    PJRT_Client_Destroy_Args args{};
    args.struct_size = sizeof args;
    args.client = raw_;
    (void)plugin_->call(Slot::kClientDestroy, &args, "PJRT_Client_Destroy");
  }
}

Result<DeviceBuffer> Client::wrapBuffer(PJRT_Buffer *raw) const {
  // Own it first: a failed query below must still free the buffer.
  DeviceBuffer buffer(shared_from_this(), raw, DType::kInvalid, {});
  PJRT_Buffer_ElementType_Args type{};
  type.struct_size = sizeof type;
  type.buffer = raw;
  RS_RETURN_IF_ERROR(plugin_->call(Slot::kBufferElementType, &type, "PJRT_Buffer_ElementType"));
  PJRT_Buffer_Dimensions_Args dims{};
  dims.struct_size = sizeof dims;
  dims.buffer = raw;
  RS_RETURN_IF_ERROR(plugin_->call(Slot::kBufferDimensions, &dims, "PJRT_Buffer_Dimensions"));
  buffer.dtype_ = fromPjrtType(type.type);
  if (buffer.dtype_ == DType::kInvalid)
    return unimplemented() << "device buffer has PJRT element type " << static_cast<int>(type.type)
                           << ", which this server does not support";
  buffer.shape_.assign(dims.dims, dims.dims + dims.num_dims);
  return buffer;
}

Result<DeviceBuffer> Client::startUpload(const Tensor &tensor, PJRT_Event **done,
                                         const void *data) const {
  *done = nullptr;
  const PJRT_Buffer_Type type = toPjrtType(tensor.dtype());
  if (type == PJRT_Buffer_Type_INVALID)
    return invalidArgument() << "cannot upload a tensor of dtype " << dtypeMlirName(tensor.dtype())
                             << " to the device";
  static const uint8_t kEmpty[8] = {};
  PJRT_Client_BufferFromHostBuffer_Args args{};
  args.struct_size = sizeof args;
  args.client = raw_;
  if (data == nullptr)
    data = tensor.data() != nullptr ? static_cast<const void *>(tensor.data()) : kEmpty;
  args.data = data;
  args.type = type;
  args.dims = tensor.shape().data();
  args.num_dims = tensor.shape().size();
  args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
  args.device = device_raw_;
  RS_RETURN_IF_ERROR(
      plugin_->call(Slot::kClientBufferFromHostBuffer, &args, "PJRT_Client_BufferFromHostBuffer"));
  *done = args.done_with_host_buffer;
  return DeviceBuffer(shared_from_this(), args.buffer, tensor.dtype(), tensor.shape());
}

Result<DeviceBuffer> Client::upload(const Tensor &tensor) const {
  PJRT_Event *done = nullptr;
  auto buffer = startUpload(tensor, &done);
  // The host bytes must stay untouched until the transfer has read them.
  Status st = awaitEvent(done, "PJRT_Client_BufferFromHostBuffer");
  if (!buffer.isOk())
    return buffer.status();
  RS_RETURN_IF_ERROR(st);
  return buffer;
}

Status Client::awaitEvent(PJRT_Event *event, std::string_view what) const {
  return plugin_->awaitEvent(event, what, event_spin_);
}

namespace {

/// Whether every result of `raw` has memory kind "pinned_host" (false when the query fails).
bool resultsInPinnedHost(const Plugin &plugin, PJRT_LoadedExecutable *raw) {
  bool pinned = false;
  (void)withExecutable(plugin, raw, [&](PJRT_Executable *e) -> Status {
    PJRT_Executable_OutputMemoryKinds_Args args{};
    args.struct_size = sizeof args;
    args.executable = e;
    RS_RETURN_IF_ERROR(plugin.call(Slot::kExecutableOutputMemoryKinds, &args,
                                   "PJRT_Executable_OutputMemoryKinds"));
    pinned = args.num_outputs > 0 && args.memory_kinds != nullptr;
    for (size_t i = 0; pinned && i < args.num_outputs; ++i)
      pinned = std::string_view(args.memory_kinds[i], args.memory_kind_sizes[i]) == "pinned_host";
    return Status::ok();
  });
  return pinned;
}

} // namespace

Result<LoadedExecutable> Client::wrapExecutable(PJRT_LoadedExecutable *raw) const {
  LoadedExecutable exe(shared_from_this(), raw, 0);
  size_t num_outputs = 0;
  RS_RETURN_IF_ERROR(withExecutable(*plugin_, raw, [&](PJRT_Executable *e) -> Status {
    PJRT_Executable_NumOutputs_Args args{};
    args.struct_size = sizeof args;
    args.executable = e;
    RS_RETURN_IF_ERROR(
        plugin_->call(Slot::kExecutableNumOutputs, &args, "PJRT_Executable_NumOutputs"));
    num_outputs = args.num_outputs;
    return Status::ok();
  }));
  exe.num_outputs_ = num_outputs;
  exe.host_results_ = num_outputs > 0 && plugin_->has(Slot::kExecutableOutputMemoryKinds) &&
                      resultsInPinnedHost(*plugin_, raw);
  return exe;
}

Result<LoadedExecutable> Client::compile(std::string_view program,
                                         std::string_view compile_options) const {
  static constexpr char kFormat[] = "mlir";
  PJRT_Program prog{};
  prog.struct_size = sizeof prog;
  prog.code = const_cast<char *>(program.data()); // the plugin only reads it
  prog.code_size = program.size();
  prog.format = kFormat;
  prog.format_size = sizeof kFormat - 1;

  PJRT_Client_Compile_Args args{};
  args.struct_size = sizeof args;
  args.client = raw_;
  args.program = &prog;
  args.compile_options = compile_options.data();
  args.compile_options_size = compile_options.size();
  RS_RETURN_IF_ERROR(plugin_->call(Slot::kClientCompile, &args, "PJRT_Client_Compile"));
  return wrapExecutable(args.executable);
}

Result<LoadedExecutable> Client::deserialize(std::string_view bytes) const {
  PJRT_Executable_DeserializeAndLoad_Args args{};
  args.struct_size = sizeof args;
  args.client = raw_;
  args.serialized_executable = bytes.data();
  args.serialized_executable_size = bytes.size();
  RS_RETURN_IF_ERROR(plugin_->call(Slot::kExecutableDeserializeAndLoad, &args,
                                   "PJRT_Executable_DeserializeAndLoad"));
  return wrapExecutable(args.loaded_executable);
}

} // namespace rs::pjrt
