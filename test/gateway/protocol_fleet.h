//===- test/gateway/protocol_fleet.h - A gateway for Triton's extensions ------===//
//
// The fixture of gateway_protocols_test.cc and gateway_bytes_cors_test.cc: what
// tritonclient, perf_analyzer, grpcurl, browsers and Kubernetes probes call, asked of a
// gateway over two in-process workers (fleet.h) instead of a worker.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fleet.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <string>
#include <vector>

namespace rs::gateway::testing {

inline constexpr const char *kIris = "iris_mlp";
inline constexpr const char *kEcho = "text_echo";
inline constexpr const char *kApp = "https://app.example.com";

/// `values` as FP32 bytes.
inline std::string floats(const std::vector<float> &values) {
  return std::string(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(float));
}

/// BYTES elements in the length-prefixed raw form (4-byte little-endian length, bytes).
inline std::string lengthPrefixed(const std::vector<std::string> &elements) {
  std::string out;
  for (const std::string &e : elements) {
    const uint32_t n = static_cast<uint32_t>(e.size());
    for (int i = 0; i < 4; ++i)
      out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
    out += e;
  }
  return out;
}

/// Two workers on iris_mlp, each gate also serving kEcho, behind one round_robin gateway
/// whose REST port allows kApp across origins; started once per suite.
class ProtocolFleetTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Result<std::unique_ptr<Fleet>> f = Fleet::start(2, {kIris});
    ASSERT_TRUE(f.isOk()) << f.status().toString();
    fleet_ = std::move(f).value().release();
    for (size_t i = 0; i < fleet_->size(); ++i)
      fleet_->worker(i).gate->echoBytes(kEcho);
    Result<std::unique_ptr<TestGateway>> g =
        TestGateway::start(fleet_->gatewayYaml("  mode: round_robin\n") +
                           "http: {cors_allowed_origins: [\"" + kApp + "\"]}\n");
    ASSERT_TRUE(g.isOk()) << g.status().toString();
    gw_ = std::move(g).value().release();
    channel_ = new std::shared_ptr<grpc::Channel>(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(gw_->gateway().grpcPort()),
                            grpc::InsecureChannelCredentials()));
  }
  static void TearDownTestSuite() {
    delete channel_;
    delete gw_;
    delete fleet_;
    channel_ = nullptr;
    gw_ = nullptr;
    fleet_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(gw_, nullptr); }

  static httplib::Client http() {
    httplib::Client cli("127.0.0.1", gw_->gateway().httpPort());
    cli.set_read_timeout(30, 0);
    return cli;
  }

  /// An iris_mlp request of one row [1, 2, 3, 4] * scale, with id `id`.
  static inference::ModelInferRequest iris(const std::string &id, float scale) {
    inference::ModelInferRequest req;
    req.set_model_name(kIris);
    req.set_id(id);
    auto *in = req.add_inputs();
    in->set_name("features");
    in->set_datatype("FP32");
    in->add_shape(1);
    in->add_shape(4);
    req.add_raw_input_contents(floats({scale, 2 * scale, 3 * scale, 4 * scale}));
    return req;
  }

  static inline Fleet *fleet_ = nullptr;
  static inline TestGateway *gw_ = nullptr;
  static inline std::shared_ptr<grpc::Channel> *channel_ = nullptr;
};

} // namespace rs::gateway::testing
