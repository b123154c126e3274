//===- tools/infer_command.h - `reactant-server infer` ----------------------===//
//
// A command-line KServe V2 client:
//
//   reactant-server infer --model NAME --input FILE [--protocol grpc|http]
//       [--url host:port] [--model-version V] [--output FILE.safetensors]
//       [--outputs name,name] [--id ID] [--binary] [--timeout-ms N] [--max-values N]
//       [--tls [--ca-file PEM] [--cert-file PEM --key-file PEM]]
//
// The request comes from a `.safetensors` file (every tensor an input) or a `.json` file in
// the KServe V2 REST request form (client/infer_io.h); --outputs and --id override what a
// JSON file says. It is sent over gRPC (default, 127.0.0.1:8001) or HTTP (127.0.0.1:8000;
// --binary uses the binary tensor data extension both ways). --tls is for a worker with
// `tls:` keys: gRPC over TLS or HTTPS, the server's certificate checked against --ca-file
// (or the system's CAs), --cert-file/--key-file for one that asks for a client certificate.
// The outputs are printed one line each (name, datatype, shape, the first --max-values
// values), or written to --output as safetensors.
// Exit status: 0 on success; 1 when the request fails: the error goes to stderr with its
// gRPC code name and says where it arose, "request not sent: ..." (options, url, input file:
// found here) or "request to URL: ..." (the server's answer, or why none came); 2 for bad
// command-line use (CLI11).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace rs::tools {

struct InferCommandOptions {
  std::string model;
  std::string model_version;
  std::string input;
  std::string output;
  std::string protocol = "grpc";
  std::string url;
  std::vector<std::string> outputs;
  std::string id;
  bool binary = false;
  int64_t timeout_ms = 0;
  size_t max_values = 16;
  /// TLS (--tls; implied by any of the files): server CAs, client certificate and key.
  bool tls = false;
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
};

/// Runs the command with parsed options; returns the exit status.
int runInferCommand(const InferCommandOptions &options);

/// Registers the `infer` subcommand on `app`.
void addInferCommand(CLI::App &app);

} // namespace rs::tools
