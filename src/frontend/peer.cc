//===- frontend/peer.cc - Who is on the other end of a connection -----------===//
#include "frontend/peer.h"

namespace rs::frontend {

std::optional<std::string> localPeerIdentity(std::string_view peer) {
  if (peer.starts_with("unix:") || peer.starts_with("unix-abstract:"))
    return std::string("unix");
  std::string_view address = peer;
  if (address.starts_with("ipv4:")) {
    address.remove_prefix(5);
    address = address.substr(0, address.rfind(':')); // the port
  } else if (address.starts_with("ipv6:")) {
    address.remove_prefix(5);
    if (address.starts_with('[') && address.find(']') != std::string_view::npos)
      address = address.substr(1, address.find(']') - 1);
  }
  if (address.starts_with("::ffff:"))
    address.remove_prefix(7); // an IPv4 peer of an IPv6 socket
  if (address == "::1")
    return std::string(address);
  if (!address.starts_with("127.") || address.size() > 15 ||
      address.find_first_not_of("0123456789.") != std::string_view::npos)
    return std::nullopt;
  return std::string(address);
}

} // namespace rs::frontend
