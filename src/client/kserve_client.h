//===- client/kserve_client.h - A KServe V2 client over gRPC or HTTP ---------===//
//
// A small synchronous client of any KServe V2 server (this one, Triton, KServe): used by
// the `infer` command and by tests that drive the front-ends end to end. gRPC sends every
// input as raw_input_contents; HTTP sends JSON data, or binary tensor data with
// `binary = true` (outputs are then requested binary too), and always accepts either form
// in the reply (protocol/http_codec.h).
//
// Errors: the server's error as a Status with its code (gRPC codes pass through; HTTP
// statuses map back with protocol::fromHttpError), Unavailable when the server cannot be
// reached, DeadlineExceeded past `timeout_ms`, InvalidArgument for a bad URL or a reply
// that does not decode.
// Thread safety: one KServeClient may be used from several threads (gRPC channel and a
// fresh HTTP connection per call).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/inference.h"
#include "support/net.h"
#include "support/status.h"

#include <cstdint>
#include <memory>
#include <string>

namespace rs::client {

enum class WireProtocol { kGrpc, kHttp };

struct KServeClientOptions {
  WireProtocol protocol = WireProtocol::kGrpc;
  /// "host:port", optionally prefixed by "grpc://" or "http://"; empty means 127.0.0.1 on
  /// the protocol's default port (gRPC 8001, HTTP 8000).
  std::string url;
  /// HTTP only: send inputs and request outputs as binary tensor data.
  bool binary = false;
  /// Per-call deadline in milliseconds; 0 for none.
  int64_t timeout_ms = 0;
  /// Largest message either way, in bytes (gRPC).
  int64_t max_message_bytes = int64_t{512} << 20;
  /// TLS (gRPC over TLS, HTTPS) to a worker whose `tls:` keys are set (docs/operations.md).
  bool tls = false;
  /// PEM CA certificates the server's certificate must chain to; "" = the system's roots.
  std::string tls_ca_file;
  /// PEM client certificate and its key, for a worker that asks for one (mutual TLS);
  /// both or neither.
  std::string tls_cert_file;
  std::string tls_key_file;
};

/// Parses `url` for `protocol` (rules above). InvalidArgument for a missing or bad port,
/// an empty host, or a scheme that is not the protocol's.
Result<HostPort> parseServerUrl(const std::string &url, WireProtocol protocol);

class KServeClient {
public:
  /// Validates the URL and reads the TLS files (FailedPrecondition naming one that cannot be
  /// read; InvalidArgument for a client certificate without its key or the other way round);
  /// no connection is made yet.
  static Result<std::unique_ptr<KServeClient>> create(KServeClientOptions options);
  virtual ~KServeClient() = default;

  /// Sends `request` (model, version, id, inputs, requested outputs) and returns the reply.
  virtual Result<protocol::InferResponse> infer(const protocol::InferRequest &request) = 0;
  /// ServerReady (gRPC) or GET /v2/health/ready (HTTP): true, false, or the error.
  virtual Result<bool> serverReady() = 0;
  /// The server's "host:port" that the URL resolved to (the protocol's default when the URL
  /// was empty), for messages.
  virtual std::string target() const = 0;
};

} // namespace rs::client
