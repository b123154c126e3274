//===- support/net.cc - host:port text --------------------------------------===//
#include "support/net.h"

#include <charconv>

namespace rs {

std::string formatHostPort(std::string_view host, int64_t port) {
  const bool v6 = host.find(':') != std::string_view::npos && !host.starts_with('[');
  std::string out = v6 ? "[" + std::string(host) + "]" : std::string(host);
  return out + ":" + std::to_string(port);
}

Result<HostPort> parseHostPort(std::string_view text, std::string_view what) {
  HostPort hp;
  std::string_view port;
  if (text.starts_with('[')) {
    size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return invalidArgument() << what << ": expected [ipv6]:port";
    hp.host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos)
      return invalidArgument() << what << " has no port";
    hp.host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
  }
  if (hp.host.empty())
    return invalidArgument() << what << " has no host";
  auto r = std::from_chars(port.data(), port.data() + port.size(), hp.port);
  if (port.empty() || r.ec != std::errc() || r.ptr != port.data() + port.size() || hp.port < 1 ||
      hp.port > 65535)
    return invalidArgument() << what << ": port '" << port << "' is not a number in [1, 65535]";
  return hp;
}

} // namespace rs
