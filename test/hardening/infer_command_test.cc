//===- test/hardening/infer_command_test.cc - `reactant-server infer` errors -===//
//
// The command-line client against a real worker (iris_mlp): an error says whether the
// request reached the server ("request to URL: ..." with the server's answer or the
// transport's error) or was never sent ("request not sent: ..." for a bad input file), and
// the exit status is 1; a usage error exits 2, for `serve` and `loadgen` too.
//
//===----------------------------------------------------------------------===//
#include "process_util.h"
#include "worker_util.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace rs::testing {
namespace {

namespace fs = std::filesystem;

TEST(InferCommand, ErrorsSayWhetherTheRequestReachedTheServer) {
  std::unique_ptr<TestWorker> w = startHardeningWorker(kIrisRepo);
  ASSERT_NE(w, nullptr);
  const std::string url = "127.0.0.1:" + std::to_string(w->worker().grpcPort());
  const fs::path dir = fs::temp_directory_path() / ("rs_infer_cmd_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string good = (dir / "good.json").string(), bad = (dir / "bad.json").string();
  std::ofstream(good)
      << R"({"inputs":[{"name":"features","shape":[1,4],"datatype":"FP32","data":[1,2,3,4]}]})";
  std::ofstream(bad)
      << R"({"inputs":[{"name":"features","shape":[1,5],"datatype":"FP32","data":[1,2,3,4,5]}]})";
  const std::string infer = std::string(RS_SERVER_BINARY) + " infer --url " + url + " ";

  auto [rc, out] = runCommand(infer + "--model iris_mlp --input " + good);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("logits"), std::string::npos) << out;

  std::tie(rc, out) = runCommand(infer + "--model iris_mlp --input " + bad);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(out, "error: INVALID_ARGUMENT: request to " + url +
                     ": model 'iris_mlp': input 'features': shape [1,5] does not match the "
                     "model's [-1,4]\n");

  std::tie(rc, out) = runCommand(infer + "--model nosuch --input " + good);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(out, "error: NOT_FOUND: request to " + url + ": unknown model 'nosuch'\n");

  const std::string missing = (dir / "missing.json").string();
  std::tie(rc, out) = runCommand(infer + "--model iris_mlp --input " + missing);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(out.rfind("error: NOT_FOUND: request not sent: " + missing, 0), 0u) << out;

  std::tie(rc, out) =
      runCommand(infer + "--model iris_mlp --input " + good + " --output /nonexistent/o.st");
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(out, "error: NOT_FOUND: request not sent: --output /nonexistent/o.st: directory "
                 "/nonexistent does not exist\n");

  std::tie(rc, out) = runCommand(infer + "--model iris_mlp");
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("--input is required"), std::string::npos) << out;

  fs::remove_all(dir);
}

TEST(CommandLine, UsageErrorsExitTwoWithTheReason) {
  const std::string bin = RS_SERVER_BINARY;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" serve", "serve: needs --config FILE or --model-repo DIR"},
      {" serve --model-repo /nonexistent --log-level chatty", "--log-level: chatty not in"},
      {" serve --model-repo /nonexistent --log-format xml", "--log-format: xml not in {text,json}"},
      {" loadgen --model m -c 0", "--concurrency: Value 0 not in range 1 to 4096"},
      {" loadgen --model m --malformed 2", "--malformed: Value 2 not in range"},
      {" loadgen --model m --rows 0", "--rows: Value 0 not in range"},
      {" serve --no-such-flag", "The following argument was not expected: --no-such-flag"},
  };
  for (const auto &[args, why] : cases) {
    auto [rc, out] = runCommand(bin + args);
    EXPECT_EQ(rc, 2) << args << ": " << out;
    EXPECT_NE(out.find(why), std::string::npos) << args << ": " << out;
  }
  EXPECT_EQ(runCommand(bin + " serve --help").first, 0);
}

} // namespace
} // namespace rs::testing
