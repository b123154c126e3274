//===- frontend/http_message.h - One HTTP/1.1 request and its response --------===//
//
// What the HTTP transport (frontend/http_listener.h) hands to a route handler and what the
// handler fills in: plain values, no I/O. The request is complete when a handler sees it:
// the head parsed strictly (frontend/http_request_parser.h), the body read within the
// listener's byte limit and decoded from its Content-Encoding (gzip, deflate).
//
// Header names compare case-insensitively (RFC 9110 section 5.1); a name may appear more
// than once. The response's Content-Length and, when the connection closes,
// `Connection: close` are written by the transport.
//
// Thread safety: plain values; one handler owns a request and its response at a time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/cancellation.h"

#include <cstdint>
#include <functional>
#include <map>
#include <regex>
#include <string>
#include <string_view>

namespace rs::frontend {

/// Orders header names case-insensitively (ASCII).
struct HeaderNameLess {
  bool operator()(std::string_view a, std::string_view b) const;
};
using HttpHeaders = std::multimap<std::string, std::string, HeaderNameLess>;

/// A parsed request. `path` is the target's path, percent-decoded; `query` what follows
/// its '?' (undecoded). `matches` holds the route pattern's groups over `path`.
struct HttpRequest {
  std::string method;
  std::string target;
  std::string path;
  std::string query;
  /// 10 for HTTP/1.0, 11 for HTTP/1.1.
  int version = 11;
  HttpHeaders headers;
  std::string body;
  std::smatch matches;
  /// The peer's address and port ("127.0.0.1", 51234).
  std::string remote_addr;
  int remote_port = 0;
  /// Raised by the transport when the connection is closed or reset while the request is
  /// in its handler (the client has stopped waiting for the answer); null outside a handler.
  CancellationPtr cancel;

  bool has_header(std::string_view name) const;
  /// The first value of `name`, or "" when absent.
  std::string get_header_value(std::string_view name) const;
};

/// A handler's answer; status 200 and no body unless set.
struct HttpResponse {
  int status = 200;
  HttpHeaders headers;
  std::string body;

  /// Replaces every value of `name` with `value`.
  void set_header(std::string_view name, std::string_view value);
  bool has_header(std::string_view name) const;
  std::string get_header_value(std::string_view name) const;
  /// Sets the body and its Content-Type.
  void set_content(std::string content, std::string_view content_type);
};

/// Answers one request; runs on the listener's handler threads, so it may block. The
/// request is the handler's to change (e.g. to move its body out).
using HttpHandler = std::function<void(HttpRequest &, HttpResponse &)>;

} // namespace rs::frontend
