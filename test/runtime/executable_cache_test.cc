//===- test/runtime/executable_cache_test.cc - The executable cache --------===//
//
// The key covers every part it should; an entry written by one load is a hit for the
// next and runs to the same bytes; every kind of damaged entry (corrupt, truncated,
// foreign, garbage, unloadable) is a miss with its reason, the program still loads and
// the entry is rewritten; a read-only bundle is a warning; the cache can be turned off.
//
//===----------------------------------------------------------------------===//
#include "runtime/executable_cache.h"

#include "bundle/bundle.h"
#include "ir/printer.h"
#include "passes/numerics.h"
#include "runtime/cpu_backend.h"
#include "runtime_test_util.h"
#include "support/digest.h"

#include <gtest/gtest.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <functional>
#include <set>

namespace rs::runtime {
namespace {

using testing::bytesOf;
using testing::copyBundle;
using testing::goldenTensor;
using testing::readFile;
using testing::TempDir;
using testing::writeFile;
namespace fs = std::filesystem;

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

CacheKeyParts someParts() {
  CacheKeyParts p;
  p.compile_settings = "xla_flags=[] autotune=true";
  p.device.platform = "cpu";
  p.device.device_kind = "Some CPU";
  p.server_build = "version=0.1.0 commit=abc";
  return p;
}

TEST(CacheKey, StableAndCoversEveryPart) {
  const std::string module = "module text";
  const CacheKeyParts base = someParts();
  const std::string key = executableCacheKey(module, base);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(executableCacheKey(module, base), key); // deterministic

  std::set<std::string> keys{key};
  auto vary = [&](auto change) {
    CacheKeyParts p = base;
    std::string m = module;
    change(p, m);
    keys.insert(executableCacheKey(m, p));
  };
  vary([](CacheKeyParts &, std::string &m) { m += " "; });
  vary([](CacheKeyParts &p, std::string &) { p.options.entry = "other"; });
  vary([](CacheKeyParts &p, std::string &) { p.compile_settings = "xla_flags=[--a=1]"; });
  vary([](CacheKeyParts &p, std::string &) { p.device.platform = "cuda"; });
  vary([](CacheKeyParts &p, std::string &) { p.device.device_kind = "NVIDIA H200"; });
  vary([](CacheKeyParts &p, std::string &) { p.device.compute_capability = "9.0"; });
  vary([](CacheKeyParts &p, std::string &) { p.device.backend_version = "plugin 0.11.2"; });
  vary([](CacheKeyParts &p, std::string &) { p.server_build = "version=0.1.1 commit=abc"; });
  // Fields are framed: moving text from one field to the next is another key.
  vary([](CacheKeyParts &p, std::string &m) {
    m = "module tex";
    p.options.entry = "tmain";
  });
  EXPECT_EQ(keys.size(), 10u);
}

/// iris_mlp's b1 program after the f32 pass, its weights, and a CPU backend.
class CacheTest : public ::testing::Test {
public:
  void SetUp() override {
    bundle_dir_ = copyBundle(tmp_, "iris_mlp");
    auto b = bundle::loadBundle(bundle_dir_.string());
    ASSERT_TRUE(b.isOk()) << b.status().toString();
    module_ = b->programs.at({0, 1}).module;
    weights_ = b->weights;
    ASSERT_TRUE(passes::pinNumerics(module_, {passes::NumericsMode::kF32, false}).isOk());
    auto backend = createCpuBackend({1});
    ASSERT_TRUE(backend.isOk());
    backend_ = std::move(backend).value();
    parts_ = someParts();
    parts_.device = backend_->deviceInfo();
  }

  Result<CachedProgram> load(bool enabled = true) {
    ExecutableCache cache(cacheDir().string(), enabled, hmac_key_);
    return cache.loadOrCompile(*backend_, module_, "model.b1.mlir", parts_);
  }

  /// Runs `exe` on the golden b1 input; the logits' bytes.
  std::string run(const Executable &exe) {
    std::vector<Tensor> args{goldenTensor("iris_mlp", "b1.safetensors", "features")};
    args.insert(args.end(), weights_.begin(), weights_.end());
    auto out = exe.execute(args);
    EXPECT_TRUE(out.isOk()) << out.status().toString();
    return out.isOk() ? bytesOf((*out)[0]) : "";
  }

  /// The entries' directory: the bundle's `.cache/`, or under cache_dir_ when set.
  fs::path cacheDir() const { return executableCacheDir(bundle_dir_.string(), cache_dir_); }
  std::vector<fs::path> files() const {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(cacheDir(), ec))
      out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }

  TempDir tmp_;
  fs::path bundle_dir_;
  ir::Module module_;
  std::vector<Tensor> weights_;
  std::unique_ptr<Backend> backend_;
  CacheKeyParts parts_;
  std::string hmac_key_;  // runtime.executable_cache_key_file's bytes ("" = none)
  std::string cache_dir_; // the worker's top-level cache_dir ("" = the bundle's .cache/)
};

TEST_F(CacheTest, MissWritesTheEntryThenHitRunsTheSameBytes) {
  auto first = load();
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  EXPECT_FALSE(first->outcome.hit);
  EXPECT_EQ(first->outcome.miss_reason, "no entry");
  EXPECT_EQ(first->outcome.write_warning, "");
  EXPECT_EQ(first->outcome.key, executableCacheKey(ir::printGeneric(module_), parts_));
  const fs::path entry = cacheDir() / ("model.b1-" + first->outcome.key + ".rsexe");
  EXPECT_EQ(first->outcome.entry, entry.string());
  ASSERT_EQ(files(), std::vector<fs::path>{entry}); // no temporary file left behind

  // The entry: header, then the pass-rewritten module in generic form.
  const std::string bytes = readFile(entry);
  const std::string payload = ir::printGeneric(module_);
  EXPECT_EQ(bytes, "reactant-server executable cache entry 1\nkey " + first->outcome.key +
                       "\nprogram model.b1.mlir\nsize " + std::to_string(payload.size()) +
                       "\nsha256 " + sha256Hex(payload) + "\n\n" + payload);
  EXPECT_NE(payload.find("precision HIGHEST"), std::string::npos);

  auto second = load();
  ASSERT_TRUE(second.isOk()) << second.status().toString();
  EXPECT_TRUE(second->outcome.hit);
  EXPECT_EQ(second->outcome.miss_reason, "");
  EXPECT_EQ(run(*second->executable), run(*first->executable));
  EXPECT_EQ(run(*second->executable).size(), 3u * sizeof(float));
  EXPECT_EQ(readFile(entry), bytes); // a hit does not rewrite
}

TEST_F(CacheTest, OtherSettingsUseAnotherEntry) {
  ASSERT_TRUE(load().isOk());
  parts_.compile_settings = "xla_flags=[--xla_gpu_autotune_level=0] autotune=true";
  auto other = load();
  ASSERT_TRUE(other.isOk());
  EXPECT_FALSE(other->outcome.hit);
  EXPECT_EQ(other->outcome.miss_reason, "no entry");
  EXPECT_EQ(files().size(), 2u); // both kept
  parts_.server_build = "version=9.9.9";
  auto build = load();
  ASSERT_TRUE(build.isOk());
  EXPECT_EQ(build->outcome.miss_reason, "no entry");
  EXPECT_EQ(files().size(), 3u);
}

/// Damages the entry with `damage`, then expects a miss with `reason` (a substring), a
/// working program with the right bytes, and a rewritten entry (the next load hits).
void expectRecovered(CacheTest &t, std::function<void(const fs::path &)> damage,
                     const std::string &reason) {
  auto first = t.load();
  ASSERT_TRUE(first.isOk());
  const std::string want = t.run(*first->executable);
  const fs::path entry = first->outcome.entry;
  const std::string good = readFile(entry);
  damage(entry);
  auto damaged = t.load();
  ASSERT_TRUE(damaged.isOk()) << damaged.status().toString();
  EXPECT_FALSE(damaged->outcome.hit);
  EXPECT_NE(damaged->outcome.miss_reason.find(reason), std::string::npos)
      << damaged->outcome.miss_reason;
  EXPECT_EQ(t.run(*damaged->executable), want);
  EXPECT_EQ(readFile(entry), good); // rewritten atomically
  auto again = t.load();
  ASSERT_TRUE(again.isOk());
  EXPECT_TRUE(again->outcome.hit);
}

TEST_F(CacheTest, CorruptPayloadIsAMissAndRewritten) {
  expectRecovered(
      *this,
      [](const fs::path &p) {
        std::string b = readFile(p);
        b[b.size() - 10] ^= 0x20;
        writeFile(p, b);
      },
      "corrupt entry: payload checksum mismatch");
}

TEST_F(CacheTest, TruncatedEntryIsAMiss) {
  expectRecovered(
      *this,
      [](const fs::path &p) {
        std::string b = readFile(p);
        writeFile(p, b.substr(0, b.size() / 2));
      },
      "(truncated)");
}

TEST_F(CacheTest, TruncatedHeaderIsAMiss) {
  expectRecovered(
      *this, [](const fs::path &p) { writeFile(p, readFile(p).substr(0, 60)); },
      "corrupt entry: truncated header");
}

TEST_F(CacheTest, GarbageAndEmptyFilesAreMisses) {
  expectRecovered(
      *this,
      [](const fs::path &p) {
        writeFile(p, "\x7f"
                     "ELF garbage");
      },
      "corrupt entry: not a reactant-server cache entry");
  expectRecovered(
      *this, [](const fs::path &p) { writeFile(p, ""); },
      "corrupt entry: not a reactant-server cache entry");
}

TEST_F(CacheTest, ForeignEntryIsAMiss) {
  // An entry made for another key (another program or build) under this entry's name.
  CacheKeyParts other = parts_;
  other.server_build = "version=0.0.1";
  ExecutableCache cache(cacheDir().string(), true);
  auto foreign = cache.loadOrCompile(*backend_, module_, "model.b1.mlir", other);
  ASSERT_TRUE(foreign.isOk());
  const std::string foreign_bytes = readFile(foreign->outcome.entry);
  expectRecovered(
      *this, [&](const fs::path &p) { writeFile(p, foreign_bytes); },
      "foreign entry: it holds key");
}

TEST_F(CacheTest, UnloadablePayloadIsAMiss) {
  // A well-formed entry (right key, size and checksum) whose payload the backend rejects.
  expectRecovered(
      *this,
      [&](const fs::path &p) {
        const std::string payload = "this is not a module";
        writeFile(p, "reactant-server executable cache entry 1\nkey " +
                         executableCacheKey(ir::printGeneric(module_), parts_) +
                         "\nprogram model.b1.mlir\nsize " + std::to_string(payload.size()) +
                         "\nsha256 " + sha256Hex(payload) + "\n\n" + payload);
      },
      "the backend could not load the entry: executable cache entry:1:1: error:");
}

TEST_F(CacheTest, ReadOnlyBundleIsAWarning) {
  fs::permissions(bundle_dir_,
                  fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  auto r = load();
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_FALSE(r->outcome.hit);
  EXPECT_EQ(r->outcome.write_warning,
            "directory " + bundle_dir_.string() + " is read-only (no write permission bit)");
  EXPECT_FALSE(fs::exists(cacheDir()));
  EXPECT_EQ(run(*r->executable).size(), 12u);
}

TEST_F(CacheTest, ReadOnlyBundleWithAWritableCacheDirIsNotWritten) {
  ASSERT_TRUE(load().isOk()); // writes the b1 entry while the bundle is writable
  fs::permissions(bundle_dir_,
                  fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  auto hit = load();
  ASSERT_TRUE(hit.isOk());
  EXPECT_TRUE(hit->outcome.hit); // existing entries are read
  parts_.compile_settings = "changed";
  auto miss = load();
  ASSERT_TRUE(miss.isOk());
  EXPECT_FALSE(miss->outcome.hit);
  EXPECT_EQ(miss->outcome.write_warning,
            "directory " + bundle_dir_.string() + " is read-only (no write permission bit)");
  EXPECT_EQ(files().size(), 1u); // nothing new in the (writable) .cache/
}

TEST_F(CacheTest, ReadOnlyCacheDirIsAWarningButStillHits) {
  ASSERT_TRUE(load().isOk()); // writes the b1 entry
  fs::permissions(cacheDir(),
                  fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  auto hit = load();
  ASSERT_TRUE(hit.isOk());
  EXPECT_TRUE(hit->outcome.hit); // a read-only cache still serves its entries
  parts_.compile_settings = "changed";
  auto miss = load();
  ASSERT_TRUE(miss.isOk());
  EXPECT_FALSE(miss->outcome.hit);
  EXPECT_EQ(miss->outcome.write_warning,
            cacheDir().string() + " is read-only (no write permission bit)");
  EXPECT_EQ(files().size(), 1u);
}

TEST(CacheLocation, BundleCacheOrUnderCacheDirByBundleName) {
  EXPECT_EQ(executableCacheDir("/models/iris_mlp", ""), "/models/iris_mlp/.cache");
  EXPECT_EQ(executableCacheDir("/mnt/models/iris_mlp", "/var/cache/rs"), "/var/cache/rs/iris_mlp");
  EXPECT_EQ(executableCacheDir("/mnt/models/iris_mlp/", "/var/cache/rs"), "/var/cache/rs/iris_mlp");
  EXPECT_EQ(repositoryCacheDir("/models", ""), "/models/.cache");
  EXPECT_EQ(repositoryCacheDir("/mnt/models", "/var/cache/rs"), "/var/cache/rs/.cache");
}

TEST_F(CacheTest, ReadOnlyBundleWithCacheDirWritesThereAndHits) {
  cache_dir_ = (tmp_.path() / "caches" / "executables").string(); // made by the first write
  fs::permissions(bundle_dir_,
                  fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  auto first = load();
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  EXPECT_FALSE(first->outcome.hit);
  EXPECT_EQ(first->outcome.write_warning, "");
  const fs::path entry =
      fs::path(cache_dir_) / "iris_mlp" / ("model.b1-" + first->outcome.key + ".rsexe");
  EXPECT_EQ(first->outcome.entry, entry.string());
  EXPECT_EQ(files(), std::vector<fs::path>{entry});
  EXPECT_FALSE(fs::exists(bundle_dir_ / ".cache"));
  auto second = load();
  ASSERT_TRUE(second.isOk());
  EXPECT_TRUE(second->outcome.hit);
  EXPECT_EQ(second->outcome.key, first->outcome.key); // the same key as in the bundle
  EXPECT_EQ(run(*second->executable), run(*first->executable));
}

TEST_F(CacheTest, ReadOnlyCacheDirIsAWarning) {
  cache_dir_ = (tmp_.path() / "caches").string();
  fs::create_directories(cache_dir_);
  fs::permissions(cache_dir_,
                  fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  auto r = load();
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(r->outcome.write_warning,
            "directory " + cache_dir_ + " is read-only (no write permission bit)");
  EXPECT_FALSE(fs::exists(cacheDir()));
  EXPECT_EQ(run(*r->executable).size(), 12u);
}

TEST_F(CacheTest, OffCompilesAndWritesNothing) {
  auto r = load(/*enabled=*/false);
  ASSERT_TRUE(r.isOk());
  EXPECT_FALSE(r->outcome.hit);
  EXPECT_EQ(r->outcome.miss_reason, "executable cache off");
  EXPECT_EQ(r->outcome.key, "");
  EXPECT_FALSE(fs::exists(cacheDir()));
}

TEST_F(CacheTest, CompileErrorsAreStillErrors) {
  parts_.options.entry = "no_such_function";
  auto r = load();
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << r.status().toString();
}

/// What someone with write access to `.cache/` but without the key can do: replace the
/// entry's payload with `payload` and recompute the header's size and SHA-256.
void forge(const fs::path &entry, const std::string &payload) {
  const std::string bytes = readFile(entry);
  std::string header = bytes.substr(0, bytes.find("\n\n") + 1);
  const size_t size_at = header.find("\nsize ") + 6;
  header.replace(size_at, header.find('\n', size_at) - size_at, std::to_string(payload.size()));
  const size_t sha_at = header.find("\nsha256 ") + 8;
  header.replace(sha_at, 64, sha256Hex(payload));
  writeFile(entry, header + "\n" + payload);
}

/// HMAC-SHA256 under `key` of `text`, 64 hex digits.
std::string hmacHex(const std::string &key, const std::string &text) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char *>(text.data()), text.size(), mac, &length);
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += kHex[mac[i] >> 4];
    out += kHex[mac[i] & 15];
  }
  return out;
}

TEST_F(CacheTest, WithAKeyTheEntryCarriesItsHmac) {
  hmac_key_ = "a deployment's secret";
  auto first = load();
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  const std::string payload = ir::printGeneric(module_);
  EXPECT_EQ(first->outcome.payload_sha256, sha256Hex(payload));
  EXPECT_EQ(readFile(first->outcome.entry),
            "reactant-server executable cache entry 1\nkey " + first->outcome.key +
                "\nprogram model.b1.mlir\nsize " + std::to_string(payload.size()) + "\nsha256 " +
                sha256Hex(payload) + "\nhmac-sha256 " +
                hmacHex(hmac_key_, first->outcome.key + "\n" + payload) + "\n\n" + payload);
  auto second = load();
  ASSERT_TRUE(second.isOk());
  EXPECT_TRUE(second->outcome.hit);
  EXPECT_EQ(second->outcome.payload_sha256, sha256Hex(payload));
}

TEST_F(CacheTest, WithAKeyAForgedEntryIsAMissAndRewritten) {
  hmac_key_ = "a deployment's secret";
  expectRecovered(
      *this,
      [&](const fs::path &p) {
        std::string payload = ir::printGeneric(module_);
        payload.replace(payload.find("HIGHEST"), 7, "DEFAULT");
        forge(p, payload);
      },
      "forged entry: HMAC mismatch (not written with runtime.executable_cache_key_file's key)");
}

TEST_F(CacheTest, WithAKeyAnEntryWrittenWithoutOneIsAMiss) {
  auto plain = load();
  ASSERT_TRUE(plain.isOk());
  hmac_key_ = "a key set after the entry was written";
  auto keyed = load();
  ASSERT_TRUE(keyed.isOk()) << keyed.status().toString();
  EXPECT_FALSE(keyed->outcome.hit);
  EXPECT_EQ(keyed->outcome.miss_reason,
            "unauthenticated entry: no HMAC (runtime.executable_cache_key_file is set)");
  EXPECT_EQ(run(*keyed->executable), run(*plain->executable));
  auto again = load(); // rewritten with the HMAC
  ASSERT_TRUE(again.isOk());
  EXPECT_TRUE(again->outcome.hit);
}

TEST_F(CacheTest, WithoutAKeyAForgedEntryLoadsButItsPayloadHashChanges) {
  auto first = load();
  ASSERT_TRUE(first.isOk());
  std::string payload = ir::printGeneric(module_);
  payload.replace(payload.find("HIGHEST"), 7, "DEFAULT");
  forge(first->outcome.entry, payload);
  auto forged = load();
  ASSERT_TRUE(forged.isOk()) << forged.status().toString();
  // The checksum cannot tell: the deployment evidence's payload hash does.
  EXPECT_TRUE(forged->outcome.hit);
  EXPECT_EQ(forged->outcome.payload_sha256, sha256Hex(payload));
  EXPECT_NE(forged->outcome.payload_sha256, first->outcome.payload_sha256);
}

} // namespace
} // namespace rs::runtime
