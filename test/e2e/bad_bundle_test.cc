//===- test/e2e/bad_bundle_test.cc - Bad bundles are reported, others serve --
//
// A repository with one good bundle and four bad ones (corrupt manifest, truncated
// safetensors, a program with the wrong arity, a program with an op the CPU executor does not
// run): each bad one is reported at load (a
// `model load failed` log line with the reason, ModelReady false, metadata answering
// with the reason) over gRPC and HTTP, while the good model serves.
//
//===----------------------------------------------------------------------===//
#include "common/files.h"
#include "harness.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace rs::e2e {
namespace {

void copyBundle(const std::string &model, const fs::path &to) {
  fs::create_directories(to);
  for (const auto &entry : fs::directory_iterator(kBundles + "/" + model))
    if (entry.is_regular_file())
      fs::copy_file(entry.path(), to / entry.path().filename());
  fs::permissions(to, fs::perms::owner_all, fs::perm_options::add);
  for (const auto &entry : fs::directory_iterator(to))
    fs::permissions(entry.path(), fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::add);
}

using rs::testing::readFile;
using rs::testing::writeFile;

class BadBundleTest : public ::testing::Test {
protected:
  void SetUp() override {
    repo_ = fs::temp_directory_path() / ("rs_bad_bundles_" + std::to_string(::getpid()));
    fs::remove_all(repo_);
    copyBundle("digits_cnn", repo_ / "digits_cnn");
    copyBundle("iris_mlp", repo_ / "corrupt_manifest");
    writeFile(repo_ / "corrupt_manifest" / "manifest.yaml", "format_version: \"2.0\"\n  bad: [\n");
    copyBundle("iris_mlp", repo_ / "truncated_weights");
    const std::string weights = readFile(repo_ / "truncated_weights" / "weights.safetensors");
    writeFile(repo_ / "truncated_weights" / "weights.safetensors",
              weights.substr(0, weights.size() / 2));
    copyBundle("iris_mlp", repo_ / "wrong_arity");
    for (const char *file : {"model.b1.mlir", "model.b8.mlir", "model.b32.mlir"}) {
      std::string text = readFile(repo_ / "wrong_arity" / file);
      const std::string main = "@main(";
      text.insert(text.find(main) + main.size(), "%extra: tensor<f32>, ");
      writeFile(repo_ / "wrong_arity" / file, text);
    }
    // An op outside the executor's set (issue 3): refused at load with its name and place.
    copyBundle("iris_mlp", repo_ / "unsupported_op");
    for (const char *file : {"model.b1.mlir", "model.b8.mlir", "model.b32.mlir"}) {
      std::string text = readFile(repo_ / "unsupported_op" / file);
      const size_t body = text.find('\n', text.find("func.func public @main(")) + 1;
      text.insert(body, "    %rs_unsupported = stablehlo.replica_id : tensor<ui32>\n");
      writeFile(repo_ / "unsupported_op" / file, text);
    }
    log_ = std::make_shared<std::ostringstream>();
    spdlog::default_logger()->sinks().push_back(
        std::make_shared<spdlog::sinks::ostream_sink_mt>(*log_));
  }
  void TearDown() override {
    spdlog::default_logger()->sinks().pop_back();
    fs::remove_all(repo_);
  }
  fs::path repo_;
  std::shared_ptr<std::ostringstream> log_;
};

TEST_F(BadBundleTest, ReportedAtLoadWhileOthersServe) {
  auto server = TestServer::start(repo_.string());
  ASSERT_TRUE(server.isOk()) << server.status().toString();
  const std::string log = log_->str();
  struct Expect {
    std::string model, reason;
  };
  const std::vector<Expect> bad = {
      {"corrupt_manifest", "manifest.yaml"},
      {"truncated_weights", "weights.safetensors"},
      {"wrong_arity", "main takes 6 arguments but the manifest has 1 input and the weights "
                      "file has 4 weights (5 expected)"},
      {"unsupported_op", "model.b1.mlir:4:5: 'stablehlo.replica_id' op is not supported by the cpu "
                         "executor: it needs a multi-device (replica or partition) setting, and "
                         "the cpu executor runs a single device (in function @main)"},
  };
  auto client = (*server)->httpClient();
  for (const Expect &e : bad) {
    SCOPED_TRACE(e.model);
    EXPECT_NE(log.find("model load failed name=" + e.model), std::string::npos) << log;
    // gRPC: ModelReady false; ModelMetadata answers UNAVAILABLE with the reason.
    inference::ModelReadyRequest ready_req;
    ready_req.set_name(e.model);
    inference::ModelReadyResponse ready;
    grpc::ClientContext ctx1;
    ASSERT_TRUE((*server)->stub().ModelReady(&ctx1, ready_req, &ready).ok());
    EXPECT_FALSE(ready.ready());
    inference::ModelMetadataRequest meta_req;
    meta_req.set_name(e.model);
    inference::ModelMetadataResponse meta;
    grpc::ClientContext ctx2;
    grpc::Status st = (*server)->stub().ModelMetadata(&ctx2, meta_req, &meta);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_NE(st.error_message().find(e.reason), std::string::npos) << st.error_message();
    // HTTP: not ready, and the metadata error names the reason.
    auto r = client->Get("/v2/models/" + e.model + "/ready");
    ASSERT_TRUE(r);
    EXPECT_NE(r->status, 200);
    auto m = client->Get("/v2/models/" + e.model);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->status, 503);
    EXPECT_NE(m->body.find(e.reason), std::string::npos) << m->body;
  }
  // The good model serves over both protocols.
  auto testset = openGolden("digits_cnn", "b1.safetensors");
  protocol::InferRequest request;
  request.model_name = "digits_cnn";
  request.inputs.push_back({"image", *testset->tensor("image")});
  auto g = (*server)->inferGrpc(request);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto h = (*server)->inferHttp(request, true);
  ASSERT_TRUE(h.isOk()) << h.status().toString();
  EXPECT_EQ(bytesOf(g->outputs[0].tensor), bytesOf(h->outputs[0].tensor));
  inference::ModelReadyRequest good_req;
  good_req.set_name("digits_cnn");
  inference::ModelReadyResponse good;
  grpc::ClientContext ctx;
  ASSERT_TRUE((*server)->stub().ModelReady(&ctx, good_req, &good).ok());
  EXPECT_TRUE(good.ready());
}

} // namespace
} // namespace rs::e2e
