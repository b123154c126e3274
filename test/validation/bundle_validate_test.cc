//===- test/validation/bundle_validate_test.cc - Multi-shape validation facts ===//
//
// `bundle validate` loads, checks and compiles every program of a bundle as the server
// would: on the multi-shape fixture every shape variant's programs; a broken variant fails
// with the file and the reason, a single-shape bundle prints its line as before. The
// worker's evidence document lists every variant's program (file, sha256, cache key) and
// the variants themselves; a changed variant program is a bundle-hash change. Polymorphic
// bundles are refined into every program, each compiled and cached under its own name.
//
//===----------------------------------------------------------------------===//
#include "tools/bundle_command.h"

#include "../bundle/multishape_fixture.h"
#include "runtime/executable_cache.h"
#include "server/evidence.h"
#include "support/digest.h"
#include "validation_fixture.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

namespace rs::validation_test {
namespace {

TEST(BundleValidate, MultiShapeBundleCoversEveryVariant) {
  TempDir tmp;
  const std::string dir = tmp.str() + "/" + multishape::kMultiShapeModel;
  multishape::copyBundleDir(multishape::multiShapeBundle(), dir);
  std::ostringstream out;
  EXPECT_EQ(tools::validateBundles({dir}, out), 0) << out.str();
  EXPECT_EQ(out.str(), "ok text_encoder_ms batch_sizes=[1, 4] shape_variants=[{s=8}, {s=16}] "
                       "programs=4 inputs=[input_ids: i32[-1,-1], attention_mask: i32[-1,-1]] "
                       "weights=10\n");
  // Every variant's programs were compiled (and cached).
  size_t entries = 0;
  for (const auto &e : fs::directory_iterator(dir + "/.cache"))
    entries += e.path().extension() == ".rsexe" ? 1 : 0;
  EXPECT_EQ(entries, 4u);
}

TEST(BundleValidate, PolymorphicBundlesRefineAndCompileEveryProgram) {
  TempDir tmp;
  std::vector<std::string> dirs;
  for (const std::string name : {"mlp_poly", "encoder_poly"}) {
    dirs.push_back(tmp.str() + "/" + name);
    multishape::copyBundleDir(multishape::kTestData + "/bundles/" + name, dirs.back());
  }
  std::ostringstream out;
  EXPECT_EQ(tools::validateBundles(dirs, out), 0) << out.str();
  EXPECT_EQ(out.str(), "ok mlp_poly batch_sizes=[1, 2, 4, 8] refined_from=model.mlir "
                       "inputs=[x: f32[-1,8]] weights=4\n"
                       "ok encoder_poly batch_sizes=[1, 3] shape_variants=[{s=4}, {s=8}] "
                       "programs=4 refined_from=model.mlir inputs=[x: f32[-1,-1,8]] weights=13\n");
  for (const std::string &dir : dirs) {
    std::set<std::string> entries;
    for (const auto &e : fs::directory_iterator(dir + "/.cache"))
      entries.insert(
          e.path().filename().string().substr(0, e.path().filename().string().find('-')));
    EXPECT_EQ(entries, dir.ends_with("mlp_poly")
                           ? (std::set<std::string>{"model.mlir@b1", "model.mlir@b2",
                                                    "model.mlir@b4", "model.mlir@b8"})
                           : (std::set<std::string>{"model.mlir@v0.b1", "model.mlir@v0.b3",
                                                    "model.mlir@v1.b1", "model.mlir@v1.b3"}))
        << dir;
  }
}

TEST(BundleValidate, BrokenVariantFailsNamingTheFile) {
  TempDir tmp;
  const std::string dir = tmp.str() + "/" + multishape::kMultiShapeModel;
  multishape::copyBundleDir(multishape::multiShapeBundle(), dir);
  // The s=8 program under the s=16 variant's name.
  fs::copy_file(dir + "/model.v0.b1.mlir", dir + "/model.v1.b1.mlir",
                fs::copy_options::overwrite_existing);
  const std::string good = tmp.str() + "/iris_mlp";
  copyBundle("iris_mlp", tmp.path());
  std::ostringstream out;
  EXPECT_EQ(tools::validateBundles({dir, good}, out), 1);
  EXPECT_EQ(out.str(),
            "error " + dir +
                "/model.v1.b1.mlir: argument 0 (input 'input_ids'): type tensor<1x8xi32> does not "
                "match manifest i32[1,16] (shape variant 1 {s=16})\n"
                "ok iris_mlp batch_sizes=[1, 8, 32] inputs=[features: f32[-1,4]] weights=4\n");

  fs::remove(dir + "/model.v1.b1.mlir");
  std::ostringstream missing;
  EXPECT_EQ(tools::validateBundles({dir}, missing), 1);
  EXPECT_EQ(missing.str(), "error " + dir +
                               "/model.v1.b1.mlir: missing (shape variant 1 {s=16}, batch size 1 "
                               "is listed in batching.compiled_batch_sizes [1, 4])\n");
}

TEST(BundleValidate, WarningsAreLinesBeforeOk) {
  TempDir tmp;
  const std::string good = tmp.str() + "/iris_mlp";
  copyBundle("iris_mlp", tmp.str());
  writeFile(good + "/model.b2.mlir", "not loaded");
  writeFile(good + "/model.b08.mlir", readFile(good + "/model.b8.mlir"));
  std::ostringstream out;
  EXPECT_EQ(tools::validateBundles({good + "/"}, out), 0);
  EXPECT_EQ(out.str(), "warning " + good +
                           "/model.b08.mlir: not a program file name (model.b{N}.mlir or "
                           "model.mlir, numbers in decimal without leading zeros); not loaded\n"
                           "warning " +
                           good +
                           "/model.b2.mlir: batch size 2 is not in batching.compiled_batch_sizes "
                           "[1, 8, 32]; not loaded\n"
                           "ok iris_mlp batch_sizes=[1, 8, 32] inputs=[features: f32[-1,4]] "
                           "weights=4\n");
  // An error naming no file of the bundle keeps the directory in front.
  std::ostringstream none;
  EXPECT_EQ(tools::validateBundles({tmp.str() + "/nope"}, none), 1);
  EXPECT_EQ(none.str(), "error " + tmp.str() + "/nope: not a bundle directory\n");
}

TEST(MultiShapeEvidence, ListsEveryVariantsProgram) {
  TempDir tmp;
  const std::string repo = tmp.str() + "/repo";
  const std::string dir = repo + "/" + multishape::kMultiShapeModel;
  multishape::copyBundleDir(multishape::multiShapeBundle(), dir);
  copyBundle("digits_cnn", repo);
  nlohmann::json recorded;
  {
    std::unique_ptr<server::Worker> worker = startWorker(repo);
    ASSERT_NE(worker, nullptr);
    recorded = nlohmann::json::parse(worker->evidenceJson());
  }
  const nlohmann::json &m = recorded["models"]["text_encoder_ms"];
  EXPECT_EQ(m["state"], "ready");
  EXPECT_EQ(m["input_shapes"], nlohmann::json::parse(R"([{"s": 8}, {"s": 16}])"));
  EXPECT_EQ(m["batch_sizes"], nlohmann::json::parse("[1, 4]"));
  EXPECT_EQ(m["inputs"][0]["shape"], nlohmann::json::parse("[-1, -1]"));
  ASSERT_EQ(m["programs"].size(), 4u);
  std::set<std::string> keys;
  for (const char *program : {"v0.b1", "v0.b4", "v1.b1", "v1.b4"}) {
    const nlohmann::json &p = m["programs"][program];
    const std::string file = std::string("model.") + program + ".mlir";
    EXPECT_EQ(p["file"], file);
    EXPECT_EQ(p["sha256"], sha256Hex(readFile(dir + "/" + file)));
    keys.insert(p["cache_key"].get<std::string>());
    EXPECT_EQ(recorded["instance"]["executable_cache"]["programs"]["text_encoder_ms"][program],
              "miss: no entry");
  }
  EXPECT_EQ(keys.size(), 4u); // one key per variant and size
  // A single-shape model's entry keeps its form: no input_shapes, programs by batch size.
  EXPECT_FALSE(recorded["models"]["digits_cnn"].contains("input_shapes"));
  EXPECT_TRUE(recorded["models"]["digits_cnn"]["programs"].contains("8"));

  // Another program for variant 1 at batch size 4 (a copy with a comment line): its hash and
  // cache key change, nothing else.
  writeFile(dir + "/model.v1.b4.mlir", "// rebuilt\n" + readFile(dir + "/model.v1.b4.mlir"));
  std::unique_ptr<server::Worker> worker = startWorker(repo);
  ASSERT_NE(worker, nullptr);
  const nlohmann::json current = nlohmann::json::parse(worker->evidenceJson());
  std::vector<std::string> changes;
  for (const protocol::FactChange &c : protocol::diffEvidence(recorded, current))
    changes.push_back(c.category + " | " + c.path);
  EXPECT_EQ(changes, (std::vector<std::string>{
                         "bundle hashes | models.text_encoder_ms.programs.v1.b4.sha256"}));
}

} // namespace
} // namespace rs::validation_test
