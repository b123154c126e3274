//===- pjrt/plugin.cc - Finding, loading and calling a PJRT plugin --------===//
#include "pjrt/plugin.h"

#include <chrono>

#include <dlfcn.h>
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <sstream>

namespace rs::pjrt {
namespace {

using namespace capi;

bool isRegularFile(const std::string &path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool isDirectory(const std::string &path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/// Paths matching `pattern`, sorted (glob(3) sorts by default).
std::vector<std::string> globPaths(const std::string &pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i)
      out.emplace_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  return out;
}

std::string slotName(Slot slot) {
  switch (slot) {
  case Slot::kErrorDestroy: return "PJRT_Error_Destroy";
  case Slot::kErrorMessage: return "PJRT_Error_Message";
  case Slot::kErrorGetCode: return "PJRT_Error_GetCode";
  case Slot::kPluginInitialize: return "PJRT_Plugin_Initialize";
  case Slot::kPluginAttributes: return "PJRT_Plugin_Attributes";
  case Slot::kEventDestroy: return "PJRT_Event_Destroy";
  case Slot::kEventIsReady: return "PJRT_Event_IsReady";
  case Slot::kEventAwait: return "PJRT_Event_Await";
  case Slot::kClientCreate: return "PJRT_Client_Create";
  case Slot::kClientDestroy: return "PJRT_Client_Destroy";
  case Slot::kClientPlatformName: return "PJRT_Client_PlatformName";
  case Slot::kClientPlatformVersion: return "PJRT_Client_PlatformVersion";
  case Slot::kClientAddressableDevices: return "PJRT_Client_AddressableDevices";
  case Slot::kClientCompile: return "PJRT_Client_Compile";
  case Slot::kClientBufferFromHostBuffer: return "PJRT_Client_BufferFromHostBuffer";
  case Slot::kDeviceDescriptionId: return "PJRT_DeviceDescription_Id";
  case Slot::kDeviceDescriptionAttributes: return "PJRT_DeviceDescription_Attributes";
  case Slot::kDeviceDescriptionKind: return "PJRT_DeviceDescription_Kind";
  case Slot::kDeviceGetDescription: return "PJRT_Device_GetDescription";
  case Slot::kDeviceLocalHardwareId: return "PJRT_Device_LocalHardwareId";
  case Slot::kExecutableDestroy: return "PJRT_Executable_Destroy";
  case Slot::kExecutableNumOutputs: return "PJRT_Executable_NumOutputs";
  case Slot::kExecutableSerialize: return "PJRT_Executable_Serialize";
  case Slot::kLoadedExecutableDestroy: return "PJRT_LoadedExecutable_Destroy";
  case Slot::kLoadedExecutableGetExecutable: return "PJRT_LoadedExecutable_GetExecutable";
  case Slot::kLoadedExecutableExecute: return "PJRT_LoadedExecutable_Execute";
  case Slot::kExecutableDeserializeAndLoad: return "PJRT_Executable_DeserializeAndLoad";
  case Slot::kBufferDestroy: return "PJRT_Buffer_Destroy";
  case Slot::kBufferElementType: return "PJRT_Buffer_ElementType";
  case Slot::kBufferDimensions: return "PJRT_Buffer_Dimensions";
  case Slot::kBufferToHostBuffer: return "PJRT_Buffer_ToHostBuffer";
  case Slot::kBufferOpaqueDeviceMemoryDataPointer:
    return "PJRT_Buffer_OpaqueDeviceMemoryDataPointer";
  case Slot::kExecutableFingerprint: return "PJRT_Executable_Fingerprint";
  case Slot::kExecutableOutputMemoryKinds: return "PJRT_Executable_OutputMemoryKinds";
  case Slot::kClientDmaMap: return "PJRT_Client_DmaMap";
  case Slot::kClientDmaUnmap: return "PJRT_Client_DmaUnmap";
  }
  return "slot " + std::to_string(static_cast<int>(slot));
}

/// The error-path slots every other call relies on.
constexpr Slot kRequiredSlots[] = {Slot::kErrorDestroy, Slot::kErrorMessage, Slot::kErrorGetCode,
                                   Slot::kPluginInitialize};

} // namespace

std::vector<std::string> defaultSiteDirs() {
  std::vector<std::string> patterns;
  if (const char *venv = std::getenv("VIRTUAL_ENV"); venv != nullptr && *venv != '\0')
    patterns.push_back(std::string(venv) + "/lib/python3*/site-packages");
  patterns.insert(patterns.end(),
                  {"/opt/*/.venv/lib/python3*/site-packages",
                   "/usr/local/lib/python3*/site-packages", "/usr/local/lib/python3*/dist-packages",
                   "/usr/lib/python3/dist-packages", "/usr/lib/python3*/site-packages"});
  std::vector<std::string> dirs;
  for (const std::string &pattern : patterns) {
    for (std::string &dir : globPaths(pattern)) {
      if (isDirectory(dir) && std::find(dirs.begin(), dirs.end(), dir) == dirs.end())
        dirs.push_back(std::move(dir));
    }
  }
  return dirs;
}

PluginSearch makePluginSearch(std::string configured_path, std::string plugin_glob) {
  PluginSearch search;
  search.configured_path = std::move(configured_path);
  search.plugin_glob = std::move(plugin_glob);
  if (const char *env = std::getenv("PJRT_PLUGIN_LIBRARY_PATH"); env != nullptr)
    search.env_path = env;
  search.site_dirs = defaultSiteDirs();
  return search;
}

Result<std::string> discoverPluginPath(const PluginSearch &search) {
  if (!search.configured_path.empty()) {
    if (!isRegularFile(search.configured_path))
      return notFound() << "pjrt plugin '" << search.configured_path
                        << "' (runtime.pjrt_plugin) does not exist";
    return search.configured_path;
  }
  if (!search.env_path.empty()) {
    if (!isRegularFile(search.env_path))
      return notFound() << "pjrt plugin '" << search.env_path
                        << "' (PJRT_PLUGIN_LIBRARY_PATH) does not exist";
    return search.env_path;
  }
  for (const std::string &dir : search.site_dirs) {
    if (search.plugin_glob.empty())
      break;
    std::vector<std::string> found = globPaths(dir + "/" + search.plugin_glob);
    if (!found.empty())
      return found.back();
  }
  std::ostringstream msg;
  msg << "no pjrt plugin found: set runtime.pjrt_plugin or PJRT_PLUGIN_LIBRARY_PATH; searched "
      << (search.plugin_glob.empty() ? "no plugin pattern" : search.plugin_glob) << " under ";
  if (search.site_dirs.empty())
    msg << "no site-packages directories (none exist)";
  for (size_t i = 0; i < search.site_dirs.size(); ++i)
    msg << (i ? ", " : "") << search.site_dirs[i];
  return Status(StatusCode::kNotFound, msg.str());
}

std::string NamedValue::toString() const {
  std::ostringstream os;
  os << name << '=';
  if (const auto *s = std::get_if<std::string>(&value)) {
    os << *s;
  } else if (const auto *i = std::get_if<int64_t>(&value)) {
    os << *i;
  } else if (const auto *list = std::get_if<std::vector<int64_t>>(&value)) {
    os << '[';
    for (size_t k = 0; k < list->size(); ++k)
      os << (k ? "," : "") << (*list)[k];
    os << ']';
  } else if (const auto *f = std::get_if<float>(&value)) {
    os << *f;
  } else {
    os << (std::get<bool>(value) ? "true" : "false");
  }
  return os.str();
}

std::vector<NamedValue> decodeNamedValues(const PJRT_NamedValue *values, size_t count) {
  std::vector<NamedValue> out;
  for (size_t i = 0; values != nullptr && i < count; ++i) {
    const PJRT_NamedValue &v = values[i];
    NamedValue nv;
    nv.name.assign(v.name, v.name_size);
    switch (v.type) {
    case PJRT_NamedValue_kString:
      nv.value =
          std::string(v.string_value ? v.string_value : "", v.string_value ? v.value_size : 0);
      break;
    case PJRT_NamedValue_kInt64: nv.value = v.int64_value; break;
    case PJRT_NamedValue_kInt64List:
      nv.value = v.int64_array_value
                     ? std::vector<int64_t>(v.int64_array_value, v.int64_array_value + v.value_size)
                     : std::vector<int64_t>{};
      break;
    case PJRT_NamedValue_kFloat: nv.value = v.float_value; break;
    case PJRT_NamedValue_kBool: nv.value = v.bool_value; break;
    default: nv.value = std::string("<unknown type ") + std::to_string(v.type) + ">"; break;
    }
    out.push_back(std::move(nv));
  }
  return out;
}

Result<std::shared_ptr<const Plugin>> Plugin::load(const std::string &path) {
  if (!isRegularFile(path))
    return notFound() << "pjrt plugin '" << path << "' does not exist";
  ::dlerror();
  void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char *err = ::dlerror();
    return failedPrecondition() << "pjrt plugin '" << path
                                << "' cannot be loaded: " << (err ? err : "unknown dlopen error");
  }
  auto get_api = reinterpret_cast<GetPjrtApiFn>(::dlsym(handle, "GetPjrtApi"));
  if (get_api == nullptr) {
    ::dlclose(handle); // not a plugin: nothing of it is in use
    return failedPrecondition() << "'" << path
                                << "' is not a PJRT plugin: it does not export GetPjrtApi";
  }
  const PJRT_Api *api = get_api();
  if (api == nullptr) {
    ::dlclose(handle);
    return failedPrecondition() << "pjrt plugin '" << path << "': GetPjrtApi returned NULL";
  }
  const int major = api->pjrt_api_version.major_version;
  const int minor = api->pjrt_api_version.minor_version;
  const size_t need_size = slotOffset(kHighestSlot) + sizeof(void *);
  if (major != 0 || minor < kMinApiMinor || api->struct_size < need_size) {
    std::ostringstream msg;
    msg << "pjrt plugin '" << path << "' has PJRT C API version " << major << '.' << minor
        << " with a " << api->struct_size << "-byte function table; this server needs version 0."
        << kMinApiMinor << " or a later 0.x with a table of at least " << need_size << " bytes";
    // Leave it mapped: the plugin may have started threads in GetPjrtApi.
    return Status(StatusCode::kFailedPrecondition, msg.str());
  }

  std::shared_ptr<Plugin> plugin(new Plugin());
  plugin->path_ = path;
  plugin->handle_ = handle;
  plugin->api_ = api;
  plugin->api_major_ = major;
  plugin->api_minor_ = minor;
  for (Slot slot : kRequiredSlots) {
    if (plugin->slotPointer(slot) == nullptr)
      return failedPrecondition() << "pjrt plugin '" << path << "' does not implement "
                                  << slotName(slot);
  }

  PJRT_Plugin_Initialize_Args init{};
  init.struct_size = sizeof init;
  RS_RETURN_IF_ERROR(plugin->call(Slot::kPluginInitialize, &init, "PJRT_Plugin_Initialize"));

  if (plugin->slotPointer(Slot::kPluginAttributes) != nullptr) {
    PJRT_Plugin_Attributes_Args attrs{};
    attrs.struct_size = sizeof attrs;
    Status st = plugin->call(Slot::kPluginAttributes, &attrs, "PJRT_Plugin_Attributes");
    if (st.isOk())
      plugin->attributes_ = decodeNamedValues(attrs.attributes, attrs.num_attributes);
  }
  return std::shared_ptr<const Plugin>(std::move(plugin));
}

std::string Plugin::apiVersion() const {
  return std::to_string(api_major_) + "." + std::to_string(api_minor_);
}

void *Plugin::slotPointer(Slot slot) const {
  const size_t offset = slotOffset(slot);
  if (api_->struct_size < offset + sizeof(void *))
    return nullptr;
  void *fn = nullptr;
  std::memcpy(&fn, reinterpret_cast<const char *>(api_) + offset, sizeof fn);
  return fn;
}

Status Plugin::missingSlot(Slot slot, std::string_view what) const {
  return unimplemented() << what << ": pjrt plugin '" << path_ << "' does not implement "
                         << slotName(slot);
}

Status Plugin::consumeError(PJRT_Error *error, std::string_view what) const {
  if (error == nullptr)
    return Status::ok();
  PJRT_Error_Message_Args msg{};
  msg.struct_size = sizeof msg;
  msg.error = error;
  reinterpret_cast<PjrtVoidFn<PJRT_Error_Message_Args>>(slotPointer(Slot::kErrorMessage))(&msg);
  std::string text = msg.message ? std::string(msg.message, msg.message_size) : "";

  PJRT_Error_GetCode_Args code{};
  code.struct_size = sizeof code;
  code.error = error;
  StatusCode status_code = StatusCode::kInternal;
  PJRT_Error *code_error =
      reinterpret_cast<PjrtFn<PJRT_Error_GetCode_Args>>(slotPointer(Slot::kErrorGetCode))(&code);
  if (code_error == nullptr) {
    if (code.code > 0 && code.code <= static_cast<int>(StatusCode::kUnauthenticated))
      status_code = static_cast<StatusCode>(code.code);
  } else {
    PJRT_Error_Destroy_Args d{};
    d.struct_size = sizeof d;
    d.error = code_error;
    reinterpret_cast<PjrtVoidFn<PJRT_Error_Destroy_Args>>(slotPointer(Slot::kErrorDestroy))(&d);
  }

  PJRT_Error_Destroy_Args destroy{};
  destroy.struct_size = sizeof destroy;
  destroy.error = error;
  reinterpret_cast<PjrtVoidFn<PJRT_Error_Destroy_Args>>(slotPointer(Slot::kErrorDestroy))(&destroy);
  return Status(status_code, std::string(what) + ": " + text);
}

const capi::PJRT_Extension_Base *Plugin::extension(int type) const {
  for (const PJRT_Extension_Base *e = api_ != nullptr ? api_->extension_start : nullptr;
       e != nullptr; e = e->next)
    if (e->type == type)
      return e;
  return nullptr;
}

void Plugin::destroyEvent(PJRT_Event *event) const {
  if (event == nullptr)
    return;
  PJRT_Event_Destroy_Args args{};
  args.struct_size = sizeof args;
  args.event = event;
  // Destroy errors carry nothing actionable; consumeError still frees them.
  (void)call(Slot::kEventDestroy, &args, "PJRT_Event_Destroy");
}

Status Plugin::awaitEvent(PJRT_Event *event, std::string_view what,
                          std::chrono::microseconds spin) const {
  if (event == nullptr)
    return Status::ok();
  if (spin.count() > 0 && slotPointer(Slot::kEventIsReady) != nullptr) {
    PJRT_Event_IsReady_Args ready{};
    ready.struct_size = sizeof ready;
    ready.event = event;
    const auto until = std::chrono::steady_clock::now() + spin;
    while (call(Slot::kEventIsReady, &ready, what).isOk() && !ready.is_ready &&
           std::chrono::steady_clock::now() < until) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
  }
  PJRT_Event_Await_Args args{};
  args.struct_size = sizeof args;
  args.event = event;
  Status st = call(Slot::kEventAwait, &args, what);
  destroyEvent(event);
  return st;
}

} // namespace rs::pjrt
