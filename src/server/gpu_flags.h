//===- server/gpu_flags.h - The XLA flags of the GPU worker's compiles ----===//
//
// What every GPU compile of a worker gets besides the program (docs/gpu.md "XLA flags"):
//   - runtime.xla_flags, as given;
//   - `xla_gpu_autotune_level=0` when runtime.autotune is false;
//   - the autotune cache when runtime.autotune_cache_dir is set (and runtime.autotune_cache
//     is not false), all in that one directory: XLA's per-fusion cache
//     (`xla_gpu_per_fusion_autotune_cache_dir`) and the cache of its autotuner pass
//     (`xla_gpu_experimental_autotuner_cache_dir`), one file per tuned fusion; and, with
//     autotuning on, XLA's whole-process results file (`xla_autotune_results.textproto`),
//     written after every compile (`xla_gpu_dump_autotune_results_to`) and read at the
//     first compile of a later start (`xla_gpu_load_autotune_results_from`).
//
// The autotune level is part of the executable-cache key (it decides the compiled
// program); the autotune cache paths are not (they say where choices are kept, and a start
// that reads them compiles the program the start that wrote them compiled).
//
// Not set by default: `xla_gpu_enable_command_buffer` with CONVOLUTION. It makes a
// convolutional network's run one graph launch instead of one launch per convolution
// (`../shared/reference/pjrt-fast-path.md` 3.6), but with this plugin an executable
// compiled so and loaded back from the executable cache fails its first run ("Recorded
// commands are not empty ... can be recorded into the command buffer at most once",
// docs/gpu.md); set it in runtime.xla_flags only with runtime.executable_cache: false.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "config/worker_config.h"
#include "support/status.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace rs::server {

/// runtime.xla_flags and the autotune level (file comment): the flags that decide the
/// compiled program, by name.
std::map<std::string, std::string> gpuCompileFlags(const config::RuntimeConfig &rt);

/// gpuCompileFlags plus the autotune cache flags, as "--name=value" joined by spaces.
/// Creates runtime.autotune_cache_dir if missing (FailedPrecondition when it cannot) and
/// logs `autotune cache: loaded N results from DIR` when the directory holds any.
Result<std::string> gpuXlaFlags(const config::RuntimeConfig &rt);

/// The whole-process autotune results file in autotune cache directory `dir`.
std::string autotuneResultsPath(const std::string &dir);

/// The number of results in the text of an autotune results file (XLA's AutotuneResults
/// text proto: a `version:` line and one top-level `results {` block per choice), or -1
/// when `text` is not one.
int64_t countAutotuneResults(std::string_view text);

/// What an autotune cache directory holds: the results in its results file plus one per
/// other regular file (a per-fusion entry), and a SHA-256 over every regular file's name
/// and content in name order (64 hex digits; the digest of nothing for an empty or
/// missing directory).
struct AutotuneCacheContents {
  int64_t results = 0;
  int64_t files = 0;
  std::string sha256;
};
AutotuneCacheContents inspectAutotuneCache(const std::string &dir);

} // namespace rs::server
