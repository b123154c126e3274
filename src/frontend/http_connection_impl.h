//===- frontend/http_connection_impl.h - HTTP/1.1 framing rules (private) ---===//
//
// The framing rules of one HTTP/1.1 connection (frontend/http_connection.cc), defined in
// http_framing.cc: whether a request keeps its connection open, and the response's head.
// Not API.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/http_message.h"

#include <string>

namespace rs::frontend::http_connection_detail {

/// Whether the request asks to keep the connection open (RFC 9112 section 9.3).
bool wantsKeepAlive(const HttpRequest &req);

/// The status line and fields of `res`; Content-Length from its body.
std::string serializeHead(const HttpResponse &res, bool close);

} // namespace rs::frontend::http_connection_detail
