//===- frontend/http_framing.cc - HTTP/1.1 keep-alive and response head ----===//
//
// The framing rules a connection applies (frontend/http_connection_impl.h): the
// Connection header's close / keep-alive tokens by protocol version (RFC 9112 section 9.3),
// and the status line and fields of a response, with the transport's own Content-Length
// and `Connection: close`.
//
//===----------------------------------------------------------------------===//
#include "frontend/http_connection_impl.h"

#include "support/text.h"

#include <boost/beast/http/status.hpp>

#include <string_view>

namespace rs::frontend::http_connection_detail {

bool wantsKeepAlive(const HttpRequest &req) {
  bool close = false, keep = false;
  for (auto [it, end] = req.headers.equal_range("Connection"); it != end; ++it) {
    std::string_view v = it->second;
    size_t start = 0;
    while (start <= v.size()) {
      size_t comma = v.find(',', start);
      std::string_view tok =
          v.substr(start, comma == std::string_view::npos ? v.npos : comma - start);
      tok = trim(tok);
      close |= equalsIgnoreCase(tok, "close");
      keep |= equalsIgnoreCase(tok, "keep-alive");
      if (comma == std::string_view::npos)
        break;
      start = comma + 1;
    }
  }
  return req.version >= 11 ? !close : keep && !close;
}

std::string serializeHead(const HttpResponse &res, bool close) {
  std::string head = "HTTP/1.1 " + std::to_string(res.status) + " ";
  head += std::string(
      boost::beast::http::obsolete_reason(static_cast<boost::beast::http::status>(res.status)));
  head += "\r\n";
  for (const auto &[name, value] : res.headers) {
    if (equalsIgnoreCase(name, "Content-Length") || equalsIgnoreCase(name, "Connection") ||
        equalsIgnoreCase(name, "Transfer-Encoding"))
      continue;
    head += name;
    head += ": ";
    head += value;
    head += "\r\n";
  }
  head += "Content-Length: " + std::to_string(res.body.size()) + "\r\n";
  if (close)
    head += "Connection: close\r\n";
  head += "\r\n";
  return head;
}

} // namespace rs::frontend::http_connection_detail
