//===- client/load_generator_impl.h - Private: loadgen's client threads ---===//
//
// Shared by load_generator.cc (the run: model metadata, threads, report), load_client.cc
// (one client thread sending requests and recording the answers) and load_client_shm.cc
// (that thread's shared memory regions). Not part of the public API.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "client/kserve_client.h"
#include "client/load_generator.h"
#include "client/load_requests.h"
#include "protocol/proto/grpc_service.grpc.pb.h"

#include <grpcpp/grpcpp.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace rs::client::loadgen {

using Clock = std::chrono::steady_clock;

/// A gRPC channel of its own to `hp`, with the minimal stack a benchmark client needs.
std::shared_ptr<grpc::Channel> makeLoadChannel(const HostPort &hp);

/// A kept-alive HTTP client for `hp` with `timeout_ms` read and write timeouts (0 = a day).
std::unique_ptr<httplib::Client> makeHttp(const HostPort &hp, int64_t timeout_ms);

/// Everything the client threads share.
struct Run {
  const LoadgenOptions &options;
  Model model;
  std::vector<Payload> payloads;
  std::vector<KindSpec> valid, malformed;
  HostPort grpc_hp, http_hp;
  bool use_grpc = false, use_http = false;
  Clock::time_point start;
  std::atomic<bool> stop{false};
  std::atomic<int64_t> issued{0};
  std::atomic<uint64_t> serial{0};

  std::mutex mu;
  std::map<std::string, KindStats> kinds;                    // GUARDED_BY(mu)
  std::vector<double> latencies_ms;                          // GUARDED_BY(mu)
  std::vector<std::optional<std::vector<std::string>>> refs; // GUARDED_BY(mu)

  explicit Run(const LoadgenOptions &o) : options(o) {}
};

/// An answer, protocol-neutral.
struct Answer {
  StatusCode code = StatusCode::kOk;
  int http_status = 0; // HTTP only
  bool transport_lost = false;
  bool unreachable = false; // no connection could be made
  bool retried = false;
  std::string message;
  std::vector<std::string> outputs; // bytes of every output in model order (valid, OK)
};

/// One client of the load: sends requests of random kinds and payloads until the run
/// stops, and records every answer in the run.
class ClientThread {
public:
  ClientThread(Run &run, int index)
      : run_(run), index_(index), rng_(run.options.seed * 7919 + index) {}
  ~ClientThread();

  /// Opens the connections and, with shared memory, creates and registers the regions.
  Status setup();

  /// Sends requests until the run stops, the request count or duration is reached, or the
  /// server has been unreachable `stop_when_unreachable` times in a row.
  void loop();

private:
  void one(const KindSpec &kind, size_t p);

  /// The request of `kind` for payload `p`. A valid kind's request depends only on the
  /// payload (and this client's shared memory), so it is built once and sent again as it
  /// is; a malformed one is built each time (unknown_model names are unique).
  const WireRequest &wireRequest(const KindSpec &kind, size_t p);

  Answer sendGrpc(const KindSpec &kind, const WireRequest &req);

  /// One ModelInfer call: blocking, or with `busy_poll` started on this client's completion
  /// queue and polled for without sleeping until it ends.
  grpc::Status callModelInfer(grpc::ClientContext &ctx, const inference::ModelInferRequest &req,
                              inference::ModelInferResponse &resp);

  /// Whether a reply with `got` outputs carries as many as were requested; if not, `a`
  /// becomes the INTERNAL answer that says so.
  bool outputCountMatches(size_t got, Answer &a) const;

  /// True when a fresh TCP connection to `hp` is refused (nothing listens there). An
  /// HTTP/1.1 GET serves as the probe on either port: on the gRPC port a listening server
  /// accepts the connection and then fails the GET some other way.
  static bool refusesConnections(const HostPort &hp);

  Answer sendHttp(const KindSpec &kind, const WireRequest &req);

  void record(const KindSpec &kind, size_t p, const Answer &a, double ms);

  // ---- Shared memory (load_client_shm.cc) -------------------------------------

  Status setupShm();
  Status registerRegion(const std::string &name, uint64_t offset, uint64_t size);
  void teardownShm();
  void writeShmInputs(const Payload &p);
  std::vector<std::string> readShmOutputs(const Payload &p);

  Run &run_;
  int index_;
  std::mt19937_64 rng_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
  std::unique_ptr<grpc::CompletionQueue> cq_; // busy_poll only
  std::unique_ptr<httplib::Client> http_;
  bool http_reused_ = false; // the next HTTP request goes over a kept-alive connection
  int unreachable_in_a_row_ = 0;
  ClientShm shm_;
  bool registered_ = false;
  std::map<std::pair<std::string, size_t>, WireRequest> built_; // valid kinds, by payload
  WireRequest scratch_;                                         // the last malformed request
};

} // namespace rs::client::loadgen
