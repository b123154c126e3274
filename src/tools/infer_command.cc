//===- tools/infer_command.cc - `reactant-server infer` ---------------------===//
#include "tools/infer_command.h"

#include "client/infer_io.h"
#include "client/kserve_client.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

namespace rs::tools {
namespace {

/// The request `o` describes, or why it cannot be sent (options, input file, url): those
/// errors are found here, before anything reaches the server.
Result<std::pair<std::unique_ptr<client::KServeClient>, protocol::InferRequest>>
prepare(const InferCommandOptions &o) {
  client::KServeClientOptions co;
  if (o.protocol == "grpc")
    co.protocol = client::WireProtocol::kGrpc;
  else if (o.protocol == "http")
    co.protocol = client::WireProtocol::kHttp;
  else
    return invalidArgument() << "--protocol must be grpc or http, got '" << o.protocol << "'";
  if (!o.output.empty()) { // a reply with nowhere to go would be computed for nothing
    const std::filesystem::path parent =
        std::filesystem::absolute(std::filesystem::path(o.output)).parent_path();
    if (!std::filesystem::is_directory(parent))
      return notFound() << "--output " << o.output << ": directory " << parent.string()
                        << " does not exist";
  }
  co.url = o.url;
  co.tls = o.tls || !o.ca_file.empty() || !o.cert_file.empty() || !o.key_file.empty();
  co.tls_ca_file = o.ca_file;
  co.tls_cert_file = o.cert_file;
  co.tls_key_file = o.key_file;
  co.binary = o.binary;
  co.timeout_ms = o.timeout_ms;
  RS_ASSIGN_OR_RETURN(std::unique_ptr<client::KServeClient> client,
                      client::KServeClient::create(co));
  RS_ASSIGN_OR_RETURN(protocol::InferRequest request, client::loadInferRequest(o.input, o.model));
  request.model_version = o.model_version;
  if (!o.outputs.empty())
    request.requested_outputs = o.outputs;
  if (!o.id.empty())
    request.id = o.id;
  return std::make_pair(std::move(client), std::move(request));
}

Status runInfer(const InferCommandOptions &o) {
  auto prepared = prepare(o);
  if (!prepared.isOk()) // say that the server never saw it
    return prepared.status().withPrefix("request not sent");
  auto &[client, request] = *prepared;
  Result<protocol::InferResponse> answer = client->infer(request);
  if (!answer.isOk()) // the server's answer, or why none came (connection, deadline)
    return answer.status().withPrefix("request to " + client->target());
  protocol::InferResponse &response = *answer;
  if (!o.output.empty()) {
    RS_RETURN_IF_ERROR(client::saveInferOutputs(o.output, response));
    std::printf("wrote %zu outputs to %s\n", response.outputs.size(), o.output.c_str());
    return Status::ok();
  }
  std::string header = "model " + response.model_name;
  if (!response.model_version.empty())
    header += " version " + response.model_version;
  if (!response.id.empty())
    header += " id " + response.id;
  std::printf("%s\n", header.c_str());
  for (const protocol::NamedTensor &t : response.outputs)
    std::printf("%s\n", client::describeTensor(t, o.max_values).c_str());
  return Status::ok();
}

} // namespace

int runInferCommand(const InferCommandOptions &options) {
  Status s = runInfer(options);
  if (s.isOk())
    return 0;
  std::fprintf(stderr, "error: %s\n", s.toString().c_str());
  return 1;
}

void addInferCommand(CLI::App &app) {
  auto opts = std::make_shared<InferCommandOptions>();
  CLI::App *cmd = app.add_subcommand("infer", "Send one inference request to a KServe V2 server");
  cmd->add_option("--model", opts->model, "Model name")->required();
  cmd->add_option("--model-version", opts->model_version, "Model version (ignored by this server)");
  cmd->add_option("--input", opts->input, "Request file: .safetensors or KServe V2 .json")
      ->required();
  cmd->add_option("--output", opts->output, "Write the outputs to this .safetensors file");
  cmd->add_option("--protocol", opts->protocol, "grpc (default) or http")
      ->check(CLI::IsMember({"grpc", "http"}));
  cmd->add_option("--url", opts->url,
                  "Server host:port (default 127.0.0.1:8001 for grpc, 127.0.0.1:8000 for http)");
  cmd->add_option("--outputs", opts->outputs, "Outputs to return, in order (comma-separated)")
      ->delimiter(',');
  cmd->add_option("--id", opts->id, "Request id, echoed in the reply");
  cmd->add_flag("--binary", opts->binary, "HTTP: send and receive binary tensor data");
  cmd->add_option("--timeout-ms", opts->timeout_ms, "Deadline for the call in milliseconds");
  cmd->add_option("--max-values", opts->max_values, "Values printed per output (default 16)");
  cmd->add_flag("--tls", opts->tls, "gRPC over TLS / HTTPS (a worker with tls: keys)");
  cmd->add_option("--ca-file", opts->ca_file,
                  "TLS: PEM CAs the server's certificate must chain to (default: the system's)");
  cmd->add_option("--cert-file", opts->cert_file, "TLS: PEM client certificate (mutual TLS)");
  cmd->add_option("--key-file", opts->key_file, "TLS: PEM key of --cert-file");
  cmd->callback([opts] { std::exit(runInferCommand(*opts)); });
}

} // namespace rs::tools
