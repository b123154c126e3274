//===- test/e2e/harness.h - A real worker on loopback for end-to-end tests --===//
//
// Starts server::Worker on a model repository (common/test_worker.h), and talks to it the way a
// user would: a gRPC stub generated from the KServe V2 proto, and an HTTP client (cpp-httplib)
// sending KServe V2 JSON or the binary tensor extension. Golden tensors come from
// ../shared/fixtures/golden.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundle/safetensors.h"
#include "common/test_worker.h"
#include "grpc_service.grpc.pb.h"
#include "protocol/service.h"
#include "server/worker.h"

#include <httplib.h>

#include <memory>
#include <string>
#include <vector>

namespace rs::e2e {

inline const std::string kShared = RS_SHARED_DIR;
inline const std::string kBundles = kShared + "/fixtures/bundles";
inline const std::string kGolden = kShared + "/fixtures/golden";

/// A running worker plus clients for both protocols.
class TestServer {
public:
  /// Starts a worker on `model_repo`. `global_yaml` is the node file's `global:` block
  /// body (YAML, indented by two spaces), e.g. "  scheduler: {coalescing: false}\n".
  static Result<std::unique_ptr<TestServer>> start(const std::string &model_repo,
                                                   const std::string &global_yaml = "");

  server::Worker &worker() { return worker_->worker(); }
  inference::GRPCInferenceService::Stub &stub() { return worker_->stub(); }
  /// The stub's channel (for services the stub does not cover).
  const std::shared_ptr<grpc::Channel> &channel() const { return worker_->channel(); }
  /// A fresh HTTP client (httplib clients are not thread-safe; use one per thread).
  std::unique_ptr<httplib::Client> httpClient() const { return worker_->http(); }
  int httpPort() const { return worker_->worker().httpPort(); }
  int metricsPort() const { return worker_->worker().metricsPort(); }

  /// ModelInfer over gRPC (raw_input_contents). Errors carry the gRPC code and message.
  Result<protocol::InferResponse> inferGrpc(const protocol::InferRequest &request);
  /// POST /v2/models/{name}/infer; `binary` sends inputs and asks for outputs with the
  /// binary tensor extension, else JSON. Errors carry the HTTP status mapped to a code.
  Result<protocol::InferResponse> inferHttp(const protocol::InferRequest &request, bool binary);

private:
  std::unique_ptr<testing::TestWorker> worker_;
};

/// The golden file golden/<model>/<file>.
Result<bundle::SafetensorsFile> openGolden(const std::string &model, const std::string &file);

/// Bytes of a tensor as a string (for bit-exact comparisons).
std::string bytesOf(const Tensor &t);

/// Rows [begin, begin+count) of `t` along axis 0, as an owned tensor.
Tensor rowsOf(const Tensor &t, int64_t begin, int64_t count);

} // namespace rs::e2e
