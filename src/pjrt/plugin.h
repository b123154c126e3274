//===- pjrt/plugin.h - Finding, loading and calling a PJRT plugin ---------===//
//
// A PJRT plugin is a shared library exporting `const PJRT_Api* GetPjrtApi()`; on the GPU
// machine it is `jax_plugins/xla_cuda13/xla_cuda_plugin.so` from the jax-cuda13-pjrt
// package (`../shared/reference/pjrt.md`, sections 1 and 6).
//
// discoverPluginPath() picks the library: the configured path (`runtime.pjrt_plugin`),
// else the PJRT_PLUGIN_LIBRARY_PATH environment variable, else the lexicographically last
// match of the vendor profile's plugin glob (pjrt/vendor_profile.h; CUDA:
// `jax_plugins/xla_cuda*/xla_cuda_plugin.so`) under the first Python site-packages
// directory that has one. The plugin is loaded in place, because it finds its vendor
// libraries relative to itself ($ORIGIN RPATH into site-packages/nvidia/ for CUDA).
//
// Plugin::load() dlopens it (RTLD_NOW | RTLD_LOCAL), calls GetPjrtApi, checks the API
// version (major 0, minor >= capi::kMinApiMinor, a function table reaching every slot
// used) and calls PJRT_Plugin_Initialize once. The library is never dlclosed once
// loaded: PJRT objects may outlive any one owner and XLA does not support unloading.
//
// Errors: NotFound naming the path for a missing file; FailedPrecondition for a library
// that cannot be dlopened (dlerror text), that does not export GetPjrtApi ("is not a
// PJRT plugin"), or whose API version is unsupported (both versions named); errors
// returned by the plugin keep their PJRT code (same numbers as StatusCode) and message,
// prefixed with the function that failed.
//
// Thread safety: a loaded Plugin is immutable; call() may be used from any thread (the
// PJRT C API is thread-safe).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pjrt/pjrt_c_api.h"
#include "support/status.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace rs::pjrt {

/// Where discoverPluginPath() looks. makePluginSearch() fills it from the environment.
struct PluginSearch {
  /// runtime.pjrt_plugin; when non-empty it is the only candidate.
  std::string configured_path;
  /// The PJRT_PLUGIN_LIBRARY_PATH environment variable ("" when unset).
  std::string env_path;
  /// Python package directories to search, in order.
  std::vector<std::string> site_dirs;
  /// The plugin library's glob under a site-packages directory (VendorProfile::pluginGlob);
  /// "" = search no site-packages directory.
  std::string plugin_glob;
};

/// Site-packages directories of this machine, in search order: $VIRTUAL_ENV's, then
/// /opt/*/.venv/lib/python3*/site-packages, /usr/local/lib/python3*/{site,dist}-packages,
/// /usr/lib/python3/dist-packages, /usr/lib/python3*/site-packages (existing ones only,
/// each glob sorted).
std::vector<std::string> defaultSiteDirs();

/// A PluginSearch with `configured_path`, PJRT_PLUGIN_LIBRARY_PATH, defaultSiteDirs() and
/// `plugin_glob` (the vendor profile's).
PluginSearch makePluginSearch(std::string configured_path, std::string plugin_glob);

/// The plugin path to load (see the file comment). NotFound: "pjrt plugin '<path>' does
/// not exist" for a configured or env path that is missing (naming where it came from),
/// or, when nothing was found, a message listing every directory searched.
Result<std::string> discoverPluginPath(const PluginSearch &search);

/// A decoded PJRT_NamedValue (plugin and device attributes).
struct NamedValue {
  std::string name;
  std::variant<std::string, int64_t, std::vector<int64_t>, float, bool> value;
  /// "name=value"; lists as "[1,2,3]".
  std::string toString() const;
};

/// A loaded PJRT plugin.
class Plugin {
public:
  /// Loads and initialises the plugin at `path` (see the file comment for errors).
  static Result<std::shared_ptr<const Plugin>> load(const std::string &path);

  const std::string &path() const { return path_; }
  int apiMajor() const { return api_major_; }
  int apiMinor() const { return api_minor_; }
  /// "0.115".
  std::string apiVersion() const;
  /// PJRT_Plugin_Attributes (xla_version, stablehlo_current_version, cuda_version, ...),
  /// in the plugin's order; empty if the plugin reports none.
  const std::vector<NamedValue> &attributes() const { return attributes_; }

  /// Calls function `slot` with `args` (struct_size must already be set). A returned
  /// PJRT_Error becomes a Status "<what>: <message>" with the error's code, and is
  /// destroyed. Unimplemented if the plugin leaves the slot NULL.
  template <typename Args> Status call(capi::Slot slot, Args *args, std::string_view what) const {
    void *fn = slotPointer(slot);
    if (fn == nullptr)
      return missingSlot(slot, what);
    return consumeError(reinterpret_cast<capi::PjrtFn<Args>>(fn)(args), what);
  }

  /// Whether the plugin's function table has `slot` (and it is not NULL).
  bool has(capi::Slot slot) const { return slotPointer(slot) != nullptr; }
  /// The first entry of type `type` on the plugin's extension list, or nullptr.
  const capi::PJRT_Extension_Base *extension(int type) const;

  /// Converts a PJRT_Error to a Status (code and message, prefixed with `what`) and
  /// destroys it. NULL gives OK.
  Status consumeError(capi::PJRT_Error *error, std::string_view what) const;
  /// Awaits `event`, destroys it, and returns its error (prefixed with `what`). NULL
  /// events are OK. With `spin` > 0 the calling thread first polls PJRT_Event_IsReady for up
  /// to `spin` (where the plugin has it), then blocks in PJRT_Event_Await: a thread that
  /// sleeps through a GPU execution is woken by the plugin's completion thread, which costs
  /// the wake-up of an idle core (costly on a virtual machine whose idle cores halt;
  /// docs/performance.md); one that polls sees the completion at once, for the price of a
  /// busy core while it waits.
  Status awaitEvent(capi::PJRT_Event *event, std::string_view what,
                    std::chrono::microseconds spin = std::chrono::microseconds(0)) const;
  /// Destroys `event` without waiting (NULL is ignored).
  void destroyEvent(capi::PJRT_Event *event) const;

  Plugin(const Plugin &) = delete;
  Plugin &operator=(const Plugin &) = delete;

private:
  Plugin() = default;
  void *slotPointer(capi::Slot slot) const;
  Status missingSlot(capi::Slot slot, std::string_view what) const;

  std::string path_;
  void *handle_ = nullptr;
  const capi::PJRT_Api *api_ = nullptr;
  int api_major_ = 0;
  int api_minor_ = 0;
  std::vector<NamedValue> attributes_;
};

/// Decodes `count` PJRT_NamedValues (strings and lists copied).
std::vector<NamedValue> decodeNamedValues(const capi::PJRT_NamedValue *values, size_t count);

} // namespace rs::pjrt
