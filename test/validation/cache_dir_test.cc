//===- test/validation/cache_dir_test.cc - The executable cache under cache_dir -===//
//
// A read-only bundle directory (KServe's /mnt/models) serves without cache_dir (each entry
// not written, one warning) and with it (entries in <cache_dir>/<bundle>/, hits at the
// restart, the same answers); `cache export|import --cache-dir` and `bundle validate
// --cache-dir` use the same place.
//
//===----------------------------------------------------------------------===//
#include "tools/bundle_command.h"
#include "tools/cache_command.h"

#include "validation_fixture.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <sstream>

namespace rs::validation_test {
namespace {

/// iris_mlp's programs: b1, b8, b32.
constexpr int64_t kPrograms = 3;

constexpr std::string_view kTwoRows =
    R"({"inputs":[{"name":"features","shape":[2,4],"datatype":"FP32",)"
    R"("data":[0.5,-1.25,1.0,0.75,-0.3,0.2,-1.1,-0.9]}]})";

class CacheDir : public ::testing::Test {
protected:
  void SetUp() override {
    repo_ = tmp_.str() + "/repo";
    bundle_ = repo_ + "/iris_mlp";
    cache_dir_ = tmp_.str() + "/cache"; // made by the first entry written
    copyBundle("iris_mlp", repo_);
    fs::permissions(bundle_,
                    fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                    fs::perm_options::remove);
  }

  std::string cacheYaml() const { return "  cache_dir: \"" + cache_dir_ + "\"\n"; }

  /// `cache verify` of `w` against the log `log`.
  tools::CacheVerifyFigures verify(const server::Worker &w, const std::string &log) {
    tools::CacheVerifyOptions o;
    o.metrics_url = "127.0.0.1:" + std::to_string(w.metricsPort());
    o.log_path = log;
    std::ostringstream out, err;
    tools::CacheVerifyFigures figures;
    (void)tools::runCacheVerify(o, out, err, &figures);
    return figures;
  }

  /// The body of a 200 answer to the two-row iris request, "" otherwise.
  std::string infer(const server::Worker &w) {
    httplib::Client http("127.0.0.1", w.httpPort());
    httplib::Result r =
        http.Post("/v2/models/iris_mlp/infer", std::string(kTwoRows), "application/json");
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : httplib::to_string(r.error()));
    return r && r->status == 200 ? r->body : "";
  }

  /// The file names in `dir`, sorted (none when it does not exist).
  static std::vector<std::string> names(const std::string &dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const fs::directory_entry &e : fs::directory_iterator(dir, ec))
      out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  static size_t count(const std::string &text, std::string_view what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
      ++n;
    return n;
  }

  TempDir tmp_;
  std::string repo_, bundle_, cache_dir_;
};

TEST_F(CacheDir, ReadOnlyBundleServesWithoutAndWithCacheDirAndRestartsFromIt) {
  const std::string log = tmp_.str() + "/worker.log";
  LogCapture capture(log);
  // Without cache_dir: nothing can be written, one warning, the model serves.
  std::unique_ptr<server::Worker> w = startWorker(repo_);
  ASSERT_NE(w, nullptr);
  capture.flush();
  tools::CacheVerifyFigures plain = verify(*w, log);
  EXPECT_TRUE(plain.ready);
  EXPECT_EQ(plain.misses, kPrograms);
  EXPECT_EQ(count(readFile(log), "executable cache: entry not written model=iris_mlp"), 1u);
  const std::string answer = infer(*w);
  EXPECT_NE(answer, "");
  EXPECT_FALSE(fs::exists(bundle_ + "/.cache"));
  w->shutdown();
  w.reset();

  // With cache_dir: every entry goes to <cache_dir>/iris_mlp/, none into the bundle.
  w = startWorker(repo_, cacheYaml());
  ASSERT_NE(w, nullptr);
  capture.flush();
  tools::CacheVerifyFigures cold = verify(*w, log);
  EXPECT_EQ(cold.misses, kPrograms);
  EXPECT_EQ(count(readFile(log), "executable cache: entry not written"), 1u); // the first start's
  const std::vector<std::string> entries = names(cache_dir_ + "/iris_mlp");
  ASSERT_EQ(entries.size(), static_cast<size_t>(kPrograms));
  for (const std::string &e : entries)
    EXPECT_TRUE(e.starts_with("model.b") && e.ends_with(".rsexe")) << e;
  EXPECT_EQ(names(cache_dir_), std::vector<std::string>{"iris_mlp"});
  EXPECT_FALSE(fs::exists(bundle_ + "/.cache"));
  EXPECT_EQ(infer(*w), answer);
  w->shutdown();
  w.reset();

  // The restart loads every program from cache_dir: the metrics and the log say hit.
  w = startWorker(repo_, cacheYaml());
  ASSERT_NE(w, nullptr);
  capture.flush();
  tools::CacheVerifyFigures warm = verify(*w, log);
  EXPECT_TRUE(warm.ready);
  EXPECT_EQ(warm.hits, kPrograms);
  EXPECT_EQ(warm.misses, 0);
  EXPECT_EQ(warm.log_hits, kPrograms);
  EXPECT_TRUE(warm.log_misses.empty());
  EXPECT_EQ(infer(*w), answer);
  w->shutdown();
}

TEST_F(CacheDir, ExportImportAndBundleValidateUseCacheDir) {
  std::ostringstream validated;
  ASSERT_EQ(tools::validateBundles({bundle_}, validated, cache_dir_), 0) << validated.str();
  EXPECT_EQ(validated.str().rfind("ok iris_mlp batch_sizes=[1, 8, 32]", 0), 0u) << validated.str();
  const std::vector<std::string> entries = names(cache_dir_ + "/iris_mlp");
  ASSERT_EQ(entries.size(), static_cast<size_t>(kPrograms));
  EXPECT_FALSE(fs::exists(bundle_ + "/.cache"));
  const std::string first = readFile(cache_dir_ + "/iris_mlp/" + entries[0]);

  // The archive names the entries as the bundle's `.cache/` ones: the layout travels.
  tools::CacheSourceOptions source;
  source.model_repo = repo_;
  source.cache_dir = cache_dir_;
  const std::string archive = tmp_.str() + "/caches.tar";
  std::ostringstream out, err;
  ASSERT_EQ(tools::runCacheExport(source, archive, out, err), tools::kExitOk) << err.str();
  EXPECT_NE(out.str().find("model_repos/0 (model_repo " + repo_ + "): 3 files, "),
            std::string::npos)
      << out.str();
  fs::remove_all(cache_dir_);
  std::ostringstream in, in_err;
  ASSERT_EQ(tools::runCacheImport(source, archive, in, in_err), tools::kExitOk) << in_err.str();
  EXPECT_NE(in.str().find("model_repos/0 -> " + repo_ + ": 3 files, "), std::string::npos)
      << in.str();
  EXPECT_EQ(names(cache_dir_ + "/iris_mlp"), entries);
  EXPECT_EQ(readFile(cache_dir_ + "/iris_mlp/" + entries[0]), first);
  EXPECT_FALSE(fs::exists(bundle_ + "/.cache"));
}

} // namespace
} // namespace rs::validation_test
