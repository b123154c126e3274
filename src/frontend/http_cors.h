//===- frontend/http_cors.h - Cross-origin resource sharing for the HTTP API ---===//
//
// CORS (WHATWG Fetch standard, "CORS protocol") for browser clients served from another
// origin, configured by `endpoints.cors_allowed_origins`: the exact Origin values allowed
// (`https://app.example.com`), or `*` for any. With no origins it is off and nothing below
// happens.
//
// A request whose Origin header is allowed gets on its answer, whatever the status:
//   Access-Control-Allow-Origin: <that origin>
//   Access-Control-Expose-Headers: Inference-Header-Content-Length
//   Vary: Origin
// A preflight (OPTIONS with Origin and Access-Control-Request-Method) from an allowed
// origin, for a path the server serves, is answered 204 with those and
//   Access-Control-Allow-Methods: the path's methods (as the 405 Allow header names them)
//   Access-Control-Allow-Headers: Content-Type, Content-Encoding,
//                                 Inference-Header-Content-Length
//   Access-Control-Max-Age: 600
// Requests from any other origin get no CORS header (an OPTIONS is then 405 as without
// CORS), so the browser refuses the reply to its script. CORS is no access control: it
// only tells browsers which pages may read the replies.
//
// Thread safety: const after construction; used from every handler thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/http_message.h"

#include <string>
#include <vector>

namespace rs::frontend {

class HttpCors {
public:
  /// `allowed_origins` as the configuration gives them; empty = off.
  explicit HttpCors(std::vector<std::string> allowed_origins);

  bool enabled() const { return !allowed_origins_.empty(); }
  /// Whether `req` is a preflight from an allowed origin.
  bool isAllowedPreflight(const HttpRequest &req) const;
  /// Answers an allowed preflight: 204 with the headers above; `allowed_methods` is what
  /// the path serves ("GET, POST").
  void answerPreflight(const HttpRequest &req, const std::string &allowed_methods,
                       HttpResponse &res) const;
  /// Adds the response headers above when `req` comes from an allowed origin.
  void decorate(const HttpRequest &req, HttpResponse &res) const;

private:
  bool allowed(const std::string &origin) const;

  std::vector<std::string> allowed_origins_;
};

} // namespace rs::frontend
