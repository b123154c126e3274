//===- config/worker_hooks_keys.cc - A worker's hooks.* rows ----------------===//
//
// One row per hooks.* key: how the model.py pre/post-processing hooks of a bundle run
// (docs/hooks.md): the interpreter, the processes per model, the time a call may take, how
// many runs of a meta model go at once, the memory a process may hold, and the modules the
// hooks may import (their path and the allowed packages).
//
//===----------------------------------------------------------------------===//
#include "config/worker_keys_impl.h"

#include "config/key_reader.h"

// Each row names only the fields it sets (designated initializers, the rest keep their
// defaults); GCC 12's -Wextra would still ask for every field.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace rs::config::detail {

std::vector<Key<WorkerConfig>> hookKeyRows() {
  using W = WorkerConfig;
  using T = ValueType;
  return {
      {{.path = "hooks.python",
        .type = T::kText,
        .default_doc = "`\"\"` (the checkout's `.venv/bin/python`, else `python3`)",
        .values_doc = "path of a Python 3 interpreter with numpy",
        .doc = "used (ours): the interpreter of the model.py hook processes (docs/hooks.md)"},
       [](W &c) { return field(c.hooks.python); }},
      {{.path = "hooks.processes_per_model",
        .type = T::kInteger,
        .fallback = "1",
        .ints = {1, 64},
        .doc = "used (ours): hook processes per model with model.py; each runs one call at a "
               "time"},
       [](W &c) { return field(c.hooks.processes_per_model); }},
      {{.path = "hooks.timeout_ms",
        .type = T::kInteger,
        .fallback = "10000",
        .ints = {1, 3600000},
        .values_doc = "1..3600000 (milliseconds)",
        .doc = "used (ours): the longest one hook call may run (the request's deadline when "
               "earlier); past it the process is killed and restarted"},
       [](W &c) { return field(c.hooks.timeout_ms); }},
      {{.path = "hooks.meta_concurrency",
        .type = T::kInteger,
        .fallback = "2",
        .ints = {1, 1024},
        .doc = "used: runs of one meta model's `run` at once (the reference's MetaGate; its "
               "`REACTANT_META_CONCURRENCY` variable is not read: set this key); a request past "
               "them waits, at most until its deadline (docs/hooks.md)"},
       [](W &c) { return field(c.hooks.meta_concurrency); }},
      {{.path = "hooks.max_memory_mb",
        .type = T::kInteger,
        .fallback = "2048",
        .ints = {0, 16777216},
        .values_doc = "0..16777216 (MiB); 0 = no limit",
        .doc = "used (ours): the resident memory a hook process may hold, read after every "
               "frame it answers; a process above it is restarted before its next call "
               "(docs/hooks.md)"},
       [](W &c) { return field(c.hooks.max_memory_mb); }},
      {{.path = "hooks.python_path",
        .type = T::kTextList,
        .default_doc = "`[]`",
        .values_doc = "absolute directories (`a:b` in the variable)",
        .doc = "used (ours): put on the hook processes' `sys.path` after the bundle's own "
               "directory; part of the hooks' identity (docs/hooks.md)"},
       [](W &c) { return field(c.hooks.python_path); }},
      {{.path = "hooks.allowed_packages",
        .type = T::kTextList,
        .default_doc = "`[]` (any)",
        .values_doc = "top-level module names (`a:b` in the variable)",
        .doc = "used (ours): when set, the bundle's code may import only these, the standard "
               "library, numpy and its own modules; a guard against undeclared dependencies, "
               "not a sandbox; part of the hooks' identity (docs/hooks.md)"},
       [](W &c) { return field(c.hooks.allowed_packages); }},
  };
}

} // namespace rs::config::detail
