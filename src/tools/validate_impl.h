//===- tools/validate_impl.h - Shared parts of validate record and check --===//
//
// Private to tools/validate_*.cc: request-set planning and reading, output hashing
// (validate_requests.cc), client setup (validate_command.cc), and identity and JSON text
// helpers (validate_identity.cc) shared by `validate record` (validate_command.cc) and
// `validate check` (validate_check.cc). See validate_command.h for the contract.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "client/kserve_client.h"
#include "protocol/inference.h"
#include "support/status.h"
#include "tools/file_output.h"
#include "tools/validate_command.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rs::tools::detail {

/// One request of the set, before it is read.
struct PlannedRequest {
  std::string name; // "<model>/<file name>"
  std::string model;
  std::string file; // absolute path
  std::string kind; // "safetensors", "json" or "golden"
};

/// "grpc" or "http".
std::string protocolName(client::WireProtocol p);
/// InvalidArgument for anything but "grpc" and "http".
Result<client::WireProtocol> parseProtocol(const std::string &name);
/// "grpc://127.0.0.1:8001" (the URL as given when it does not parse).
std::string serverText(const client::KServeClientOptions &c);
/// JSON text with invalid UTF-8 replaced; `indent` -1 for one line.
std::string dumpJson(const nlohmann::json &j, int indent = -1);
/// `text` as a JSON object; InvalidArgument naming `what` otherwise.
Result<nlohmann::json> parseObject(std::string_view text, std::string_view what);
/// SHA-256 of the tensor's bytes, 64 hex digits.
std::string sha256OfTensor(const Tensor &t);
/// The string member `key` of `j`, or "".
std::string str(const nlohmann::json &j, const char *key);

/// The requests of `sources` in order (files of a directory by name). Errors: NotFound
/// for a missing path or an empty directory, InvalidArgument for a bad extension or a
/// repeated request name.
Result<std::vector<PlannedRequest>> planRequests(const std::vector<RequestSource> &sources);
/// Reads one request; a golden file's inputs are named by `identity` (models.<m>.inputs).
Result<protocol::InferRequest> loadRequest(const PlannedRequest &r, const nlohmann::json &identity);
/// [{name, datatype, shape, sha256}] of the reply's outputs, in reply order.
nlohmann::json outputsJson(const protocol::InferResponse &response);
/// A client for `options`, HTTP always with binary tensor data.
Result<std::unique_ptr<client::KServeClient>> makeClient(client::KServeClientOptions options);
/// "  [category] worker w: path: recorded -> current".
std::string changeLine(const IdentityChange &c);
/// A few lines naming the build, device, numerics, profile and each model's batch sizes,
/// weights hash and numerics outcome (a gateway's document: its first worker's).
std::string identitySummary(const nlohmann::json &identity);

} // namespace rs::tools::detail
