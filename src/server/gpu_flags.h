//===- server/gpu_flags.h - The XLA flags of the GPU worker's compiles ----===//
//
// What every GPU compile of a worker gets besides the program (docs/gpu.md "XLA flags"):
//   - runtime.xla_flags, as given;
//   - `xla_gpu_autotune_level=0` when runtime.autotune is false;
//   - the server's defaults, unless runtime.xla_flags sets the same flag:
//     `xla_gpu_enable_command_buffer` = XLA's default command-buffer (CUDA graph) set plus
//     CONVOLUTION, so that a convolutional network's run is launched as a few graphs
//     instead of one kernel launch per convolution (`../shared/reference/pjrt-fast-path.md`
//     3.6: the launch work of a resnet run, not the device, was most of its latency);
//   - the autotune cache when runtime.autotune_cache_dir is set (and runtime.autotune_cache
//     is not false): XLA's per-fusion cache directory, and with autotuning on its
//     whole-process results file in that directory, written after every compile
//     (`xla_gpu_dump_autotune_results_to`) and read at the first compile of a later start
//     (`xla_gpu_load_autotune_results_from`). The per-fusion directory alone does not keep
//     every autotuned choice (cuBLAS and cuDNN algorithm picks), so a start without the
//     executable cache could choose other kernels; the results file keeps them all.
//
// The defaults and the autotune level are part of the executable-cache key (they decide
// the compiled program); the autotune cache paths are not (they decide where choices are
// kept, and a start that loads them compiles the same program as the start that wrote them).
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

/// runtime.xla_flags, the autotune level and the server's defaults (file comment): the
/// flags that decide the compiled program, by name.
std::map<std::string, std::string> gpuCompileFlags(const config::RuntimeConfig &rt);

/// gpuCompileFlags plus the autotune cache flags, as "--name=value" joined by spaces.
/// Creates runtime.autotune_cache_dir if missing (FailedPrecondition when it cannot) and
/// logs `autotune cache: loaded N results from DIR` when it reads a results file.
Result<std::string> gpuXlaFlags(const config::RuntimeConfig &rt);

/// The autotune results file in autotune cache directory `dir`.
std::string autotuneResultsPath(const std::string &dir);

/// The number of results in the text of an autotune results file (XLA's AutotuneResults
/// text proto: a `version:` line and one top-level `results {` block per choice), or -1
/// when `text` is not one.
int64_t countAutotuneResults(std::string_view text);

} // namespace rs::server
