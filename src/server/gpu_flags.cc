//===- server/gpu_flags.cc - The XLA flags of the GPU worker's compiles ---===//
#include "server/gpu_flags.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace rs::server {
namespace {

/// XLA's default command-buffer op set plus CONVOLUTION (file comment).
constexpr char kCommandBufferOps[] =
    "FUSION,CUBLAS,CUBLASLT,CUDNN,CUSTOM_CALL,CONDITIONAL,DYNAMIC_SLICE_FUSION,CONVOLUTION";

std::string joinFlags(const std::map<std::string, std::string> &flags) {
  std::string text;
  for (const auto &[name, value] : flags)
    text += (text.empty() ? "" : " ") + ("--" + name + "=" + value);
  return text;
}

} // namespace

std::map<std::string, std::string> gpuCompileFlags(const config::RuntimeConfig &rt) {
  std::map<std::string, std::string> flags = rt.xla_flags;
  if (!rt.autotune)
    flags["xla_gpu_autotune_level"] = "0";
  flags.try_emplace("xla_gpu_enable_command_buffer", kCommandBufferOps);
  return flags;
}

std::string autotuneResultsPath(const std::string &dir) {
  return (std::filesystem::path(dir) / "xla_autotune_results.textproto").string();
}

int64_t countAutotuneResults(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string line;
  bool versioned = false;
  int64_t results = 0;
  while (std::getline(in, line)) {
    if (line.rfind("version:", 0) == 0)
      versioned = true;
    else if (line.rfind("results {", 0) == 0)
      ++results;
  }
  return versioned ? results : -1;
}

Result<std::string> gpuXlaFlags(const config::RuntimeConfig &rt) {
  std::map<std::string, std::string> flags = gpuCompileFlags(rt);
  if (rt.autotune_cache_dir.empty() || !rt.autotune_cache.value_or(true))
    return joinFlags(flags);
  std::error_code ec;
  std::filesystem::create_directories(rt.autotune_cache_dir, ec);
  if (ec)
    return failedPrecondition() << "runtime.autotune_cache_dir '" << rt.autotune_cache_dir
                                << "': cannot create it: " << ec.message();
  flags["xla_gpu_per_fusion_autotune_cache_dir"] = rt.autotune_cache_dir;
  if (!rt.autotune)
    return joinFlags(flags); // nothing is autotuned, so nothing to keep or read
  const std::string path = autotuneResultsPath(rt.autotune_cache_dir);
  flags["xla_gpu_dump_autotune_results_to"] = path;
  std::ifstream in(path, std::ios::binary);
  if (in) {
    std::ostringstream text;
    text << in.rdbuf();
    const int64_t results = countAutotuneResults(text.str());
    if (results > 0) {
      // XLA reads the file once per process, at the first compile.
      flags["xla_gpu_load_autotune_results_from"] = path;
      spdlog::info("autotune cache: loaded {} results from {}", results, rt.autotune_cache_dir);
    } else {
      spdlog::warn("autotune cache: {} is not an autotune results file (or holds none); "
                   "autotuning afresh and replacing it",
                   path);
    }
  }
  return joinFlags(flags);
}

} // namespace rs::server
