//===- test/e2e/portable_test.cc - Bundles of portable artifacts, served ----===//
//
// Every fixture bundle rebuilt as the reference exporter writes it: the same manifest and
// weights, each model.b{N}.mlir a StableHLO portable artifact (VHLO bytecode, the
// fixture's portable/model.b{N}.mlirbc). A worker on that repository and one on the same
// bundles with the text of those modules (portable/model.b{N}.export.mlir) answer every
// golden request with the same output bytes over gRPC and HTTP; the
// portable outputs are within the golden test's tolerance of XLA:CPU; both load the same
// numerics outcome and the same executable-cache keys (the key hashes the module after
// passes, which is the same module), while the evidence hashes each file as it is. Under
// the regulated profile (numerics f32) the two give the same bytes too.
//
//===----------------------------------------------------------------------===//
#include "harness.h"

#include "bundle/manifest.h"
#include "bundle/program_files.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <unistd.h>

namespace rs::e2e {
namespace {

namespace fs = std::filesystem;

/// A copy of every fixture bundle in a temporary directory, with the programs of its
/// portable/ folder: `portable` puts model.b{N}.mlirbc (the artifact) in as model.b{N}.mlir,
/// else model.b{N}.export.mlir (the text of the same module; the bundle's own model.b{N}.mlir
/// is JAX's text before export, with Shardy ops). A copy, not ../shared itself, so the
/// executable cache is on for both.
std::string copyRepository(bool portable) {
  fs::path repo = fs::temp_directory_path() / ("rs_" + std::string(portable ? "portable" : "text") +
                                               "_repo_" + std::to_string(::getpid()));
  fs::remove_all(repo);
  for (const auto &entry : fs::directory_iterator(kBundles)) {
    if (!entry.is_directory())
      continue;
    fs::path dst = repo / entry.path().filename();
    fs::create_directories(dst);
    fs::copy_file(entry.path() / "manifest.yaml", dst / "manifest.yaml");
    fs::copy_file(entry.path() / "weights.safetensors", dst / "weights.safetensors");
    const std::string suffix = portable ? ".mlirbc" : ".export.mlir";
    for (const auto &p : fs::directory_iterator(entry.path() / "portable")) {
      std::string name = p.path().filename().string();
      if (name.ends_with(suffix)) // model.b8.mlirbc, model.b8.export.mlir -> model.b8.mlir
        fs::copy_file(p.path(), dst / (name.substr(0, name.size() - suffix.size()) + ".mlir"));
    }
  }
  return repo.string();
}

class PortableTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    text_repo_ = new std::string(copyRepository(false));
    portable_repo_ = new std::string(copyRepository(true));
    auto text = TestServer::start(*text_repo_);
    ASSERT_TRUE(text.isOk()) << text.status().toString();
    text_ = std::move(text).value().release();
    auto portable = TestServer::start(*portable_repo_);
    ASSERT_TRUE(portable.isOk()) << portable.status().toString();
    portable_ = std::move(portable).value().release();
  }
  static void TearDownTestSuite() {
    delete text_;
    delete portable_;
    for (std::string *repo : {text_repo_, portable_repo_}) {
      if (repo)
        fs::remove_all(*repo);
      delete repo;
    }
  }
  static TestServer *text_;
  static TestServer *portable_;
  static std::string *text_repo_;
  static std::string *portable_repo_;
};
TestServer *PortableTest::text_ = nullptr;
TestServer *PortableTest::portable_ = nullptr;
std::string *PortableTest::text_repo_ = nullptr;
std::string *PortableTest::portable_repo_ = nullptr;

std::map<std::string, std::shared_ptr<const runtime::LoadedModel>> loaded(TestServer &s) {
  std::map<std::string, std::shared_ptr<const runtime::LoadedModel>> out;
  for (const runtime::ModelState &st : s.worker().repository().states()) {
    EXPECT_TRUE(st.status.isOk()) << st.name << ": " << st.status.toString();
    out[st.name] = st.model;
  }
  return out;
}

TEST_F(PortableTest, EveryModelLoadsWithTheSameProgramsNumericsAndCacheKeys) {
  auto text = loaded(*text_);
  auto portable = loaded(*portable_);
  ASSERT_EQ(text.size(), 8u);
  ASSERT_EQ(portable.size(), text.size());
  for (const auto &[name, t] : text) {
    ASSERT_TRUE(portable.count(name)) << name;
    const runtime::LoadedModel &p = *portable[name];
    ASSERT_TRUE(t && portable[name]) << name;
    EXPECT_EQ(p.batch_sizes, t->batch_sizes) << name;
    EXPECT_EQ(p.numerics.outcome(), t->numerics.outcome()) << name;
    ASSERT_EQ(p.cache.size(), t->cache.size()) << name;
    for (const auto &[key, outcome] : t->cache) {
      const std::string file = bundle::programFileName(key, false);
      EXPECT_FALSE(outcome.key.empty()) << name << " " << file;
      EXPECT_EQ(p.cache.at(key).key, outcome.key) << name << " " << file;
      // The evidence hashes the bytes on disk: a portable program is another file.
      EXPECT_NE(p.file_sha256.at(file), t->file_sha256.at(file)) << name << " " << file;
    }
    EXPECT_EQ(p.file_sha256.at("weights.safetensors"), t->file_sha256.at("weights.safetensors"));
  }
}

struct Case {
  std::string model;
  int64_t batch;
};

const std::vector<Case> kCases = {
    {"digits_cnn", 1}, {"digits_cnn", 8},   {"iris_mlp", 1},     {"iris_mlp", 8},
    {"tiny_bert", 1},  {"tiny_bert", 4},    {"resnet_mini", 1},  {"resnet_mini", 8},
    {"op_zoo", 1},     {"tf32_algo", 1},    {"tf32_algo", 4},    {"bert_bench", 1},
    {"bert_bench", 8}, {"resnet_bench", 1}, {"resnet_bench", 8},
};

/// Element i of a float tensor as double (the fixtures' float outputs are f32).
double valueAt(const Tensor &t, int64_t i) {
  return t.dtype() == DType::kF64 ? t.dataAs<double>()[i] : t.dataAs<float>()[i];
}

TEST_F(PortableTest, AnswersAreTheTextBundlesBytesOverBothProtocols) {
  constexpr double kAbsTol = 1e-5, kRelTol = 1e-4; // golden_test.cc's tolerance
  for (const Case &c : kCases) {
    SCOPED_TRACE(c.model + " b" + std::to_string(c.batch));
    auto golden = openGolden(c.model, "b" + std::to_string(c.batch) + ".safetensors");
    ASSERT_TRUE(golden.isOk()) << golden.status().toString();
    auto manifest = bundle::loadManifest(kBundles + "/" + c.model + "/manifest.yaml", c.model);
    ASSERT_TRUE(manifest.isOk()) << manifest.status().toString();
    protocol::InferRequest request;
    request.model_name = c.model;
    request.id = "portable-" + c.model;
    for (const auto &spec : manifest->executable_inputs) {
      auto t = golden->tensor(spec.name);
      ASSERT_TRUE(t.isOk()) << t.status().toString();
      request.inputs.push_back({spec.name, t->reshaped(spec.shapeForBatch(c.batch))});
    }
    auto want = text_->inferGrpc(request);
    ASSERT_TRUE(want.isOk()) << want.status().toString();
    auto grpc = portable_->inferGrpc(request);
    auto http = portable_->inferHttp(request, /*binary=*/true);
    ASSERT_TRUE(grpc.isOk()) << grpc.status().toString();
    ASSERT_TRUE(http.isOk()) << http.status().toString();
    ASSERT_EQ(grpc->outputs.size(), want->outputs.size());
    ASSERT_EQ(http->outputs.size(), want->outputs.size());
    for (size_t o = 0; o < want->outputs.size(); ++o) {
      const Tensor &ours = grpc->outputs[o].tensor;
      EXPECT_EQ(ours.shape(), want->outputs[o].tensor.shape());
      EXPECT_EQ(bytesOf(ours), bytesOf(want->outputs[o].tensor)) << want->outputs[o].name;
      EXPECT_EQ(bytesOf(http->outputs[o].tensor), bytesOf(ours)) << want->outputs[o].name;
      auto xla = golden->tensor(want->outputs[o].name);
      ASSERT_TRUE(xla.isOk()) << xla.status().toString();
      if (!isFloat(ours.dtype())) {
        EXPECT_EQ(bytesOf(ours), bytesOf(*xla)) << want->outputs[o].name;
        continue;
      }
      for (int64_t i = 0; i < ours.numElements(); ++i)
        ASSERT_LE(std::fabs(valueAt(ours, i) - valueAt(*xla, i)),
                  kAbsTol + kRelTol * std::fabs(valueAt(*xla, i)))
            << want->outputs[o].name << "[" << i << "]";
    }
  }
}

TEST(PortableRegulated, TheRegulatedProfileServesTheSameBytesFromBothForms) {
  std::string text_repo = copyRepository(false);
  std::string repo = copyRepository(true);
  const std::string global = "  models_include: [digits_cnn, tiny_bert]\n"
                             "  runtime: {profile: regulated, numerics: f32}\n";
  auto text = TestServer::start(text_repo, global);
  auto portable = TestServer::start(repo, global);
  ASSERT_TRUE(text.isOk()) << text.status().toString();
  ASSERT_TRUE(portable.isOk()) << portable.status().toString();
  for (const Case &c : std::vector<Case>{{"digits_cnn", 4}, {"tiny_bert", 1}}) {
    SCOPED_TRACE(c.model);
    auto golden = openGolden(c.model, "b" + std::to_string(c.batch) + ".safetensors");
    ASSERT_TRUE(golden.isOk()) << golden.status().toString();
    auto manifest = bundle::loadManifest(kBundles + "/" + c.model + "/manifest.yaml", c.model);
    ASSERT_TRUE(manifest.isOk());
    protocol::InferRequest request;
    request.model_name = c.model;
    for (const auto &spec : manifest->executable_inputs) {
      auto t = golden->tensor(spec.name);
      ASSERT_TRUE(t.isOk());
      request.inputs.push_back({spec.name, t->reshaped(spec.shapeForBatch(c.batch))});
    }
    auto want = (*text)->inferGrpc(request);
    auto got = (*portable)->inferGrpc(request);
    ASSERT_TRUE(want.isOk()) << want.status().toString();
    ASSERT_TRUE(got.isOk()) << got.status().toString();
    ASSERT_EQ(got->outputs.size(), want->outputs.size());
    for (size_t o = 0; o < want->outputs.size(); ++o)
      EXPECT_EQ(bytesOf(got->outputs[o].tensor), bytesOf(want->outputs[o].tensor));
  }
  text->reset();
  portable->reset();
  fs::remove_all(repo);
  fs::remove_all(text_repo);
}

} // namespace
} // namespace rs::e2e
