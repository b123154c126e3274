//===- hooks/hook_factory.h - Start a bundle's hooks from the hooks.* keys ---===//
//
// The runtime::ModelExtensionFactory a model repository uses for bundles with model.py
// (runtime/model_extension.h): resolves the interpreter and the runner (hooks/hook_paths.h),
// starts hooks.processes_per_model processes (hooks/hook_pool.h) and, under
// runtime.profile regulated, runs the determinism warm-up (hooks/hook_warmup.h).
//
// Thread safety: the factory may be called concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "config/worker_config.h"
#include "runtime/model_extension.h"

namespace rs::hooks {

/// The factory for `hooks` (a worker's hooks.* settings); `regulated` adds the warm-up.
runtime::ModelExtensionFactory hookFactory(const config::HooksConfig &hooks, bool regulated);

} // namespace rs::hooks
