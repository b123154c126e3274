//===- tools/loadgen_command.cc - `reactant-server loadgen` -----------------===//
#include "tools/loadgen_command.h"

#include "client/load_generator.h"

#include <cstdio>
#include <memory>

namespace rs::tools {
namespace {

int runLoadgen(const client::LoadgenOptions &options) {
  Result<client::LoadgenReport> report = client::runLoad(options);
  if (!report.isOk()) {
    std::fprintf(stderr, "error: %s\n", report.status().toString().c_str());
    return 1;
  }
  std::fputs(report->text().c_str(), stdout);
  std::fflush(stdout);
  return report->unexpected == 0 ? 0 : 1;
}

} // namespace

void addLoadgenCommand(CLI::App &app) {
  auto o = std::make_shared<client::LoadgenOptions>();
  auto no_verify = std::make_shared<bool>(false);
  CLI::App *cmd = app.add_subcommand(
      "loadgen", "Drive a KServe V2 server with concurrent valid and malformed requests");
  cmd->add_option("--model", o->model, "Model name")->required();
  cmd->add_option("--protocol", o->protocol, "grpc (default), http or both")
      ->check(CLI::IsMember({"grpc", "http", "both"}));
  cmd->add_option("--grpc-url", o->grpc_url, "gRPC host:port (default 127.0.0.1:8001)");
  cmd->add_option("--http-url", o->http_url, "HTTP host:port (default 127.0.0.1:8000)");
  cmd->add_option("-c,--concurrency", o->concurrency, "Concurrent clients (default 4)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--duration", o->duration_s,
                  "Seconds to run (default 10; 0 with --requests to stop on the count)")
      ->check(CLI::Range(0.0, 1e7));
  cmd->add_option("--requests", o->requests, "Stop after this many requests (0: no limit)");
  cmd->add_option("--malformed", o->malformed_fraction,
                  "Share of malformed requests, 0..1 (default 0)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--shm", o->shared_memory,
                "Include system shared memory requests, valid and malformed (same host)");
  cmd->add_option("--rows", o->rows, "Rows per valid request (default 1)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--payloads", o->payloads, "Distinct random payloads (default 8)")
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_flag("--no-verify", *no_verify, "Do not compare answers with the first answer");
  cmd->add_option("--outputs", o->outputs,
                  "Request only these outputs: names, comma-separated (default: every output)")
      ->delimiter(',');
  cmd->add_flag("--busy-poll", o->busy_poll,
                "gRPC: poll for each answer without sleeping (a core per client; fewer "
                "clients than cores)");
  cmd->add_option("--rtol", o->rtol,
                  "Relative tolerance for floating-point outputs (default 0: bit-exact)");
  cmd->add_option("--seed", o->seed, "Random seed (default 1)");
  cmd->add_option("--timeout-ms", o->timeout_ms, "Per-request deadline (default 60000; 0 none)");
  cmd->add_option("--metrics-url", o->metrics_url,
                  "Server metrics host:port, to sample its resident memory");
  cmd->add_option("--rss-interval", o->rss_interval_s, "Seconds between samples (default 10)");
  cmd->add_option("--stop-when-unreachable", o->stop_when_unreachable,
                  "A client stops after N answers in a row found no server (default 0: never)");
  cmd->callback([o, no_verify] {
    o->verify = !*no_verify;
    std::exit(runLoadgen(*o));
  });
}

} // namespace rs::tools
