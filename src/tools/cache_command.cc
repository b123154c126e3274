//===- tools/cache_command.cc - `reactant-server cache verify` and the CLI --===//
#include "tools/cache_command.h"

#include "client/kserve_client.h"

#include <httplib.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

namespace rs::tools {
namespace {

constexpr int64_t kDefaultTimeoutMs = 10000;
constexpr std::string_view kHitsSeries = "worker_executable_cache_hits_total";
constexpr std::string_view kMissesSeries = "worker_executable_cache_misses_total";

/// The sum of every sample of `series` (with or without labels) in a Prometheus text
/// exposition; NotFound when it has none.
Result<int64_t> seriesValue(const std::string &text, std::string_view series) {
  std::istringstream in(text);
  std::string line;
  bool found = false;
  double sum = 0;
  while (std::getline(in, line)) {
    if (line.compare(0, series.size(), series) != 0 || line.size() == series.size())
      continue;
    const char next = line[series.size()];
    if (next != ' ' && next != '{')
      continue;
    const size_t sp = line.rfind(' ');
    sum += std::strtod(line.c_str() + sp + 1, nullptr);
    found = true;
  }
  if (!found)
    return notFound() << "the metrics have no " << series << " series";
  return static_cast<int64_t>(sum);
}

/// Reads the log lines of the last start (from the last `Effective configuration` line
/// on) into `figures`.
Status readLog(const std::string &path, CacheVerifyFigures *figures) {
  std::ifstream in(path);
  if (!in)
    return notFound() << "cannot read the log " << path;
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("Effective configuration") != std::string::npos)
      lines.clear();
    lines.push_back(line);
  }
  for (const std::string &l : lines) {
    if (l.find("executable cache: hit ") != std::string::npos)
      ++figures->log_hits;
    else if (l.find("executable cache: miss ") != std::string::npos ||
             (l.find("TF32 probe leg=") != std::string::npos &&
              l.find("executable_cache=miss") != std::string::npos))
      figures->log_misses.push_back(l);
  }
  return Status::ok();
}

Result<std::string> httpGet(httplib::Client &client, const std::string &path, int *status) {
  httplib::Result r = client.Get(path);
  if (!r)
    return unavailable() << "GET " << path << ": " << httplib::to_string(r.error());
  *status = r->status;
  return r->body;
}

int verify(const CacheVerifyOptions &options, std::ostream &out, std::ostream &err,
           CacheVerifyFigures &fig) {
  Result<HostPort> hp = client::parseServerUrl(options.metrics_url, client::WireProtocol::kHttp);
  if (!hp.isOk()) {
    err << "cache verify: --metrics-url: " << hp.status().message() << "\n";
    return kExitError;
  }
  httplib::Client client(hp->host, hp->port);
  const int64_t timeout_ms = options.timeout_ms > 0 ? options.timeout_ms : kDefaultTimeoutMs;
  client.set_connection_timeout(std::chrono::milliseconds(timeout_ms));
  client.set_read_timeout(std::chrono::milliseconds(timeout_ms));
  const std::string where = hp->host + ":" + std::to_string(hp->port);
  int ready_status = 0, metrics_status = 0;
  Result<std::string> ready = httpGet(client, "/readyz", &ready_status);
  Result<std::string> metrics =
      ready.isOk() ? httpGet(client, "/metrics", &metrics_status) : ready.status();
  if (!metrics.isOk()) {
    err << "cache verify: worker metrics at " << where << ": " << metrics.status().message()
        << "\n";
    return kExitError;
  }
  if (metrics_status != 200) {
    err << "cache verify: GET /metrics at " << where << " answered " << metrics_status << "\n";
    return kExitError;
  }
  fig.ready = ready_status == 200;
  Result<int64_t> hits = seriesValue(*metrics, kHitsSeries);
  Result<int64_t> misses = seriesValue(*metrics, kMissesSeries);
  if (!hits.isOk() || !misses.isOk()) {
    err << "cache verify: " << (hits.isOk() ? misses : hits).status().message() << " (" << where
        << " is not a reactant-server worker's metrics port?)\n";
    return kExitError;
  }
  fig.hits = *hits;
  fig.misses = *misses;
  if (!options.log_path.empty()) {
    if (Status s = readLog(options.log_path, &fig); !s.isOk()) {
      err << "cache verify: " << s.message() << "\n";
      return kExitError;
    }
  }

  std::vector<std::string> failures;
  out << "worker " << where << ": ready=" << (fig.ready ? "true" : "false")
      << " executable cache hits=" << fig.hits << " misses=" << fig.misses << "\n";
  if (!fig.ready)
    failures.push_back("the worker is not ready (a model failed to load or is still loading)");
  if (fig.misses != 0)
    failures.push_back(std::to_string(fig.misses) +
                       " program(s) were compiled, not loaded from the executable cache");
  if (fig.hits == 0)
    failures.push_back("no program was loaded from the executable cache");
  if (!options.log_path.empty()) {
    out << "log " << options.log_path << " (last start): " << fig.log_hits << " hit lines, "
        << fig.log_misses.size() << " miss lines\n";
    for (const std::string &l : fig.log_misses)
      out << "  " << l << "\n";
    if (!fig.log_misses.empty())
      failures.push_back("the log shows " + std::to_string(fig.log_misses.size()) +
                         " cache miss(es)");
    if (fig.log_hits != fig.hits)
      failures.push_back("the log shows " + std::to_string(fig.log_hits) + " hit(s), the metrics " +
                         std::to_string(fig.hits) + " (is it this worker's log?)");
  }
  if (!failures.empty()) {
    for (const std::string &f : failures)
      out << "FAIL: " << f << "\n";
    return kExitCheckFailed;
  }
  out << "PASS: every program (" << fig.hits << ") was loaded from the executable cache\n";
  return kExitOk;
}

} // namespace

int runCacheVerify(const CacheVerifyOptions &options, std::ostream &out, std::ostream &err,
                   CacheVerifyFigures *figures) {
  CacheVerifyFigures fig;
  const int rc = verify(options, out, err, fig);
  if (figures)
    *figures = std::move(fig);
  return rc;
}

void addCacheCommand(CLI::App &app) {
  CLI::App *cache =
      app.add_subcommand("cache", "Back up, restore and check the executable and autotune caches");
  cache->require_subcommand(1);

  struct ArchiveArgs {
    CacheSourceOptions source;
    std::string archive;
  };
  auto addSource = [](CLI::App *cmd, ArchiveArgs *args) {
    cmd->add_option("archive", args->archive, "The archive (tar)")->required();
    cmd->add_option("-c,--config", args->source.config, "Node file (YAML)");
    cmd->add_option("--model-repo", args->source.model_repo,
                    "Model repository (overrides model_repo)");
    cmd->add_option("--cache-dir", args->source.cache_dir,
                    "Where the executable cache entries are (overrides cache_dir)");
    cmd->add_option("--autotune-cache-dir", args->source.autotune_cache_dir,
                    "Autotune cache directory (overrides runtime.autotune_cache_dir)");
  };
  auto export_args = std::make_shared<ArchiveArgs>();
  CLI::App *exp = cache->add_subcommand(
      "export", "Write every bundle's executable cache and the autotune cache to ARCHIVE");
  addSource(exp, export_args.get());
  exp->callback([export_args] {
    std::exit(runCacheExport(export_args->source, export_args->archive, std::cout, std::cerr));
  });
  auto import_args = std::make_shared<ArchiveArgs>();
  CLI::App *imp = cache->add_subcommand(
      "import", "Check ARCHIVE against its manifest of SHA-256 sums and restore the caches");
  addSource(imp, import_args.get());
  imp->callback([import_args] {
    std::exit(runCacheImport(import_args->source, import_args->archive, std::cout, std::cerr));
  });
  auto verify_args = std::make_shared<CacheVerifyOptions>();
  CLI::App *ver = cache->add_subcommand(
      "verify", "Check that a running worker loaded every program from the executable cache");
  ver->add_option("--metrics-url", verify_args->metrics_url, "The worker's metrics port, host:port")
      ->required();
  ver->add_option("--log", verify_args->log_path, "The worker's log file");
  ver->add_option("--timeout-ms", verify_args->timeout_ms, "Per request (default 10000)");
  ver->callback([verify_args] { std::exit(runCacheVerify(*verify_args, std::cout, std::cerr)); });
}

} // namespace rs::tools
