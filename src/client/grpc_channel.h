//===- client/grpc_channel.h - gRPC channels to a KServe V2 worker ----------===//
//
// The one place that turns a `host:port` target into a grpc::Channel for the clients
// (`infer`, `loadgen`, `validate`) and the gateway's link to each worker, so message limits,
// subchannel sharing, reconnect backoff and the filter stack are set the same way.
//
// Errors: none here; a bad target or an unreachable server shows on the first call.
// Thread safety: makeChannel is a free function; channels are thread-safe (gRPC).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <grpcpp/grpcpp.h>

#include <climits>
#include <cstdint>
#include <memory>
#include <string>

namespace rs::client {

struct ChannelOptions {
  /// Largest message either way, in bytes (clamped to [0, INT_MAX], gRPC's int).
  int64_t max_message_bytes = INT_MAX;
  /// A channel of its own connections, not shared with other channels to the same target
  /// (GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL): a load generator's clients, a gateway's links.
  bool private_subchannels = false;
  /// Reconnect within 100-500 ms after the server restarts (gRPC's default backoff grows
  /// to 120 s).
  bool fast_reconnect = false;
  /// Only what a benchmark client needs: no retry machinery and gRPC's minimal filter stack
  /// (no message-size or idle filters), the per-call deadline still enforced.
  bool minimal_stack = false;
  /// TLS credentials; null for a plain-text channel.
  std::shared_ptr<grpc::ChannelCredentials> credentials;
};

/// A channel to `target` (`host:port`, support/net.h) with `options`.
std::shared_ptr<grpc::Channel> makeChannel(const std::string &target,
                                           const ChannelOptions &options);

} // namespace rs::client
