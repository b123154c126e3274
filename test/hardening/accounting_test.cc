//===- test/hardening/accounting_test.cc - Answers counted as the client saw them ==//
//
// Every answer counts under the status the client received: a gRPC reply larger than
// grpc.max_send_msg_bytes is RESOURCE_EXHAUSTED in worker_requests_total and in the request
// log, not OK; so is a request larger than grpc.max_recv_msg_bytes (up to twice it, which is
// what gRPC itself lets through). Datatype errors name the model's datatype beside the
// received one: a BYTES input to a numeric model, and what the wire cannot carry (FP16 as JSON).
//
//===----------------------------------------------------------------------===//
#include "log_capture.h"
#include "worker_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace rs::testing {
namespace {

using inference::ModelInferRequest;
using inference::ModelInferResponse;

/// `s` is RESOURCE_EXHAUSTED with `message`, which is the one request-failed line `capture`
/// holds (request 'big' of iris_mlp over gRPC).
void expectRefusedAndLoggedOnce(const grpc::Status &s, const std::string &message,
                                LogCapture &capture) {
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(s.error_message(), message);
  const std::vector<std::string> lines = capture.lines("request failed");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "warning request failed protocol=grpc model=\"iris_mlp\" id=\"big\" "
                      "code=RESOURCE_EXHAUSTED reason=\"" +
                          message + "\"");
}

TEST(Accounting, AGrpcReplyOverTheSendLimitCountsAndLogsAsResourceExhausted) {
  WorkerSetup o;
  o.global_yaml = "  grpc: {max_send_msg_bytes: 40}\n";
  auto w = startHardeningWorker(kIrisRepo, o);
  ASSERT_TRUE(w);
  // The reply's size does not depend on the logits' values: 3 FP32 in raw contents.
  protocol::InferResponse expected;
  expected.model_name = "iris_mlp";
  expected.id = "big";
  expected.outputs.push_back({"logits", Tensor::zeros(DType::kF32, {1, 3})});
  ModelInferResponse encoded;
  protocol::encodeModelInferResponse(expected, {}, &encoded);
  ASSERT_GT(encoded.ByteSizeLong(), 40u);

  LogCapture capture;
  ModelInferResponse reply;
  grpc::Status s = w->infer(irisRequest(irisRow(), "big"), &reply);
  expectRefusedAndLoggedOnce(s,
                             "model 'iris_mlp', request 'big': response of " +
                                 std::to_string(encoded.ByteSizeLong()) +
                                 " bytes exceeds grpc.max_send_msg_bytes (40)",
                             capture);
  const std::string text = w->scrape();
  EXPECT_TRUE(
      hasSample(text, "worker_requests_total{" + kIrisLabels + ",status=\"RESOURCE_EXHAUSTED\"} 1"))
      << text;
  EXPECT_EQ(text.find("worker_requests_total{" + kIrisLabels + ",status=\"OK\"}"),
            std::string::npos);
  // The same request over HTTP has no gRPC limit and is answered.
  auto res = w->http()->Post("/v2/models/iris_mlp/infer", irisJson(irisRow()), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_TRUE(hasSample(w->scrape(), "worker_requests_total{" + kIrisLabels + ",status=\"OK\"} 1"));
}

TEST(Accounting, AGrpcRequestOverTheReceiveLimitCountsAndLogsAsResourceExhausted) {
  const ModelInferRequest small = irisRequest(irisRow(), "big");
  const int64_t limit = static_cast<int64_t>(small.ByteSizeLong()) + 16;
  WorkerSetup o;
  o.global_yaml = "  grpc: {max_recv_msg_bytes: " + std::to_string(limit) + "}\n";
  auto w = startHardeningWorker(kIrisRepo, o);
  ASSERT_TRUE(w);
  ModelInferRequest big = small;
  big.add_raw_input_contents(std::string(40, 'x')); // over the limit by about 26 bytes
  const int64_t bytes = static_cast<int64_t>(big.ByteSizeLong());
  ASSERT_GT(bytes, limit);
  ASSERT_LE(bytes, 2 * limit); // within gRPC's own limit (twice ours): the server sees it

  LogCapture capture;
  ModelInferResponse reply;
  expectRefusedAndLoggedOnce(w->infer(big, &reply),
                             "request message of " + std::to_string(bytes) +
                                 " bytes exceeds grpc.max_recv_msg_bytes (" +
                                 std::to_string(limit) + ")",
                             capture);
  EXPECT_TRUE(hasSample(w->scrape(), "worker_requests_total{" + kIrisLabels +
                                         ",status=\"RESOURCE_EXHAUSTED\"} 1"));
  // The request within the limit is answered.
  EXPECT_TRUE(w->infer(small, &reply).ok());
  EXPECT_TRUE(hasSample(w->scrape(), "worker_requests_total{" + kIrisLabels + ",status=\"OK\"} 1"));
}

TEST(Accounting, BytesInputNamesTheExpectedAndReceivedDatatypes) {
  auto w = startHardeningWorker(kIrisRepo);
  ASSERT_TRUE(w);
  ModelInferRequest req = irisRequest(irisRow(), "b");
  req.mutable_inputs(0)->set_datatype("BYTES");
  req.clear_raw_input_contents();
  for (const char *e : {"a", "b", "c", "d"})
    req.mutable_inputs(0)->mutable_contents()->add_bytes_contents(e);
  ModelInferResponse reply;
  grpc::Status s = w->infer(req, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "model 'iris_mlp', request 'b': input 'features': datatype BYTES "
                               "does not match the model's FP32");
  auto res = w->http()->Post("/v2/models/iris_mlp/infer",
                             R"({"inputs":[{"name":"features","datatype":"BYTES",)"
                             R"("shape":[1,4],"data":["a","b","c","d"]}]})",
                             "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(nlohmann::json::parse(res->body)["error"],
            "model 'iris_mlp': input 'features': datatype BYTES does not match the model's FP32");
}

TEST(Accounting, Fp16AsJsonNamesTheExpectedAndReceivedDatatypes) {
  auto w = startHardeningWorker(kIrisRepo);
  ASSERT_TRUE(w);
  auto res = w->http()->Post("/v2/models/iris_mlp/infer",
                             R"({"inputs":[{"name":"features","datatype":"FP16",)"
                             R"("shape":[1,4],"data":[1,2,3,4]}]})",
                             "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(nlohmann::json::parse(res->body)["error"],
            "model 'iris_mlp': input 'features': FP16 has no JSON form; send it as binary data "
            "(expected FP32, received FP16 as JSON data)");
  // An input the model does not have: only the received datatype is named.
  res = w->http()->Post("/v2/models/iris_mlp/infer",
                        R"({"inputs":[{"name":"other","datatype":"BF16",)"
                        R"("shape":[1],"data":[1]}]})",
                        "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(nlohmann::json::parse(res->body)["error"],
            "model 'iris_mlp': input 'other': BF16 has no JSON form; send it as binary data "
            "(received BF16 as JSON data)");
}

} // namespace
} // namespace rs::testing
