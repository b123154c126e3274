//===- pjrt/client_impl.h - Private: what the client's files share --------===//
//
// Used by client.cc (the client, compiling and loading executables) and
// loaded_executable.cc (running, serialising and fingerprinting them): access to the
// PJRT_Executable behind a loaded executable. Not part of the public API.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pjrt/plugin.h"
#include "support/status.h"

namespace rs::pjrt::detail {

/// Runs `fn` on the PJRT_Executable of `loaded`, destroying it afterwards.
template <typename Fn>
Status withExecutable(const Plugin &plugin, capi::PJRT_LoadedExecutable *loaded, Fn &&fn) {
  capi::PJRT_LoadedExecutable_GetExecutable_Args get{};
  get.struct_size = sizeof get;
  get.loaded_executable = loaded;
  RS_RETURN_IF_ERROR(plugin.call(capi::Slot::kLoadedExecutableGetExecutable, &get,
                                 "PJRT_LoadedExecutable_GetExecutable"));
  Status st = fn(get.executable);
  capi::PJRT_Executable_Destroy_Args destroy{};
  destroy.struct_size = sizeof destroy;
  destroy.executable = get.executable;
  (void)plugin.call(capi::Slot::kExecutableDestroy, &destroy, "PJRT_Executable_Destroy");
  return st;
}

} // namespace rs::pjrt::detail
