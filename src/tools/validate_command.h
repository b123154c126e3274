//===- tools/validate_command.h - `reactant-server validate record|check` --===//
//
// Validation records (docs/validation.md walks through them):
//
//   reactant-server validate record --out RECORD.json [--model M] [--requests [M=]PATH]...
//       [--golden [M=]PATH]... [--outputs-dir DIR] [--protocol grpc|http] [--url host:port]
//       [--timeout-ms N]
//   reactant-server validate check RECORD.json [--protocol grpc|http] [--url host:port]
//       [--report REPORT.json] [--timeout-ms N]
//
// `record` fetches the deployment identity (server/evidence.h) from the running worker,
// sends every request of the request set one at a time, fetches the identity again (it
// must not have changed meanwhile), and writes the record: the identity and, per request,
// its file and the file's SHA-256, and every output's name, datatype, shape and the
// SHA-256 of its bytes (row-major, little-endian: the tensor as served). With
// --outputs-dir the outputs themselves are kept too, one safetensors file per request
// (client/infer_io.h), which lets `check` give the size of a difference.
//
// The request set: --requests PATH is a request file (.safetensors: every tensor an input;
// .json: a KServe V2 REST request body) or a directory whose .safetensors and .json files
// (not recursive, by name) are each one request; --golden PATH is a fixture golden file
// (fixtures/golden/<model>/b{N}.safetensors) or a directory of them, whose tensors named
// as the model's inputs (from the identity's models.<M>.inputs) are sent and the rest
// ignored. `M=` names the model of that entry; without it, --model applies. A request's
// name is "<model>/<file name>" and must be unique in the set.
//
// `check` reads the record, re-sends every request (the files must still have their
// recorded SHA-256), compares every output byte for byte, compares the identity now with
// the recorded one (protocol::diffEvidence: every fact outside `instance`), and prints a
// report: the identity facts that changed, with their category (image/build, device
// class, driver, numerics mode, profile, settings, bundle hashes, cache keys...); per
// request the outputs that differ (dtype or shape, or the number of differing elements
// and the max abs and max rel difference when the record kept the outputs); then the
// verdict. HTTP is always used with the binary tensor extension, so both protocols carry
// the exact bytes. When the current document is a gateway's (format "reactant-server
// gateway evidence 1" with `workers`), every worker's document is compared with the
// recorded one.
//
// Exit status (tools/exit_status.h): 0 MATCH (every output identical and no identity fact
// changed); 1 MISMATCH (an output differs, a request now fails, or an identity fact
// changed); 3 ERROR (the check or record could not be done: bad record, server
// unreachable, a request file missing or changed; record: a request failed); 2 is bad
// command-line use (CLI11).
//
// Thread safety: the functions touch only their arguments, files and the server.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "client/kserve_client.h"
#include "client/tensor_compare.h"
#include "protocol/evidence.h"
#include "support/status.h"
#include "tools/exit_status.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace rs::tools {

/// "reactant-server validation record 1": the `format` of a record.
inline constexpr std::string_view kRecordFormat = "reactant-server validation record 1";

/// One entry of a request set.
struct RequestSource {
  std::string model;
  std::string path;    // a request file or a directory of them
  bool golden = false; // a fixture golden file: only the model's inputs are sent
};

struct ValidateRecordOptions {
  /// Server, protocol and deadline (HTTP is always sent binary).
  client::KServeClientOptions client;
  std::vector<RequestSource> sources;
  /// Where the record is written (through a temporary file renamed into place).
  std::string record_path;
  /// When set, every request's outputs are kept as `<dir>/<NNNN>.safetensors`.
  std::string outputs_dir;
};

struct ValidateCheckOptions {
  std::string record_path;
  /// "" = the record's protocol / URL.
  std::string protocol;
  std::string url;
  int64_t timeout_ms = 0;
  /// When set, the check's result is also written there as JSON.
  std::string report_path;
};

/// The deployment identity from a running server: GET /v2/evidence (HTTP) or
/// reactant_evidence.EvidenceService/DeploymentEvidence (gRPC). Errors: the server's
/// (UNIMPLEMENTED / 404 NotFound when it serves no evidence), Unavailable when it cannot
/// be reached, InvalidArgument when the reply is not a JSON object.
Result<nlohmann::json> fetchEvidence(const client::KServeClientOptions &client);

/// Parses "[MODEL=]PATH" (the model part is taken only when it holds no '/'), with
/// `default_model` when it has none. InvalidArgument when neither gives a model.
Result<RequestSource> parseRequestSource(const std::string &spec, const std::string &default_model,
                                         bool golden);

/// Identity facts that changed, each labelled with the worker it belongs to ("" for a
/// single worker's document; the worker's name behind a gateway).
struct IdentityChange {
  std::string worker;
  protocol::FactChange change;
};

/// Compares the current document (a worker's, or a gateway's with `workers`) with the
/// recorded worker document.
std::vector<IdentityChange> compareIdentity(const nlohmann::json &recorded,
                                            const nlohmann::json &current);

/// How far a tensor moved from its recorded value (client/tensor_compare.h).
using client::TensorDifference;
using client::tensorDifference;

/// Runs `validate record`; writes the report to `out`, errors to `err`; returns the exit
/// status (kExitOk on success, kExitError otherwise).
int runValidateRecord(const ValidateRecordOptions &options, std::ostream &out, std::ostream &err);

/// Runs `validate check`; returns kExitOk, kExitCheckFailed or kExitError.
int runValidateCheck(const ValidateCheckOptions &options, std::ostream &out, std::ostream &err);

/// Registers `validate record` and `validate check` on `app`.
void addValidateCommand(CLI::App &app);

} // namespace rs::tools
