//===- server/gpu_flags.cc - The XLA flags of the GPU worker's compiles ---===//
#include "server/gpu_flags.h"

#include "pjrt/compile_options.h"
#include "support/digest.h"
#include "support/file.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <vector>

namespace rs::server {
namespace {

constexpr char kResultsFile[] = "xla_autotune_results.textproto";

/// The bytes of `path`, or "" when it cannot be read (a cache file is optional).
std::string readOrEmpty(const std::string &path) {
  Result<std::string> bytes = readWholeFile(path);
  return bytes.isOk() ? std::move(bytes).value() : std::string();
}

} // namespace

std::map<std::string, std::string> gpuCompileFlags(const config::RuntimeConfig &rt) {
  std::map<std::string, std::string> flags = rt.xla_flags;
  if (!rt.autotune)
    flags["xla_gpu_autotune_level"] = "0";
  return flags;
}

std::string autotuneResultsPath(const std::string &dir) {
  return (std::filesystem::path(dir) / kResultsFile).string();
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

AutotuneCacheContents inspectAutotuneCache(const std::string &dir) {
  AutotuneCacheContents c;
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (std::filesystem::recursive_directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec))
    if (it->is_regular_file(ec))
      files.push_back(it->path());
  std::sort(files.begin(), files.end());
  std::string material;
  for (const std::filesystem::path &f : files) {
    const std::string bytes = readOrEmpty(f.string());
    const std::string name = std::filesystem::relative(f, dir, ec).generic_string();
    material += name + '\n' + sha256Hex(bytes) + '\n';
    ++c.files;
    if (f.filename() == kResultsFile)
      c.results += std::max<int64_t>(0, countAutotuneResults(bytes));
    else
      ++c.results;
  }
  c.sha256 = sha256Hex(material);
  return c;
}

Result<std::string> gpuXlaFlags(const config::RuntimeConfig &rt) {
  std::map<std::string, std::string> flags = gpuCompileFlags(rt);
  if (rt.autotune_cache_dir.empty() || !rt.autotune_cache.value_or(true))
    return pjrt::formatXlaFlags(flags);
  const std::string &dir = rt.autotune_cache_dir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return failedPrecondition() << "runtime.autotune_cache_dir '" << dir
                                << "': cannot create it: " << ec.message();
  flags["xla_gpu_per_fusion_autotune_cache_dir"] = dir;
  flags["xla_gpu_experimental_autotuner_cache_dir"] = dir;
  if (!rt.autotune)
    return pjrt::formatXlaFlags(flags); // nothing is autotuned, so nothing to keep or read
  const std::string path = autotuneResultsPath(dir);
  flags["xla_gpu_dump_autotune_results_to"] = path;
  if (std::filesystem::exists(path, ec)) {
    if (countAutotuneResults(readOrEmpty(path)) > 0)
      flags["xla_gpu_load_autotune_results_from"] = path; // read once, at the first compile
    else
      spdlog::warn("autotune cache: {} holds no autotune results; it is replaced after the "
                   "next compile",
                   path);
  }
  const AutotuneCacheContents cached = inspectAutotuneCache(dir);
  if (cached.results > 0)
    spdlog::info("autotune cache: loaded {} results from {} ({} files, sha256 {})", cached.results,
                 dir, cached.files, cached.sha256);
  return pjrt::formatXlaFlags(flags);
}

} // namespace rs::server
