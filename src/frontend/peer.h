//===- frontend/peer.h - Who is on the other end of a connection ------------===//
//
// The system shared-memory extension is for clients on the server's own host: a region is
// registered, named and listed by the identity of the peer that registered it, and only a
// loopback or unix-socket peer may use it (a remote client cannot reach the host's
// /dev/shm anyway; accepting it would only make the server a proxy into it).
//
// Peer strings as the two transports give them: gRPC's ServerContext::peer()
// ("ipv4:127.0.0.1:50312", "ipv6:[::1]:50312", "unix:/run/x.sock", "unix-abstract:x") and
// the HTTP transport's HttpRequest::remote_addr ("127.0.0.1", "::1", "::ffff:127.0.0.1").
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rs::frontend {

/// The shared-memory owner of `peer`: its address without the port ("127.0.0.1", "::1",
/// "unix") when it is a loopback (127.0.0.0/8, ::1, ::ffff:127.x.y.z) or unix-socket peer;
/// nullopt for any other peer, which may not use shared memory. The same host gives the
/// same identity over gRPC and HTTP.
std::optional<std::string> localPeerIdentity(std::string_view peer);

} // namespace rs::frontend
