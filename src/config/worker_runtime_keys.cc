//===- config/worker_runtime_keys.cc - A worker's runtime.* rows ----------===//
//
// One row per runtime.* key of `global:` / a worker's override block: the backend, the
// device and its memory, event waits, the weight cache, autotuning, numerics, the regulated
// profile, batch sizes, the executable cache, CPU threads and XLA flags, in the order they
// are read and documented.
//
//===----------------------------------------------------------------------===//
#include "config/worker_keys_impl.h"

#include "config/key_reader.h"

// Each row names only the fields it sets (designated initializers, the rest keep their
// defaults); GCC 12's -Wextra would still ask for every field.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace rs::config::detail {
namespace {

using W = WorkerConfig;
using T = ValueType;

constexpr Choice kBackends[] = {
    {"cpu", int(Backend::kCpu)}, {"cuda", int(Backend::kCuda)}, {"gpu", int(Backend::kCuda), true}};
constexpr Choice kNumerics[] = {
    {"f32", int(Numerics::kF32)}, {"auto", int(Numerics::kAuto)}, {"tf32", int(Numerics::kTf32)}};
constexpr Choice kProfiles[] = {{"none", int(Profile::kNone)},
                                {"regulated", int(Profile::kRegulated)}};
constexpr Choice kBatchSizes[] = {{"all", int(BatchSizes::kAll)},
                                  {"largest", int(BatchSizes::kLargest)}};

} // namespace

std::vector<Key<W>> runtimeKeyRows() {
  return {
      // --- runtime
      {{.path = "runtime.backend",
        .type = T::kChoice,
        .fallback = "cpu",
        .choices = kBackends,
        .doc = "used: the CPU executor or the PJRT GPU backend (docs/gpu.md)"},
       [](W &c) { return field(c.runtime.backend); }},
      {{.path = "runtime.device_ordinal",
        .type = T::kInteger,
        .fallback = "0",
        .default_doc = "`0` (a worker's `gpu:`)",
        .ints = {0, 1 << 20},
        .doc = "GPU: the device the PJRT client uses"},
       [](W &c) { return field(c.runtime.device_ordinal); }},
      {{.path = "runtime.mem_fraction",
        .type = T::kNumber,
        .fallback = "0.9",
        .numbers = {0, 1, true, false},
        .doc = "GPU: the share of device memory the PJRT client's allocator may take"},
       [](W &c) { return field(c.runtime.mem_fraction); }},
      {{.path = "runtime.preallocate",
        .type = T::kBoolean,
        .fallback = "true",
        .doc = "GPU: allocate `mem_fraction` of device memory at startup"},
       [](W &c) { return field(c.runtime.preallocate); }},
      {{.path = "runtime.event_spin_us",
        .type = T::kInteger,
        .fallback = "20000",
        .ints = {0, 1000000},
        .values_doc = "0..1000000 (microseconds)",
        .doc = "GPU (ours): how long the thread waiting for a GPU execution, upload or "
               "read-back polls the PJRT event before it sleeps; 0 = sleep at once (docs/gpu.md)"},
       [](W &c) { return field(c.runtime.event_spin_us); }},
      {{.path = "runtime.completion_polling",
        .type = T::kBoolean,
        .fallback = "true",
        .doc = "GPU (ours): the waiting thread sees an execution finish by polling a device "
               "event of its own (CUDA: libcuda.so.1 and the plugin's stream extension) "
               "instead of the PJRT event; false, or where the driver lacks it: the PJRT "
               "event (docs/gpu.md)"},
       [](W &c) { return field(c.runtime.completion_polling); }},
      {{.path = "runtime.allow_cpu_fallback",
        .type = T::kBoolean,
        .fallback = "true",
        .doc = "used: `cuda` unavailable -> the CPU backend with a warning, else startup fails"},
       [](W &c) { return field(c.runtime.allow_cpu_fallback); }},
      {{.path = "runtime.weight_cache_fraction",
        .type = T::kNumber,
        .fallback = "1.0",
        .numbers = {0, 1, false, false},
        .values_doc = "[0, 1]; 0 = off",
        .doc = "used on the CPU backend: weight pool = min(fraction, 1 - wiggle) x host memory; "
               "0 turns the on-demand weight cache off (docs/model_repository.md)"},
       [](W &c) { return field(c.runtime.weight_cache_fraction); }},
      {{.path = "runtime.weight_cache_wiggle_fraction",
        .type = T::kNumber,
        .fallback = "0.1",
        .numbers = {0, 1, false, true},
        .doc = "used on the CPU backend: caps the weight pool at (1 - wiggle) of host memory"},
       [](W &c) { return field(c.runtime.weight_cache_wiggle_fraction); }},
      {{.path = "runtime.autotune",
        .type = T::kBoolean,
        .fallback = "true",
        .doc = "GPU; cache key: `false` = `xla_gpu_autotune_level=0`"},
       [](W &c) { return field(c.runtime.autotune); }},
      {{.path = "runtime.autotune_cache",
        .type = T::kBoolean,
        .default_doc = "unset (inherit)",
        .doc = "GPU: `false` turns XLA's autotune cache off even with `autotune_cache_dir`"},
       [](W &c) { return field(c.runtime.autotune_cache); }},
      {{.path = "runtime.autotune_cache_dir",
        .type = T::kText,
        .default_doc = "`\"\"` (inherit)",
        .values_doc = "directory",
        .doc = "GPU: XLA's per-fusion autotune cache directory (created when missing)"},
       [](W &c) { return field(c.runtime.autotune_cache_dir); }},
      {{.path = "runtime.numerics",
        .type = T::kChoice,
        .fallback = "auto",
        .choices = kNumerics,
        .doc = "used: the numerics pass on every program (docs/reproducibility.md); `tf32` with "
               "`backend: cpu` is a configuration error"},
       [](W &c) { return field(c.runtime.numerics); }},
      {{.path = "runtime.shared_host_weights",
        .type = T::kBoolean,
        .fallback = "false",
        .doc = "accepted: validated and logged, no effect in this server"},
       [](W &c) { return field(c.runtime.shared_host_weights); }},
      {{.path = "runtime.shared_host_weights_mode",
        .type = T::kText,
        .fallback = "666",
        .values_doc = "octal permission string <= 777",
        .doc = "accepted: validated and logged, no effect in this server"},
       [](W &c) { return field(c.runtime.shared_host_weights_mode); }},
      {{.path = "runtime.profile",
        .type = T::kChoice,
        .fallback = "none",
        .choices = kProfiles,
        .doc = "used: see \"Resolution order\"; logs the `REGULATED PROFILE` banner"},
       [](W &c) { return field(c.runtime.profile); }},
      {{.path = "runtime.batch_sizes",
        .type = T::kChoice,
        .fallback = "all",
        .default_doc = "`all` (`largest` under the profile)",
        .choices = kBatchSizes,
        .doc = "used: `all` runs the smallest compiled size that holds the rows; `largest` "
               "loads only the largest program and runs every dispatch on it, zero-padded"},
       [](W &c) { return field(c.runtime.batch_sizes); }},
      {{.path = "runtime.executable_cache",
        .type = T::kBoolean,
        .fallback = "true",
        .doc = "used: compiled programs kept in each bundle's `.cache/` (or under `cache_dir`)"},
       [](W &c) { return field(c.runtime.executable_cache); }},
      {{.path = "runtime.pjrt_plugin",
        .type = T::kText,
        .default_doc = "`\"\"` (discover)",
        .values_doc = "path of a PJRT plugin `.so`",
        .doc = "GPU (ours): the plugin to load (docs/gpu.md)"},
       [](W &c) { return field(c.runtime.pjrt_plugin); }},
      {{.path = "runtime.executable_cache_key_file",
        .type = T::kText,
        .default_doc = "`\"\"` (entries carry a content hash only)",
        .values_doc = "path of a file whose bytes are the key",
        .doc = "used (ours): executable cache entries are authenticated by an HMAC-SHA256 "
               "under this key; a forged entry is a logged miss (docs/operations.md)"},
       [](W &c) { return field(c.runtime.executable_cache_key_file); }},
      {{.path = "runtime.cpu_threads",
        .type = T::kInteger,
        .fallback = "0",
        .default_doc = "`0` (all cores)",
        .ints = {0, 4096},
        .doc = "used (ours): CPU executor threads (results are bit-identical for any count)"},
       [](W &c) { return field(c.runtime.cpu_threads); }},
      {{.path = "runtime.xla_flags",
        .type = T::kXlaFlags,
        .default_doc = "`{}` (`{xla_gpu_exclude_nondeterministic_ops: true}` under the profile)",
        .values_doc = "map of XLA DebugOptions field name -> value, names checked against the "
                      "options of the validated plugin (`name=value` items in the variable)",
        .doc = "GPU; cache key"},
       [](W &c) { return field(c.runtime.xla_flags); }},
  };
}

} // namespace rs::config::detail
