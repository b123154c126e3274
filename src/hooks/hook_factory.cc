//===- hooks/hook_factory.cc - Start a bundle's hooks from the hooks.* keys --===//
#include "hooks/hook_factory.h"

#include "hooks/hook_paths.h"
#include "hooks/hook_pool.h"
#include "hooks/hook_warmup.h"

namespace rs::hooks {

runtime::ModelExtensionFactory hookFactory(const config::HooksConfig &hooks, bool regulated) {
  return [hooks, regulated](const std::string &name, const std::string &dir,
                            const bundle::Manifest &manifest)
             -> Result<std::shared_ptr<const runtime::ModelExtension>> {
    HookOptions options;
    RS_ASSIGN_OR_RETURN(options.python, resolveHookPython(hooks.python));
    RS_ASSIGN_OR_RETURN(options.runner, findHookRunner());
    options.processes = hooks.processes_per_model;
    options.timeout = std::chrono::milliseconds(hooks.timeout_ms);
    options.max_memory_mb = hooks.max_memory_mb;
    options.python_path = hooks.python_path;
    options.allowed_packages = hooks.allowed_packages;
    RS_ASSIGN_OR_RETURN(std::shared_ptr<HookPool> pool, HookPool::start(name, dir, options));
    const bool meta = manifest.kind == bundle::BundleKind::kMeta;
    if (meta != pool->has(HookStage::kRun))
      return failedPrecondition() << dir << "/model.py: "
                                  << (meta ? "a kind: meta bundle needs register_meta_model"
                                           : "register_meta_model needs kind: meta in the "
                                             "manifest");
    // Under the regulated profile a hook must give the same bytes for the same input.
    if (regulated)
      RS_RETURN_IF_ERROR(checkHooksDeterministic(*pool, manifest, dir));
    return std::shared_ptr<const runtime::ModelExtension>(std::move(pool));
  };
}

} // namespace rs::hooks
