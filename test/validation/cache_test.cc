//===- test/validation/cache_test.cc - cache export / import / verify ------===//
//
// The cache acceptance cases of issue 10 on the CPU: export the executable caches and the
// autotune cache, delete them, import, restart: `cache verify` passes (miss counter 0,
// every program a hit, in the metrics and in the log); a first start without caches
// fails verify; a corrupted archive, and one whose member is not a cache entry, are
// refused naming the member, and nothing is written.
//
//===----------------------------------------------------------------------===//
#include "tools/cache_command.h"

#include "protocol/evidence.h"
#include "runtime/executable_cache.h"
#include "support/digest.h"
#include "validation_fixture.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

namespace rs::validation_test {
namespace {

/// The programs of digits_cnn (b1, b4, b8) and iris_mlp (b1, b8, b32).
constexpr int64_t kPrograms = 6;
constexpr std::string_view kAutotuneEntry = "fusion.1.textproto";
constexpr std::string_view kAutotuneBytes = "autotune results: conv_a\n";

class CacheArchive : public ::testing::Test {
protected:
  void SetUp() override {
    repo_ = tmp_.str() + "/repo";
    autotune_ = tmp_.str() + "/autotune";
    archive_ = tmp_.str() + "/caches.tar";
    copyBundle("digits_cnn", repo_);
    copyBundle("iris_mlp", repo_);
    fs::create_directories(autotune_ + "/sm90");
    writeFile(autotune_ + "/sm90/" + std::string(kAutotuneEntry), std::string(kAutotuneBytes));
  }

  std::string runtimeYaml() const {
    return "  runtime: {autotune_cache_dir: \"" + autotune_ + "\"}\n";
  }

  tools::CacheSourceOptions source() const {
    tools::CacheSourceOptions o;
    o.model_repo = repo_;
    o.autotune_cache_dir = autotune_;
    return o;
  }

  CommandRun exportCaches() {
    std::ostringstream out, err;
    CommandRun r;
    r.status = tools::runCacheExport(source(), archive_, out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
  }

  CommandRun importCaches() {
    std::ostringstream out, err;
    CommandRun r;
    r.status = tools::runCacheImport(source(), archive_, out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
  }

  CommandRun verify(const server::Worker &w, const std::string &log,
                    tools::CacheVerifyFigures *figures) {
    tools::CacheVerifyOptions o;
    o.metrics_url = "127.0.0.1:" + std::to_string(w.metricsPort());
    o.log_path = log;
    std::ostringstream out, err;
    CommandRun r;
    r.status = tools::runCacheVerify(o, out, err, figures);
    r.out = out.str();
    r.err = err.str();
    return r;
  }

  /// Starts a worker, lets it fill the caches, stops it.
  void fillCaches() {
    std::unique_ptr<server::Worker> w = startWorker(repo_, runtimeYaml());
    ASSERT_NE(w, nullptr);
    w->shutdown();
  }

  void deleteCaches() {
    fs::remove_all(repo_ + "/digits_cnn/.cache");
    fs::remove_all(repo_ + "/iris_mlp/.cache");
    fs::remove_all(autotune_);
  }

  /// The entries of `bundle`'s executable cache, by file name.
  std::vector<std::string> entries(const std::string &bundle) const {
    std::vector<std::string> out;
    std::error_code ec;
    for (const fs::directory_entry &e :
         fs::directory_iterator(repo_ + "/" + bundle + "/.cache", ec))
      out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  TempDir tmp_;
  std::string repo_, autotune_, archive_;
};

TEST_F(CacheArchive, ExportDeleteImportRestartEveryProgramLoadsFromTheCache) {
  // First start: nothing cached, every program compiled; verify fails.
  std::unique_ptr<server::Worker> first = startWorker(repo_, runtimeYaml());
  ASSERT_NE(first, nullptr);
  tools::CacheVerifyFigures cold;
  CommandRun cold_verify = verify(*first, "", &cold);
  EXPECT_EQ(cold_verify.status, tools::kExitCheckFailed) << cold_verify.out << cold_verify.err;
  EXPECT_TRUE(cold.ready);
  EXPECT_EQ(cold.hits, 0);
  EXPECT_EQ(cold.misses, kPrograms);
  EXPECT_NE(cold_verify.out.find(
                "FAIL: 6 program(s) were compiled, not loaded from the executable cache\n"),
            std::string::npos)
      << cold_verify.out;
  EXPECT_NE(cold_verify.out.find("FAIL: no program was loaded from the executable cache\n"),
            std::string::npos)
      << cold_verify.out;
  first->shutdown();
  first.reset();
  const std::vector<std::string> digits = entries("digits_cnn"), iris = entries("iris_mlp");
  ASSERT_EQ(digits.size(), 3u);
  ASSERT_EQ(iris.size(), 3u);
  const std::string entry_bytes = readFile(repo_ + "/iris_mlp/.cache/" + iris[0]);

  CommandRun exported = exportCaches();
  ASSERT_EQ(exported.status, tools::kExitOk) << exported.err;
  EXPECT_NE(exported.out.find("model_repos/0 (model_repo " + repo_ + "): 6 files, "),
            std::string::npos)
      << exported.out;
  EXPECT_NE(exported.out.find("autotune_cache/0 (autotune_cache " + autotune_ + "): 1 files, " +
                              std::to_string(kAutotuneBytes.size()) + " bytes\n"),
            std::string::npos)
      << exported.out;
  EXPECT_NE(exported.out.find("exported 7 files ("), std::string::npos) << exported.out;

  deleteCaches();
  CommandRun imported = importCaches();
  ASSERT_EQ(imported.status, tools::kExitOk) << imported.err;
  EXPECT_NE(imported.out.find("model_repos/0 -> " + repo_ + ": 6 files, "), std::string::npos)
      << imported.out;
  EXPECT_NE(imported.out.find("autotune_cache/0 -> " + autotune_ + ": 1 files, " +
                              std::to_string(kAutotuneBytes.size()) + " bytes\n"),
            std::string::npos)
      << imported.out;
  EXPECT_NE(imported.out.find("imported 7 files ("), std::string::npos) << imported.out;
  EXPECT_EQ(entries("digits_cnn"), digits);
  EXPECT_EQ(entries("iris_mlp"), iris);
  EXPECT_EQ(readFile(repo_ + "/iris_mlp/.cache/" + iris[0]), entry_bytes);
  EXPECT_EQ(readFile(autotune_ + "/sm90/" + std::string(kAutotuneEntry)), kAutotuneBytes);

  // The restart: every program comes from the imported cache.
  const std::string log = tmp_.str() + "/worker.log";
  LogCapture capture(log);
  std::unique_ptr<server::Worker> second = startWorker(repo_, runtimeYaml());
  ASSERT_NE(second, nullptr);
  capture.flush();
  tools::CacheVerifyFigures warm;
  CommandRun warm_verify = verify(*second, log, &warm);
  EXPECT_EQ(warm_verify.status, tools::kExitOk) << warm_verify.out << warm_verify.err;
  EXPECT_TRUE(warm.ready);
  EXPECT_EQ(warm.misses, 0);
  EXPECT_EQ(warm.hits, kPrograms);
  EXPECT_EQ(warm.log_hits, kPrograms);
  EXPECT_TRUE(warm.log_misses.empty());
  EXPECT_NE(warm_verify.out.find("executable cache hits=6 misses=0\n"), std::string::npos)
      << warm_verify.out;
  EXPECT_NE(warm_verify.out.find("PASS: every program (6) was loaded from the executable cache\n"),
            std::string::npos)
      << warm_verify.out;
  second->shutdown();
}

/// Replaces the payload of iris_mlp's batch-8 entry with one that differs, recomputing the
/// header's size and SHA-256 (what someone without the key can do). Returns its file name.
std::string forgeIrisB8(const std::string &cache_dir) {
  for (const fs::directory_entry &e : fs::directory_iterator(cache_dir)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with("model.b8-"))
      continue;
    const std::string bytes = readFile(e.path().string());
    const size_t body = bytes.find("\n\n") + 2;
    const std::string payload = bytes.substr(body) + "\n";
    std::string header = bytes.substr(0, body - 1);
    const size_t size_at = header.find("\nsize ") + 6;
    header.replace(size_at, header.find('\n', size_at) - size_at, std::to_string(payload.size()));
    header.replace(header.find("\nsha256 ") + 8, 64, sha256Hex(payload));
    writeFile(e.path().string(), header + "\n" + payload);
    return name;
  }
  return "";
}

TEST_F(CacheArchive, AForgedEntryUnderAKeyIsALoggedMissAndVerifyFailsNamingIt) {
  const std::string key_file = tmp_.str() + "/cache.key";
  writeFile(key_file, "the deployment's executable cache key");
  const std::string yaml = "  runtime: {executable_cache_key_file: \"" + key_file + "\"}\n";
  std::unique_ptr<server::Worker> first = startWorker(repo_, yaml);
  ASSERT_NE(first, nullptr);
  first->shutdown();
  first.reset();
  ASSERT_NE(forgeIrisB8(repo_ + "/iris_mlp/.cache"), "");

  const std::string log = tmp_.str() + "/worker.log";
  LogCapture capture(log);
  std::unique_ptr<server::Worker> second = startWorker(repo_, yaml);
  ASSERT_NE(second, nullptr);
  capture.flush();
  tools::CacheVerifyFigures figures;
  CommandRun run = verify(*second, log, &figures);
  EXPECT_EQ(run.status, tools::kExitCheckFailed) << run.out << run.err;
  EXPECT_EQ(figures.misses, 1);
  EXPECT_EQ(figures.hits, kPrograms - 1);
  ASSERT_EQ(figures.log_misses.size(), 1u) << run.out;
  EXPECT_NE(figures.log_misses[0].find("executable cache: miss model=iris_mlp batch_size=8 "
                                       "program=model.b8.mlir reason=forged entry: HMAC mismatch"),
            std::string::npos)
      << figures.log_misses[0];
  EXPECT_NE(run.out.find("FAIL: the log shows 1 cache miss(es)\n"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("PASS"), std::string::npos);
  second->shutdown();
}

TEST_F(CacheArchive, WithoutAKeyAForgedEntryChangesTheEvidenceOfItsProgram) {
  std::unique_ptr<server::Worker> first = startWorker(repo_);
  ASSERT_NE(first, nullptr);
  const nlohmann::json recorded = nlohmann::json::parse(first->evidenceJson());
  first->shutdown();
  first.reset();
  ASSERT_NE(forgeIrisB8(repo_ + "/iris_mlp/.cache"), "");
  std::unique_ptr<server::Worker> second = startWorker(repo_);
  ASSERT_NE(second, nullptr);
  const nlohmann::json current = nlohmann::json::parse(second->evidenceJson());
  // What `validate check` prints: the one program whose cache entry changed, by name.
  const std::vector<protocol::FactChange> changes = protocol::diffEvidence(recorded, current);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].path, "models.iris_mlp.programs.8.cache_payload_sha256");
  EXPECT_EQ(changes[0].category, "cache entries");
  EXPECT_EQ(changes[0].recorded,
            recorded["models"]["iris_mlp"]["programs"]["8"]["cache_payload_sha256"].dump());
  second->shutdown();
}

TEST_F(CacheArchive, CorruptedArchiveIsRefusedNamingTheFileAndNothingIsWritten) {
  fillCaches();
  const std::vector<std::string> iris = entries("iris_mlp");
  ASSERT_EQ(iris.size(), 3u);
  const std::string entry = iris[1];
  const std::string good = readFile(repo_ + "/iris_mlp/.cache/" + entry);
  ASSERT_EQ(exportCaches().status, tools::kExitOk);

  // Flip one byte in the middle of that entry's bytes inside the (uncompressed) tar.
  std::string tar = readFile(archive_);
  const size_t at = tar.find(good);
  ASSERT_NE(at, std::string::npos);
  std::string bad = good;
  bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 0x01);
  tar.replace(at, good.size(), bad);
  writeFile(archive_, tar);

  deleteCaches();
  CommandRun imported = importCaches();
  EXPECT_EQ(imported.status, tools::kExitError);
  EXPECT_EQ(imported.out, "");
  EXPECT_EQ(imported.err, "cache import: archive " + archive_ +
                              " refused (nothing was imported): model_repos/0/iris_mlp/.cache/" +
                              entry + " fails its checksum: SHA-256 " + sha256Hex(bad) +
                              ", the manifest says " + sha256Hex(good) + "\n");
  EXPECT_FALSE(fs::exists(repo_ + "/iris_mlp/.cache"));
  EXPECT_FALSE(fs::exists(repo_ + "/digits_cnn/.cache"));
  EXPECT_FALSE(fs::exists(autotune_));
}

/// Writes a tar at `path` with MANIFEST.json and SHA256SUMS listing `files` (name -> bytes,
/// in name order) and the files.
void writeArchive(const std::string &path, std::vector<std::pair<std::string, std::string>> files) {
  std::sort(files.begin(), files.end());
  nlohmann::json manifest = {
      {"format", tools::kCacheArchiveFormat},
      {"created_by", "test"},
      {"roots", {{{"name", "model_repos/0"}, {"kind", "model_repo"}, {"path", "/elsewhere"}}}},
      {"files", nlohmann::json::array()}};
  std::vector<std::pair<std::string, std::string>> members{{"MANIFEST.json", ""},
                                                           {"SHA256SUMS", ""}};
  for (const auto &[name, bytes] : files) {
    manifest["files"].push_back(
        {{"path", name}, {"size", bytes.size()}, {"sha256", sha256Hex(bytes)}});
    members[1].second += sha256Hex(bytes) + "  " + name + "\n";
    members.emplace_back(name, bytes);
  }
  members[0].second = manifest.dump();
  struct archive *a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  ASSERT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK);
  for (const auto &[name, bytes] : members) {
    struct archive_entry *e = archive_entry_new();
    archive_entry_set_pathname(e, name.c_str());
    archive_entry_set_size(e, static_cast<la_int64_t>(bytes.size()));
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    ASSERT_EQ(archive_write_header(a, e), ARCHIVE_OK);
    ASSERT_EQ(archive_write_data(a, bytes.data(), bytes.size()),
              static_cast<la_ssize_t>(bytes.size()));
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
}

TEST_F(CacheArchive, MemberOutsideACacheDirectoryIsRefused) {
  const std::string weights = readFile(repo_ + "/iris_mlp/weights.safetensors");
  for (const std::string &name :
       {std::string("model_repos/0/iris_mlp/weights.safetensors"),
        std::string("model_repos/0/iris_mlp/.cache/../weights.safetensors")}) {
    SCOPED_TRACE(name);
    writeArchive(archive_, {{"model_repos/0/iris_mlp/.cache/model.b1-ok.rsexe", "entry"},
                            {name, "not weights"}});
    CommandRun imported = importCaches();
    EXPECT_EQ(imported.status, tools::kExitError);
    const std::string why = name.find("..") != std::string::npos
                                ? " has an empty, '.' or '..' path component\n"
                                : " is not a cache entry (expected model_repos/0/.cache/<file> or "
                                  "model_repos/0/<bundle>/.cache/<file>)\n";
    EXPECT_EQ(imported.err, "cache import: archive " + archive_ +
                                " refused (nothing was imported): member " + name + why);
    EXPECT_EQ(readFile(repo_ + "/iris_mlp/weights.safetensors"), weights);
    EXPECT_FALSE(fs::exists(repo_ + "/iris_mlp/.cache"));
  }
  // A well-formed archive from another machine's path restores into this repository; an
  // entry of a bundle this repository lacks is skipped.
  writeArchive(archive_, {{"model_repos/0/iris_mlp/.cache/model.b1-ok.rsexe", "entry"},
                          {"model_repos/0/gone/.cache/model.b1-x.rsexe", "other"}});
  CommandRun imported = importCaches();
  EXPECT_EQ(imported.status, tools::kExitOk) << imported.err;
  EXPECT_EQ(imported.out, "model_repos/0 -> " + repo_ +
                              ": 1 files, 5 bytes\nskipped model_repos/0/gone/.cache/"
                              "model.b1-x.rsexe (no such bundle in the repository)\nimported 1 "
                              "files (5 bytes) from " +
                              archive_ + ", skipped 1\n");
  EXPECT_EQ(readFile(repo_ + "/iris_mlp/.cache/model.b1-ok.rsexe"), "entry");
}

TEST_F(CacheArchive, VerifyOfAnUnreachableWorkerIsAnError) {
  tools::CacheVerifyOptions o;
  o.metrics_url = "127.0.0.1:1";
  std::ostringstream out, err;
  EXPECT_EQ(tools::runCacheVerify(o, out, err), tools::kExitError);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str().rfind("cache verify: worker metrics at 127.0.0.1:1: GET /readyz: ", 0), 0u)
      << err.str();
}

} // namespace
} // namespace rs::validation_test
