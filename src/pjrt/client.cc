//===- pjrt/client.cc - PJRT client creation and program loading ----------===//
//
// Client::create() (create options, the device of the requested ordinal, its description,
// staging memory and completion poller), the client's teardown and event waits, and
// compiling or deserialising a program into a LoadedExecutable.
//
//===----------------------------------------------------------------------===//
#include "pjrt/client.h"

#include "pjrt/client_impl.h"

#include <sstream>
#include <utility>

namespace rs::pjrt {

using namespace capi;
using detail::withExecutable;

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
