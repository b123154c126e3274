//===- test/validation/validate_test.cc - validate record / check end to end -===//
//
// The acceptance cases of issue 10 on the CPU: record against a running worker, restart
// it, check (MATCH, exit 0); change one weight and reload (the model, the tensors that
// differ with their size, the changed weights hash; exit 1); change runtime.numerics or
// the profile (the changed settings; exit 1); plus the ways a check cannot be done.
//
//===----------------------------------------------------------------------===//
#include "tools/validate_command.h"

#include "bundle/safetensors.h"
#include "runtime/executable_cache.h"
#include "support/digest.h"
#include "validation_fixture.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstring>
#include <set>
#include <sstream>

namespace rs::validation_test {
namespace {

using nlohmann::json;

std::string grpcUrl(const server::Worker &w) { return "127.0.0.1:" + std::to_string(w.grpcPort()); }

class Validate : public ::testing::Test {
protected:
  void SetUp() override {
    repo_ = tmp_.str() + "/repo";
    copyBundle("digits_cnn", repo_);
    copyBundle("iris_mlp", repo_);
    fs::create_directories(tmp_.str() + "/requests");
    // Two iris rows as a KServe V2 JSON request file.
    writeFile(tmp_.str() + "/requests/two_rows.json",
              R"({"inputs":[{"name":"features","shape":[2,4],"datatype":"FP32",)"
              R"("data":[0.5,-1.25,1.0,0.75,-0.3,0.2,-1.1,-0.9]}]})");
    record_ = tmp_.str() + "/rec/record.json";
    fs::create_directories(tmp_.str() + "/rec");
  }

  /// Records digits_cnn golden b1 and b8 and the iris JSON request, keeping the outputs
  /// unless `keep_outputs` is false.
  CommandRun record(const server::Worker &w, bool keep_outputs = true) {
    tools::ValidateRecordOptions o;
    o.client.url = grpcUrl(w);
    o.sources = {{"digits_cnn", kGolden + "/digits_cnn/b1.safetensors", true},
                 {"digits_cnn", kGolden + "/digits_cnn/b8.safetensors", true},
                 {"iris_mlp", tmp_.str() + "/requests", false}};
    o.record_path = record_;
    o.outputs_dir = keep_outputs ? tmp_.str() + "/rec/outputs" : "";
    std::ostringstream out, err;
    CommandRun r;
    r.status = tools::runValidateRecord(o, out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
  }

  CommandRun check(const std::string &url, const std::string &protocol = "") {
    tools::ValidateCheckOptions o;
    o.record_path = record_;
    o.url = url;
    o.protocol = protocol;
    o.report_path = tmp_.str() + "/rec/report.json";
    std::ostringstream out, err;
    CommandRun r;
    r.status = tools::runValidateCheck(o, out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
  }

  json report() const { return json::parse(readFile(tmp_.str() + "/rec/report.json")); }

  /// "path" of every identity change in the last report.
  std::set<std::string> changedPaths() const {
    std::set<std::string> out;
    const json rep = report();
    for (const json &c : rep["identity_changes"])
      out.insert(c["path"].get<std::string>());
    return out;
  }

  TempDir tmp_;
  std::string repo_;
  std::string record_;
};

TEST_F(Validate, RecordRestartCheckMatchesOverBothProtocols) {
  std::unique_ptr<server::Worker> first = startWorker(repo_);
  ASSERT_NE(first, nullptr);
  CommandRun rec = record(*first);
  ASSERT_EQ(rec.status, tools::kExitOk) << rec.err;
  EXPECT_NE(rec.out.find("recorded 3 requests (5 output tensors)"), std::string::npos) << rec.out;

  const json r = json::parse(readFile(record_));
  EXPECT_EQ(r["format"], "reactant-server validation record 1");
  EXPECT_EQ(r["identity"]["models"]["digits_cnn"]["weights_sha256"],
            sha256Hex(readFile(repo_ + "/digits_cnn/weights.safetensors")));
  ASSERT_EQ(r["requests"].size(), 3u);
  EXPECT_EQ(r["requests"][0]["name"], "digits_cnn/b1.safetensors");
  EXPECT_EQ(r["requests"][0]["kind"], "golden");
  EXPECT_EQ(r["requests"][2]["name"], "iris_mlp/two_rows.json");
  EXPECT_EQ(r["requests"][2]["outputs_file"], "outputs/0003.safetensors");
  // Every recorded hash is the hash of the kept tensor's bytes.
  for (size_t i = 0; i < 3; ++i) {
    Result<bundle::SafetensorsFile> kept = bundle::SafetensorsFile::open(
        tmp_.str() + "/rec/" + r["requests"][i]["outputs_file"].get<std::string>());
    ASSERT_TRUE(kept.isOk());
    for (const json &o : r["requests"][i]["outputs"]) {
      Result<Tensor> t = kept->tensor(o["name"].get<std::string>());
      ASSERT_TRUE(t.isOk());
      EXPECT_EQ(o["sha256"], sha256Hex(std::string_view(reinterpret_cast<const char *>(t->data()),
                                                        t->byteSize())));
    }
  }
  EXPECT_EQ(r["requests"][1]["outputs"][0],
            json::parse(R"({"name":"logits","datatype":"FP32","shape":[8,10],"sha256":")" +
                        r["requests"][1]["outputs"][0]["sha256"].get<std::string>() + "\"}"));
  first->shutdown();
  first.reset();

  std::unique_ptr<server::Worker> second = startWorker(repo_); // the restart
  ASSERT_NE(second, nullptr);
  CommandRun over_grpc = check(grpcUrl(*second));
  EXPECT_EQ(over_grpc.status, tools::kExitOk) << over_grpc.out << over_grpc.err;
  EXPECT_NE(over_grpc.out.find("identity: no fact changed\n"), std::string::npos) << over_grpc.out;
  EXPECT_NE(over_grpc.out.find("requests: 3 in the record: 3 identical, 0 differ, 0 not checked\n"),
            std::string::npos)
      << over_grpc.out;
  EXPECT_NE(over_grpc.out.find("verdict:  MATCH (3 requests, every output byte-identical; identity "
                               "unchanged)\n"),
            std::string::npos)
      << over_grpc.out;
  EXPECT_EQ(report()["verdict"], "MATCH (3 requests, every output byte-identical; identity "
                                 "unchanged)");

  CommandRun over_http = check("127.0.0.1:" + std::to_string(second->httpPort()), "http");
  EXPECT_EQ(over_http.status, tools::kExitOk) << over_http.out << over_http.err;
}

TEST_F(Validate, ChangedWeightAfterReloadNamesModelTensorsAndHash) {
  std::unique_ptr<server::Worker> w = startWorker(repo_);
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(record(*w).status, tools::kExitOk);

  // fc.bias[0] += 1: logit 0 of every row moves by 1, every prob of the row moves.
  const std::string weights = repo_ + "/digits_cnn/weights.safetensors";
  const std::string before = readFile(weights);
  std::string bytes = before;
  uint64_t header = 0;
  std::memcpy(&header, bytes.data(), 8);
  const json h = json::parse(bytes.substr(8, header));
  const size_t at = 8 + header + h["fc.bias"]["data_offsets"][0].get<size_t>();
  float b0;
  std::memcpy(&b0, bytes.data() + at, 4);
  b0 += 1.0f;
  std::memcpy(bytes.data() + at, &b0, 4);
  writeFile(weights, bytes);
  ASSERT_TRUE(w->repository().loadModel(repo_ + "/digits_cnn").isOk()); // the reload

  CommandRun c = check(grpcUrl(*w));
  EXPECT_EQ(c.status, tools::kExitCheckFailed) << c.out << c.err;
  const std::string old_hash = sha256Hex(before), new_hash = sha256Hex(bytes);
  EXPECT_NE(c.out.find("identity: 1 fact changed\n  [bundle hashes] "
                       "models.digits_cnn.weights_sha256: \"" +
                       old_hash + "\" -> \"" + new_hash + "\"\n"),
            std::string::npos)
      << c.out;
  EXPECT_NE(c.out.find("requests: 3 in the record: 1 identical, 2 differ, 0 not checked\n"),
            std::string::npos)
      << c.out;
  EXPECT_NE(c.out.find("  DIFFERS digits_cnn/b8.safetensors\n    logits: bytes differ"),
            std::string::npos)
      << c.out;
  EXPECT_NE(c.out.find("verdict:  MISMATCH (2 of 3 requests differ; 1 identity fact changed)\n"),
            std::string::npos)
      << c.out;

  const json rep = report();
  ASSERT_EQ(rep["identity_changes"].size(), 1u);
  EXPECT_EQ(rep["identity_changes"][0]["category"], "bundle hashes");
  const json &b8 = rep["requests"][1];
  EXPECT_EQ(b8["name"], "digits_cnn/b8.safetensors");
  EXPECT_EQ(b8["status"], "differs");
  ASSERT_EQ(b8["outputs"].size(), 2u);
  EXPECT_EQ(b8["outputs"][0]["name"], "logits");
  EXPECT_EQ(b8["outputs"][0]["elements_differing"], 8);                   // column 0 of 8 rows
  EXPECT_NEAR(b8["outputs"][0]["max_abs_diff"].get<double>(), 1.0, 1e-5); // f32 rounding of x+1
  EXPECT_EQ(b8["outputs"][1]["name"], "probs");
  EXPECT_GE(b8["outputs"][1]["elements_differing"].get<int64_t>(), 8);
  EXPECT_EQ(rep["requests"][2]["status"], "identical"); // iris_mlp is untouched
}

TEST_F(Validate, WithoutKeptOutputsADifferenceIsNamedButNotSized) {
  std::unique_ptr<server::Worker> w = startWorker(repo_);
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(record(*w, /*keep_outputs=*/false).status, tools::kExitOk);
  EXPECT_FALSE(fs::exists(tmp_.str() + "/rec/outputs"));
  const std::string weights = repo_ + "/digits_cnn/weights.safetensors";
  std::string bytes = readFile(weights);
  bytes.back() ^= 1; // the last byte of fc.weight's data
  writeFile(weights, bytes);
  ASSERT_TRUE(w->repository().loadModel(repo_ + "/digits_cnn").isOk());
  CommandRun c = check(grpcUrl(*w));
  EXPECT_EQ(c.status, tools::kExitCheckFailed) << c.out;
  EXPECT_NE(c.out.find("; the record kept no outputs (record with --outputs-dir to see the size "
                       "of a difference)\n"),
            std::string::npos)
      << c.out;
  const json rep = report();
  EXPECT_FALSE(rep["requests"][1]["outputs"][0].contains("elements_differing"));
}

TEST_F(Validate, ChangedNumericsAndProfileAreNamed) {
  std::unique_ptr<server::Worker> w = startWorker(repo_);
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(record(*w).status, tools::kExitOk);
  w->shutdown();
  w.reset();

  w = startWorker(repo_, "  runtime: {numerics: f32}\n");
  ASSERT_NE(w, nullptr);
  CommandRun f32 = check(grpcUrl(*w));
  EXPECT_EQ(f32.status, tools::kExitCheckFailed) << f32.out << f32.err;
  EXPECT_NE(f32.out.find("  [numerics mode] config.runtime.numerics: \"auto\" -> \"f32\"\n"),
            std::string::npos)
      << f32.out;
  // The CPU computes f32 exactly under both modes: the outputs do not move, but the
  // pinned modules are other programs (new cache keys) and the outcome says so.
  EXPECT_NE(f32.out.find("3 identical, 0 differ"), std::string::npos) << f32.out;
  EXPECT_EQ(
      changedPaths(),
      (std::set<std::string>{
          "config.runtime.numerics", "models.digits_cnn.numerics",
          "models.digits_cnn.programs.1.cache_key",
          "models.digits_cnn.programs.1.cache_payload_sha256",
          "models.digits_cnn.programs.4.cache_key",
          "models.digits_cnn.programs.4.cache_payload_sha256",
          "models.digits_cnn.programs.8.cache_key",
          "models.digits_cnn.programs.8.cache_payload_sha256", "models.iris_mlp.numerics",
          "models.iris_mlp.programs.1.cache_key", "models.iris_mlp.programs.1.cache_payload_sha256",
          "models.iris_mlp.programs.32.cache_key",
          "models.iris_mlp.programs.32.cache_payload_sha256",
          "models.iris_mlp.programs.8.cache_key", "models.iris_mlp.programs.8.cache_payload_sha256",
          "tf32_probe.numerics"}));
  w->shutdown();
  w.reset();

  w = startWorker(repo_, "  runtime: {profile: regulated}\n");
  ASSERT_NE(w, nullptr);
  CommandRun regulated = check(grpcUrl(*w));
  EXPECT_EQ(regulated.status, tools::kExitCheckFailed) << regulated.out;
  for (const char *line : {"  [profile] config.runtime.profile: \"none\" -> \"regulated\"\n",
                           "  [settings] config.runtime.batch_sizes: \"all\" -> \"largest\"\n",
                           "  [settings] config.scheduler.coalescing: \"true\" -> \"false\"\n",
                           "  [model load] models.digits_cnn.batch_sizes: [1,4,8] -> [8]\n"})
    EXPECT_NE(regulated.out.find(line), std::string::npos) << line << "\n" << regulated.out;
}

TEST_F(Validate, AnotherImageIsAnIdentityChange) {
  const std::string file = tmp_.str() + "/image.json";
  std::unique_ptr<server::Worker> w =
      startWorker(repo_, "", imageEnvironment(file, 'a', imageDigest('1')));
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(record(*w).status, tools::kExitOk);
  const json recorded = json::parse(readFile(record_))["identity"]["image"];
  w->shutdown();
  w.reset();

  // The next release: another digest and commit, the same bundles and settings.
  w = startWorker(repo_, "", imageEnvironment(file, 'b', imageDigest('2')));
  ASSERT_NE(w, nullptr);
  CommandRun next = check(grpcUrl(*w));
  EXPECT_EQ(next.status, tools::kExitCheckFailed) << next.out << next.err;
  for (const std::string &line :
       {"  [image/build] image.digest: \"" + imageDigest('1') + "\" -> \"" + imageDigest('2') +
            "\"\n",
        "  [image/build] image.commit: \"" + std::string(40, 'a') + "\" -> \"" +
            std::string(40, 'b') + "\"\n",
        std::string("requests: 3 in the record: 3 identical, 0 differ, 0 not checked\n")})
    EXPECT_NE(next.out.find(line), std::string::npos) << line << "\n" << next.out;
  EXPECT_EQ(changedPaths(), (std::set<std::string>{"image.commit", "image.digest"}));
  w->shutdown();
  w.reset();

  w = startWorker(repo_); // outside a release image
  ASSERT_NE(w, nullptr);
  CommandRun none = check(grpcUrl(*w));
  EXPECT_EQ(none.status, tools::kExitCheckFailed) << none.out << none.err;
  EXPECT_NE(none.out.find("  [image/build] image: " + recorded.dump() + " -> \"none\"\n"),
            std::string::npos)
      << none.out;
  EXPECT_EQ(changedPaths(), std::set<std::string>{"image"});
}

TEST_F(Validate, ChangedRequestFileCannotBeReplayed) {
  std::unique_ptr<server::Worker> w = startWorker(repo_);
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(record(*w).status, tools::kExitOk);
  writeFile(tmp_.str() + "/requests/two_rows.json",
            R"({"inputs":[{"name":"features","shape":[1,4],"datatype":"FP32",)"
            R"("data":[0.5,-1.25,1.0,0.75]}]})");
  CommandRun c = check(grpcUrl(*w));
  EXPECT_EQ(c.status, tools::kExitError) << c.out;
  EXPECT_NE(c.out.find("  NOT CHECKED iris_mlp/two_rows.json: request file " + tmp_.str() +
                       "/requests/two_rows.json changed since the record"),
            std::string::npos)
      << c.out;
  EXPECT_NE(c.out.find("verdict:  ERROR (1 request could not be replayed; every other output "
                       "is identical)\n"),
            std::string::npos)
      << c.out;
}

TEST_F(Validate, RecordRefusesAFailingRequestAndCheckAnUnreachableServer) {
  std::unique_ptr<server::Worker> w = startWorker(repo_);
  ASSERT_NE(w, nullptr);
  tools::ValidateRecordOptions o;
  o.client.url = grpcUrl(*w);
  o.sources = {{"no_such_model", tmp_.str() + "/requests/two_rows.json", false}};
  o.record_path = record_;
  std::ostringstream out, err;
  EXPECT_EQ(tools::runValidateRecord(o, out, err), tools::kExitError);
  EXPECT_EQ(err.str(), "validate record: NOT_FOUND: request no_such_model/two_rows.json: unknown "
                       "model 'no_such_model'\n");
  EXPECT_FALSE(fs::exists(record_));

  ASSERT_EQ(record(*w).status, tools::kExitOk);
  w->shutdown();
  CommandRun c = check("127.0.0.1:1");
  EXPECT_EQ(c.status, tools::kExitError);
  EXPECT_NE(c.out.find("verdict:  ERROR (cannot read the deployment's evidence)\n"),
            std::string::npos)
      << c.out;
}

// An emptied record must not pass as a match: check refuses it as unreadable.
TEST_F(Validate, RecordWithoutRequestsIsRefused) {
  std::unique_ptr<server::Worker> w = startWorker(repo_);
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(record(*w).status, tools::kExitOk);
  json rec = json::parse(readFile(record_));
  rec["requests"] = json::array();
  writeFile(record_, rec.dump());
  CommandRun c = check(grpcUrl(*w));
  EXPECT_EQ(c.status, tools::kExitError) << c.out;
  EXPECT_NE((c.out + c.err).find(record_ + ": the record holds no requests"), std::string::npos)
      << c.out << c.err;
}

// A record path that is a directory or a FIFO is refused by name (a FIFO with no writer used
// to block the command forever); no server is needed to find out.
TEST_F(Validate, RecordThatIsNoRegularFileIsRefusedByName) {
  const std::string fifo = tmp_.str() + "/record.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const auto &[path, why] :
       {std::pair<std::string, std::string>{tmp_.path(), ": is a directory, not a file"},
        {fifo, ": is not a regular file"}}) {
    tools::ValidateCheckOptions o;
    o.record_path = path;
    std::ostringstream out, err;
    EXPECT_EQ(tools::runValidateCheck(o, out, err), tools::kExitError);
    EXPECT_NE((out.str() + err.str()).find(path + why), std::string::npos)
        << out.str() << err.str();
  }
}

} // namespace
} // namespace rs::validation_test
