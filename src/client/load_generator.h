//===- client/load_generator.h - Load of valid and malformed requests --------===//
//
// The engine of `reactant-server loadgen`: N concurrent clients send
// inference requests to a running KServe V2 server over gRPC, HTTP or both, for a
// duration or a request count, and the run ends with a report: throughput, latency
// percentiles (p50, p90, p99, max) of the valid requests, and per request kind the
// answers by status code.
//
// Valid kinds: grpc_raw (raw_input_contents), grpc_typed (typed contents), http_json,
// http_binary (binary tensor extension), and with `shared_memory` grpc_shm / http_shm
// (inputs read from and outputs written to system shared memory regions that the
// generator creates with shm_open and registers; the server must run on this host).
// Inputs are random (fixed seeds, `payloads` distinct ones) with `rows` rows; every output
// is requested, or only those named in `outputs` (KServe V2 requested outputs). With `verify`, the
// first successful answer to each payload is the reference and every later answer must equal it
// (byte for byte, or within `rtol` for floating point): run the server with a deterministic
// configuration (e.g. `runtime.profile: regulated`) for exact checks.
//
// Malformed kinds (`malformed_fraction` of the requests, the kinds in turn at random):
// unknown_model, missing_input, extra_input, wrong_dtype, wrong_shape, zero_rows,
// byte_length_mismatch, declared_1gib (a 1 GiB shape with a few bytes of data); over HTTP
// also invalid_json, binary_size_overflow, binary_past_body; over gRPC also
// typed_wrong_field and raw_count_mismatch; with `shared_memory` also shm_offset_past_end,
// shm_offset_overflow, shm_size_mismatch, shm_output_past_end and shm_unregistered. Each
// has an expected answer (INVALID_ARGUMENT / 400, NOT_FOUND / 404 for the unknown model,
// FAILED_PRECONDITION / 400 for the unregistered region); anything else is counted as
// unexpected.
//
// Outcomes: a valid request that gets OK with the reference outputs is `ok`; one that gets
// UNAVAILABLE (HTTP 503), or cannot be delivered (no connection, or the connection closed
// before the request was written: the server is gone, e.g. after SIGTERM), is
// `unavailable`; RESOURCE_EXHAUSTED (429) is `shed`; a wrong output is `wrong`; any other
// answer, a connection dropped mid-request included, is `lost`. As HTTP/1.1 clients do
// (RFC 9112 §9.3.1), a request whose reused keep-alive connection turns out closed by the
// server is sent again once on a new connection (`retried` counts them); a failure on a
// fresh connection is not retried. Likewise a gRPC call answered CANCELLED is sent again
// once: the server answers CANCELLED only to a call its client cancelled (which loadgen
// never does); gRPC core does, without running the call, when it reaches the server in the
// instant its shutdown begins.
//
// With `metrics_url`, the server's process_resident_memory_bytes is sampled from its
// /metrics every `rss_interval_s` seconds; the report gives the samples and the growth of
// the largest sample after the first minute over the first sample at or after one minute.
//
// Errors (runLoad's own): InvalidArgument for bad options, Unavailable when the model's
// metadata cannot be read, Internal when shared memory cannot be set up.
// Thread safety: runLoad() runs its own threads; call it from one thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "client/rss_trend.h"
#include "support/status.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rs::client {

struct LoadgenOptions {
  /// "grpc", "http" or "both" (each request picks one at random).
  std::string protocol = "grpc";
  /// gRPC "host:port" (default 127.0.0.1:8001).
  std::string grpc_url;
  /// HTTP "host:port" (default 127.0.0.1:8000).
  std::string http_url;
  std::string model;
  /// Concurrent clients (threads), each with one request outstanding.
  int concurrency = 4;
  /// Run for this long, in seconds (0: until `requests` are sent).
  double duration_s = 10;
  /// Stop after this many requests in total (0: until `duration_s`).
  int64_t requests = 0;
  /// Share of malformed requests in [0, 1].
  double malformed_fraction = 0;
  /// Include the shared-memory kinds (server on this host).
  bool shared_memory = false;
  /// Rows of every valid request (along the batch axis).
  int64_t rows = 1;
  /// Distinct random payloads.
  int payloads = 8;
  /// Check every valid answer against the first one for its payload.
  bool verify = true;
  /// Relative tolerance for FP16/BF16/FP32/FP64 outputs when verifying; 0 = bit-exact.
  double rtol = 0;
  /// Seed of the payloads and of the choice of kinds.
  uint64_t seed = 1;
  /// Per-request deadline in milliseconds; 0 = none.
  int64_t timeout_ms = 60000;
  /// Metrics "host:port" of the server, to sample its resident memory; "" = off.
  std::string metrics_url;
  double rss_interval_s = 10;
  /// A client stops after this many answers in a row found no server to connect to (it
  /// exited, e.g. after SIGTERM); 0 = never.
  int stop_when_unreachable = 0;
  /// Outputs to request by name, in this order (empty: every output of the model).
  std::vector<std::string> outputs;
  /// gRPC only: each client waits for its answer by polling its own completion queue
  /// without sleeping, instead of blocking in the call. The client's thread then never
  /// halts while a call is in flight, which separates the server's and the transport's
  /// cost from the client's wake-up (docs/performance.md). It burns a core per client, so
  /// the clients must be fewer than the cores (the server needs at least one).
  /// `cores` (0: std::thread::hardware_concurrency) is what that check counts.
  bool busy_poll = false;
  unsigned cores = 0;
  /// Tests only: when set and true, the clients stop after their current request.
  const std::atomic<bool> *cancel = nullptr;
};

/// Answers to one request kind.
struct KindStats {
  bool malformed = false;
  uint64_t sent = 0;
  uint64_t ok = 0;          // valid: OK and correct; malformed: the expected error
  uint64_t unavailable = 0; // UNAVAILABLE / 503, or the server could not be reached
  uint64_t shed = 0;        // RESOURCE_EXHAUSTED / 429
  uint64_t wrong = 0;       // valid: OK with outputs that differ from the reference
  uint64_t lost = 0;        // anything else
  uint64_t retried = 0;     // sent again: HTTP connection found closed, gRPC CANCELLED
  /// Answers by gRPC code name (HTTP statuses mapped back), e.g. "INVALID_ARGUMENT".
  std::map<std::string, uint64_t> codes;
  /// The first unexpected answer's message (for the report).
  std::string first_unexpected;
};

struct LoadgenReport {
  double seconds = 0;
  uint64_t requests = 0;
  double throughput = 0; // requests per second, all kinds
  uint64_t valid = 0;
  uint64_t valid_ok = 0; // of those, answered OK: the latency percentiles are over these
  /// Latency of the valid requests answered OK, milliseconds.
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0;
  uint64_t errors = 0;     // answers other than OK (malformed ones included)
  uint64_t unexpected = 0; // lost + wrong + malformed answered otherwise than expected
  std::map<std::string, KindStats> kinds;
  /// How the clients ran: the outputs they requested (empty: every output) and whether
  /// they busy-polled (LoadgenOptions), so a saved report says which client gave it.
  std::vector<std::string> requested_outputs;
  bool busy_poll = false;
  /// (seconds since start, resident bytes) samples of the server.
  std::vector<std::pair<double, int64_t>> rss;
  /// The samples per minute and their growth (client/rss_trend.h).
  RssTrend rss_trend;

  /// The human-readable report the command prints.
  std::string text() const;
};

/// Runs the load described by `options` (file comment).
Result<LoadgenReport> runLoad(const LoadgenOptions &options);

/// The `q`-quantile (0..1) of `sorted` (ascending) by the nearest-rank method; 0 if empty.
double quantileOf(const std::vector<double> &sorted, double q);

/// The value of the first sample of `metric` (no labels or any labels) in a Prometheus
/// text exposition, if present.
std::optional<double> scrapeValue(const std::string &exposition, const std::string &metric);

} // namespace rs::client
