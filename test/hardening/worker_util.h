//===- test/hardening/worker_util.h - A real worker on loopback -------------===//
//
// Starts server::Worker on the shared fixtures' iris_mlp (features FP32 [-1,4] -> logits
// FP32 [-1,3]) through common/test_worker.h, and builds requests for it.
// The executable cache is off: ../shared is read-only material.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/test_worker.h"
#include "config/node_config.h"
#include "protocol/grpc_codec.h"
#include "protocol/proto/grpc_service.grpc.pb.h"
#include "server/worker.h"
#include "server/worker_service.h"

#include <grpcpp/grpcpp.h>
#include <httplib.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace rs::testing {

inline const std::string kShared = RS_SHARED_DIR;
inline const std::string kIrisRepo = kShared + "/fixtures/bundles";

/// How a hardening test's worker is set up besides the repository.
struct WorkerSetup {
  /// The node file's `global:` body besides `endpoints` and `runtime`, indented by two
  /// spaces, e.g. "  grpc: {max_recv_msg_bytes: 4096}\n".
  std::string global_yaml;
  /// models_include (empty: every bundle of the repository).
  std::vector<std::string> include = {"iris_mlp"};
  /// Added inside `runtime: {...}` and `endpoints: {...}`, e.g. ", profile: regulated".
  std::string runtime_extra;
  std::string endpoints_extra;
  /// endpoints.shared_memory: system (the hardening tests exercise the extension; it is
  /// off unless enabled).
  bool shared_memory = true;
  /// WorkerOptions::before_dispatch (null: none).
  std::function<void(const std::string &)> before_dispatch;
};

/// A started worker on `model_repo` (common/test_worker.h); null when it does not start.
inline std::unique_ptr<TestWorker> startHardeningWorker(const std::string &model_repo,
                                                        const WorkerSetup &o = {}) {
  std::string yaml = "model_repo: \"" + model_repo +
                     "\"\nbase_port: 18001\nmetrics_base_port: 18002\nglobal:\n"
                     "  endpoints: {host: 127.0.0.1, http_port: 18000" +
                     (o.shared_memory ? ", shared_memory: system" : "") + o.endpoints_extra +
                     "}\n  runtime: {executable_cache: false" + o.runtime_extra + "}\n";
  if (!o.include.empty()) {
    yaml += "  models_include: [";
    for (size_t i = 0; i < o.include.size(); ++i)
      yaml += (i ? ", " : "") + o.include[i];
    yaml += "]\n";
  }
  yaml += o.global_yaml;
  Result<config::WorkerConfig> cfg = firstWorker(yaml, "<hardening>");
  if (!cfg.isOk())
    return nullptr;
  Result<std::unique_ptr<TestWorker>> w = TestWorker::start(*cfg, 0, o.before_dispatch);
  return w.isOk() ? std::move(w).value() : nullptr;
}

/// The constant labels of iris_mlp's series in a hardening worker's /metrics.
inline const std::string kIrisLabels = "gpu=\"\",worker=\"worker0\",model=\"iris_mlp\"";

/// Whether the exposition `text` has the sample `series value` (whole line).
inline bool hasSample(const std::string &text, const std::string &sample) {
  return text.find("\n" + sample + "\n") != std::string::npos;
}

/// iris_mlp features for one row.
inline std::vector<float> irisRow() { return {5.1f, 3.5f, 1.4f, 0.2f}; }

/// A gRPC request for iris_mlp with one row of `features`, raw contents.
inline inference::ModelInferRequest irisRequest(const std::vector<float> &features,
                                                const std::string &id = "1") {
  protocol::InferRequest r;
  r.model_name = "iris_mlp";
  r.id = id;
  r.inputs.push_back(
      {"features", Tensor::copyOf(DType::kF32, {1, 4},
                                  {reinterpret_cast<const uint8_t *>(features.data()),
                                   features.size() * sizeof(float)})});
  return protocol::encodeModelInferRequest(r);
}

/// The JSON body of the same request.
inline std::string irisJson(const std::vector<float> &f, const std::string &id = "1") {
  std::string data;
  for (size_t i = 0; i < f.size(); ++i)
    data += (i ? "," : "") + std::to_string(f[i]);
  return R"({"id":")" + id + R"(","inputs":[{"name":"features","datatype":"FP32","shape":[1,4],)" +
         R"("data":[)" + data + "]}]}";
}

} // namespace rs::testing
