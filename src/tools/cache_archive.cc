//===- tools/cache_archive.cc - `reactant-server cache export|import` ------===//
//
// The cache roots a configuration names, and the two subcommands; the archive itself is
// written by tools/cache_export.cc and read by tools/cache_import.cc.
//
//===----------------------------------------------------------------------===//
#include "tools/cache_command.h"

#include "config/node_config.h"
#include "runtime/executable_cache.h"
#include "support/build_info.h"
#include "tools/cache_archive_impl.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <ostream>
#include <set>

namespace rs::tools {

namespace fs = std::filesystem;
using cache_detail::exportArchive;
using cache_detail::importArchive;

Result<std::vector<CacheRoot>> resolveCacheRoots(const CacheSourceOptions &options) {
  config::Environment env = config::processEnvironment();
  Result<config::NodeConfig> node = Status(internalError() << "unset");
  if (!options.config.empty()) {
    node = config::loadNodeFile(options.config, env);
  } else {
    if (options.model_repo.empty())
      return invalidArgument() << "give a node file (--config node.yaml) or --model-repo DIR";
    node = config::parseNodeFile("model_repo: \"" + options.model_repo + "\"\n", "<command line>",
                                 env);
  }
  if (!node.isOk())
    return node.status();
  if (!options.model_repo.empty())
    node->model_repo = options.model_repo;
  const size_t listed = config::listedWorkerCount(*node);
  std::vector<std::string> repos, autotune;
  std::map<std::string, std::string> repo_cache_dir; // by repository: its worker's cache_dir
  auto addOnce = [](std::vector<std::string> &v, const std::string &dir) {
    const std::string abs = fs::absolute(dir).lexically_normal().string();
    if (std::find(v.begin(), v.end(), abs) == v.end())
      v.push_back(abs);
  };
  for (size_t i = 0; i < std::max<size_t>(listed, 1); ++i) {
    RS_ASSIGN_OR_RETURN(config::WorkerConfig w,
                        config::resolveWorker(*node, static_cast<int64_t>(i)));
    const std::string cache_dir = options.cache_dir.empty() ? w.cache_dir : options.cache_dir;
    for (const std::string &d : w.model_dirs) {
      addOnce(repos, d);
      // The first worker that lists a repository says where its entries are.
      repo_cache_dir.emplace(
          fs::absolute(d).lexically_normal().string(),
          cache_dir.empty() ? "" : fs::absolute(cache_dir).lexically_normal().string());
    }
    if (options.autotune_cache_dir.empty() && !w.runtime.autotune_cache_dir.empty() &&
        w.runtime.autotune_cache.value_or(true))
      addOnce(autotune, w.runtime.autotune_cache_dir);
  }
  if (!options.autotune_cache_dir.empty())
    addOnce(autotune, options.autotune_cache_dir);
  std::vector<CacheRoot> roots;
  std::set<std::string> repository_entries;
  for (size_t i = 0; i < repos.size(); ++i) {
    const std::string &cache_dir = repo_cache_dir[repos[i]];
    std::string own = runtime::repositoryCacheDir(repos[i], cache_dir);
    if (!repository_entries.insert(own).second)
      own.clear(); // two repositories sharing one cache_dir: its .cache/ is exported once
    roots.push_back({"model_repos/" + std::to_string(i), "model_repo", repos[i], cache_dir, own});
  }
  for (size_t i = 0; i < autotune.size(); ++i)
    roots.push_back({"autotune_cache/" + std::to_string(i), "autotune_cache", autotune[i], "", ""});
  return roots;
}

int runCacheExport(const CacheSourceOptions &options, const std::string &archive, std::ostream &out,
                   std::ostream &err) {
  Result<std::vector<CacheRoot>> roots = resolveCacheRoots(options);
  Status s =
      roots.isOk() ? exportArchive(*roots, archive, thisBuild().toString(), out) : roots.status();
  if (!s.isOk()) {
    err << "cache export: " << s.message() << "\n";
    return kExitError;
  }
  return kExitOk;
}

int runCacheImport(const CacheSourceOptions &options, const std::string &archive, std::ostream &out,
                   std::ostream &err) {
  Result<std::vector<CacheRoot>> roots = resolveCacheRoots(options);
  Status s = roots.isOk() ? importArchive(*roots, archive, out) : roots.status();
  if (!s.isOk()) {
    err << "cache import: " << s.message() << "\n";
    return kExitError;
  }
  return kExitOk;
}

} // namespace rs::tools
