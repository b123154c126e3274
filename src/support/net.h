//===- support/net.h - host:port text ---------------------------------------===//
//
// The one spelling of a network address in the project: `host:port`, with an IPv6 literal
// in brackets (`[::1]:8001`, RFC 3986 section 3.2.2), as gRPC targets, httplib hosts,
// endpoints in gateway.yml and log lines use it. The host is kept without brackets.
//
// Errors: parseHostPort gives InvalidArgument, each message starting with the caller's
// `what` (e.g. "url 'grpc://h'"): "<what> has no port", "<what> has no host",
// "<what>: expected [ipv6]:port", "<what>: port '<p>' is not a number in [1, 65535]".
// Thread safety: pure functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace rs {

/// A parsed `host:port`; `host` has no brackets.
struct HostPort {
  std::string host;
  int port = 0;
};

/// `host:port`, the host in brackets when it is an IPv6 literal (contains ':') that is not
/// bracketed already.
std::string formatHostPort(std::string_view host, int64_t port);
inline std::string formatHostPort(const HostPort &hp) { return formatHostPort(hp.host, hp.port); }

/// Parses `text`, `host:port` or `[ipv6]:port` with a port in [1, 65535]; `what` names the
/// text in errors (see the file comment).
Result<HostPort> parseHostPort(std::string_view text, std::string_view what);

} // namespace rs
