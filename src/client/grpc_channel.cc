//===- client/grpc_channel.cc - gRPC channels to a KServe V2 worker ---------===//
#include "client/grpc_channel.h"

#include <algorithm>

namespace rs::client {

std::shared_ptr<grpc::Channel> makeChannel(const std::string &target,
                                           const ChannelOptions &options) {
  grpc::ChannelArguments args;
  const int max = static_cast<int>(std::clamp<int64_t>(options.max_message_bytes, 0, INT_MAX));
  args.SetMaxReceiveMessageSize(max);
  args.SetMaxSendMessageSize(max);
  if (options.private_subchannels)
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  if (options.fast_reconnect) {
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
  }
  if (options.minimal_stack) {
    args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
    args.SetInt(GRPC_ARG_MINIMAL_STACK, 1);
    args.SetInt(GRPC_ARG_ENABLE_DEADLINE_CHECKS, 1);
  }
  return grpc::CreateCustomChannel(
      target, options.credentials ? options.credentials : grpc::InsecureChannelCredentials(), args);
}

} // namespace rs::client
