//===- test/validation/evidence_test.cc - The deployment-identity document -===//
#include "server/evidence.h"

#include "pjrt/cuda_profile.h"
#include "protocol/proto/reactant_evidence_v1.grpc.pb.h"
#include "runtime/executable_cache.h"
#include "support/build_info.h"
#include "support/digest.h"
#include "tools/validate_command.h"
#include "validation_fixture.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <cmath>
#include <filesystem>
#include <limits>

namespace rs::validation_test {
namespace {

using nlohmann::json;

TEST(FileSha256, KnownVectorsAndMissingFile) {
  TempDir tmp;
  writeFile(tmp.str() + "/abc", "abc");
  writeFile(tmp.str() + "/empty", "");
  Result<std::string> abc = sha256OfFile(tmp.str() + "/abc");
  ASSERT_TRUE(abc.isOk()) << abc.status().toString();
  // FIPS 180-2 test vectors.
  EXPECT_EQ(*abc, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  Result<std::string> empty = sha256OfFile(tmp.str() + "/empty");
  ASSERT_TRUE(empty.isOk());
  EXPECT_EQ(*empty, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  Result<std::string> missing = sha256OfFile(tmp.str() + "/nope");
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), tmp.str() + "/nope: cannot open to compute its sha256");
}

TEST(ParseNvidiaDriverVersion, ProprietaryAndOpenModules) {
  EXPECT_EQ(pjrt::parseNvidiaDriverVersion(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 "
                "22:23:56 UTC 2024\nGCC version:  gcc version 12.2.0\n"),
            "550.54.15");
  EXPECT_EQ(pjrt::parseNvidiaDriverVersion(
                "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release "
                "Build  (dvs-builder@U16-I3-B03-4-3)  Thu Jan 23 2025\n"),
            "570.86.15");
  EXPECT_EQ(pjrt::parseNvidiaDriverVersion(""), "");
  EXPECT_EQ(pjrt::parseNvidiaDriverVersion("NVRM version: NVIDIA UNIX Kernel Module\n12.3"), "");
}

TEST(DiffEvidence, NamesEveryChangedFactWithItsCategoryAndIgnoresInstance) {
  const json recorded = json::parse(R"({
    "format": "reactant-server evidence 1",
    "build": {"version": "0.1.0", "libraries": {"glibc": "2.36"}},
    "backend": {"device_kind": "NVIDIA H200", "driver_version": "550.54.15"},
    "config": {"runtime.numerics": "auto", "runtime.profile": "none",
               "scheduler.coalescing": "true"},
    "tf32_probe": {"tf32_active": "true"},
    "models": {"m": {"state": "ready", "weights_sha256": "aa", "batch_sizes": [1, 8],
                     "programs": {"8": {"file": "model.b8.mlir", "sha256": "s1",
                                        "cache_key": "k1"}}}},
    "instance": {"pid": 1, "worker": "w0"}
  })");
  json current = recorded;
  current["build"]["libraries"]["glibc"] = "2.41";
  current["backend"]["device_kind"] = "NVIDIA A100";
  current["backend"]["driver_version"] = "570.86.15";
  current["config"]["runtime.numerics"] = "f32";
  current["config"]["runtime.profile"] = "regulated";
  current["config"]["scheduler.coalescing"] = "false";
  current["tf32_probe"]["tf32_active"] = "false";
  current["models"]["m"]["weights_sha256"] = "bb";
  current["models"]["m"]["batch_sizes"] = {8};
  current["models"]["m"]["programs"]["8"]["sha256"] = "s2";
  current["models"]["m"]["programs"]["8"]["cache_key"] = "k2";
  current["models"]["n"] = {{"state", "failed"}, {"reason", "bad"}};
  current["instance"] = {{"pid", 2}, {"worker", "w1"}, {"extra", true}};

  std::vector<protocol::FactChange> changes = protocol::diffEvidence(recorded, current);
  std::vector<std::string> lines;
  for (const protocol::FactChange &c : changes)
    lines.push_back(c.category + " | " + c.path + " | " + c.recorded + " | " + c.current);
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "device class | backend.device_kind | \"NVIDIA H200\" | \"NVIDIA A100\"",
                       "driver | backend.driver_version | \"550.54.15\" | \"570.86.15\"",
                       "image/build | build.libraries.glibc | \"2.36\" | \"2.41\"",
                       "numerics mode | config.runtime.numerics | \"auto\" | \"f32\"",
                       "profile | config.runtime.profile | \"none\" | \"regulated\"",
                       "settings | config.scheduler.coalescing | \"true\" | \"false\"",
                       "model load | models.m.batch_sizes | [1,8] | [8]",
                       "cache keys | models.m.programs.8.cache_key | \"k1\" | \"k2\"",
                       "bundle hashes | models.m.programs.8.sha256 | \"s1\" | \"s2\"",
                       "bundle hashes | models.m.weights_sha256 | \"aa\" | \"bb\"",
                       "models | models.n | (absent) | {\"reason\":\"bad\",\"state\":\"failed\"}",
                       "tf32 probe | tf32_probe.tf32_active | \"true\" | \"false\"",
                   }));
  EXPECT_TRUE(protocol::diffEvidence(recorded, recorded).empty());
  json only_instance = recorded;
  only_instance["instance"]["pid"] = 99;
  EXPECT_TRUE(protocol::diffEvidence(recorded, only_instance).empty());
}

TEST(CompareIdentity, ComparesEveryWorkerBehindAGateway) {
  const json worker = {{"format", "reactant-server evidence 1"},
                       {"config", {{"runtime.numerics", "f32"}}},
                       {"instance", {{"worker", "w0"}}}};
  json other = worker;
  other["config"]["runtime.numerics"] = "auto";
  other["instance"]["worker"] = "w1";
  const json gateway = {
      {"format", "reactant-server gateway evidence 1"},
      {"workers",
       {{{"worker", "w0"}, {"evidence", worker}}, {{"worker", "w1"}, {"evidence", other}}}}};
  std::vector<tools::IdentityChange> changes = tools::compareIdentity(worker, gateway);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].worker, "w1");
  EXPECT_EQ(changes[0].change.path, "config.runtime.numerics");
  EXPECT_EQ(changes[0].change.category, "numerics mode");
  EXPECT_EQ(changes[0].change.recorded, "\"f32\"");
  EXPECT_EQ(changes[0].change.current, "\"auto\"");
  EXPECT_TRUE(tools::compareIdentity(worker, worker).empty());
}

Tensor f32Tensor(std::vector<float> v) {
  return Tensor::copyOf(DType::kF32, {static_cast<int64_t>(v.size())},
                        {reinterpret_cast<const uint8_t *>(v.data()), v.size() * sizeof(float)});
}

TEST(TensorDifference, CountsDifferingElementsAndMaxAbsRel) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  tools::TensorDifference d =
      tools::tensorDifference(f32Tensor({1, 2, 4, nan, -8}), f32Tensor({1, 2.5f, 3, nan, -8}));
  EXPECT_EQ(d.elements_differing, 2);
  EXPECT_EQ(d.max_abs_diff, 1.0);
  EXPECT_EQ(d.max_rel_diff, 0.25);

  d = tools::tensorDifference(f32Tensor({0, 1}), f32Tensor({0.5f, nan}));
  EXPECT_EQ(d.elements_differing, 2);
  EXPECT_TRUE(std::isinf(d.max_abs_diff)); // a number against NaN
  EXPECT_TRUE(std::isinf(d.max_rel_diff)); // and a recorded 0

  d = tools::tensorDifference(f32Tensor({0.0f}), f32Tensor({-0.0f}));
  EXPECT_EQ(d.elements_differing, 1); // other bits, same value
  EXPECT_EQ(d.max_abs_diff, 0.0);

  std::vector<int32_t> a = {7, -3}, b = {7, 5};
  d = tools::tensorDifference(
      Tensor::copyOf(DType::kI32, {2}, {reinterpret_cast<const uint8_t *>(a.data()), 8}),
      Tensor::copyOf(DType::kI32, {2}, {reinterpret_cast<const uint8_t *>(b.data()), 8}));
  EXPECT_EQ(d.elements_differing, 1);
  EXPECT_EQ(d.max_abs_diff, 8.0);
  EXPECT_EQ(d.max_rel_diff, 8.0 / 3.0);
}

TEST(ParseRequestSource, ModelPrefixOrDefault) {
  Result<tools::RequestSource> s =
      tools::parseRequestSource("digits_cnn=/g/b8.safetensors", "", true);
  ASSERT_TRUE(s.isOk());
  EXPECT_EQ(s->model, "digits_cnn");
  EXPECT_EQ(s->path, "/g/b8.safetensors");
  EXPECT_TRUE(s->golden);
  s = tools::parseRequestSource("/a=b/req.json", "iris_mlp", false); // '=' inside a path
  ASSERT_TRUE(s.isOk());
  EXPECT_EQ(s->model, "iris_mlp");
  EXPECT_EQ(s->path, "/a=b/req.json");
  s = tools::parseRequestSource("req.json", "", false);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.status().message(),
            "request source 'req.json' names no model: write MODEL=PATH or give --model");
}

/// A worker on copies of digits_cnn and a bundle that fails to load.
class ServedEvidence : public ::testing::Test {
protected:
  void SetUp() override {
    repo_ = tmp_.str() + "/repo";
    copyBundle("digits_cnn", repo_);
    copyBundle("iris_mlp", repo_);
    fs::rename(repo_ + "/iris_mlp", repo_ + "/broken");
    fs::remove(repo_ + "/broken/model.b8.mlir");
    LogCapture capture(log_);
    worker_ = startWorker(repo_, "", imageEnvironment(image_file_, 'a', imageDigest('d')));
    ASSERT_NE(worker_, nullptr);
  }

  TempDir tmp_;
  std::string repo_;
  std::string image_file_ = tmp_.str() + "/image.json";
  std::string log_ = tmp_.str() + "/worker.log"; // the start's log
  std::unique_ptr<server::Worker> worker_;
};

TEST_F(ServedEvidence, DocumentHoldsTheFactsOfTheDeployment) {
  const json doc = json::parse(worker_->evidenceJson());
  EXPECT_EQ(doc["format"], "reactant-server evidence 1");
  EXPECT_EQ(doc["build"]["version"], thisBuild().version);
  EXPECT_EQ(doc["build"]["eigen"], thisBuild().eigen);
  EXPECT_EQ(doc["build"]["libraries"]["grpc"], grpc::Version());
  EXPECT_EQ(doc["backend"]["platform"], "cpu");
  EXPECT_EQ(doc["backend"]["driver_version"], "");
  EXPECT_EQ(doc["tf32_probe"]["tf32_active"], "not applicable (cpu backend computes f32 exactly)");
  EXPECT_EQ(doc["config"]["runtime.numerics"], "auto");
  EXPECT_EQ(doc["config"]["runtime.profile"], "none");
  EXPECT_FALSE(doc["config"].contains("endpoints.port")); // per instance
  EXPECT_EQ(doc["instance"]["config"]["endpoints.http_port"], "18000");
  EXPECT_EQ(doc["image"], json({{"digest", imageDigest('d')},
                                {"version", "0.4.0"},
                                {"commit", std::string(40, 'a')},
                                {"lock_sha256", std::string(64, 'c')},
                                {"variant", "cpu"}}));
  EXPECT_EQ(doc["instance"]["image_identity_file"], image_file_);
  const std::string image_settings = " image.digest=" + imageDigest('d') +
                                     " image.version=0.4.0 image.commit=" + std::string(40, 'a') +
                                     " image.lock_sha256=" + std::string(64, 'c') +
                                     " image.variant=cpu image.file=" + image_file_ + " ";
  const std::string log = readFile(log_);
  const size_t at = log.find("Effective configuration worker=worker0 build.version=");
  ASSERT_NE(at, std::string::npos) << log;
  const std::string effective = log.substr(at, log.find('\n', at) - at);
  EXPECT_NE(effective.find(" build.eigen=" + thisBuild().eigen + image_settings), std::string::npos)
      << effective;

  const std::string dir = repo_ + "/digits_cnn";
  const json &m = doc["models"]["digits_cnn"];
  EXPECT_EQ(m["state"], "ready");
  EXPECT_EQ(m["manifest_sha256"], sha256Hex(readFile(dir + "/manifest.yaml")));
  EXPECT_EQ(m["weights_sha256"], sha256Hex(readFile(dir + "/weights.safetensors")));
  EXPECT_EQ(m["batch_sizes"], json({1, 4, 8}));
  EXPECT_EQ(m["numerics"], "auto (f32: target lacks TF32)");
  EXPECT_EQ(m["inputs"], json::parse(R"([{"name":"image","datatype":"FP32","shape":[-1,8,8,1]}])"));
  EXPECT_EQ(m["outputs"], json::parse(R"([{"name":"logits","datatype":"FP32","shape":[-1,10]},
                                          {"name":"probs","datatype":"FP32","shape":[-1,10]}])"));
  ASSERT_EQ(m["programs"].size(), 3u);
  for (const char *size : {"1", "4", "8"}) {
    const json &p = m["programs"][size];
    const std::string file = std::string("model.b") + size + ".mlir";
    EXPECT_EQ(p["file"], file);
    EXPECT_EQ(p["sha256"], sha256Hex(readFile(dir + "/" + file)));
    EXPECT_EQ(p["cache_key"].get<std::string>().size(), 64u);
    EXPECT_EQ(doc["instance"]["executable_cache"]["programs"]["digits_cnn"][size],
              "miss: no entry"); // a fresh copy: every program compiled
  }
  EXPECT_EQ(doc["models"]["broken"]["state"], "failed");
  EXPECT_NE(doc["models"]["broken"]["reason"].get<std::string>().find("model.b8.mlir"),
            std::string::npos);
  EXPECT_EQ(doc["instance"]["model_dirs"]["digits_cnn"], dir);
}

TEST_F(ServedEvidence, HttpAndGrpcServeTheSameDocument) {
  const json expected = json::parse(worker_->evidenceJson());
  ASSERT_EQ(expected["image"]["digest"], imageDigest('d')); // the digest travels both ways

  httplib::Client http("127.0.0.1", worker_->httpPort());
  httplib::Result r = http.Get("/v2/evidence");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(json::parse(r->body), expected);

  auto stub = reactant_evidence::EvidenceService::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(worker_->grpcPort()), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  reactant_evidence::DeploymentEvidenceResponse resp;
  ASSERT_TRUE(stub->DeploymentEvidence(&ctx, {}, &resp).ok());
  EXPECT_EQ(resp.format(), "reactant-server evidence 1");
  EXPECT_EQ(json::parse(resp.json()), expected);

  for (client::WireProtocol p : {client::WireProtocol::kGrpc, client::WireProtocol::kHttp}) {
    client::KServeClientOptions o;
    o.protocol = p;
    o.url = "127.0.0.1:" + std::to_string(p == client::WireProtocol::kGrpc ? worker_->grpcPort()
                                                                           : worker_->httpPort());
    Result<json> fetched = tools::fetchEvidence(o);
    ASSERT_TRUE(fetched.isOk()) << fetched.status().toString();
    EXPECT_EQ(*fetched, expected);
  }
}

TEST_F(ServedEvidence, ReloadedModelShowsItsNewHashes) {
  const std::string weights = repo_ + "/digits_cnn/weights.safetensors";
  std::string bytes = readFile(weights);
  bytes.back() ^= 1; // the last byte of the last tensor's data
  // Replaced as docs/bundles.md says (a new file renamed over the old): the loaded model
  // maps the old file, and rewriting that in place can SIGBUS whoever reads the mapping.
  writeFile(weights + ".new", bytes);
  std::filesystem::rename(weights + ".new", weights);
  ASSERT_TRUE(worker_->repository().loadModel(repo_ + "/digits_cnn").isOk());
  const json doc = json::parse(worker_->evidenceJson());
  EXPECT_EQ(doc["models"]["digits_cnn"]["weights_sha256"], sha256Hex(bytes));
  // The same modules: the reload found every program in the executable cache.
  EXPECT_EQ(doc["instance"]["executable_cache"]["programs"]["digits_cnn"]["8"], "hit");
}

} // namespace
} // namespace rs::validation_test
