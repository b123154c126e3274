//===- frontend/http_router.h - Routes of an HTTP listener --------------------===//
//
// Maps a request's method and path to a handler: each route is a method (GET or POST; a
// GET route also answers HEAD) and a regular expression that must match the whole path,
// tried in the order added; the first match runs with the pattern's groups in
// HttpRequest::matches. A path that some route matches under another method gets 405 with
// an Allow header (RFC 9110 section 15.5.6), any other path 404; both through the
// fallback, which fills the body.
//
// Thread safety: add routes before the listener starts; dispatch() is then read-only and
// runs on many threads at once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/http_message.h"

#include <regex>
#include <string>
#include <vector>

namespace rs::frontend {

class HttpRouter {
public:
  /// Answers what no route takes: `res.status` is 404 or 405 (with Allow set), body empty.
  using Fallback = std::function<void(const HttpRequest &, HttpResponse &)>;

  void get(const std::string &pattern, HttpHandler handler);
  void post(const std::string &pattern, HttpHandler handler);
  void setFallback(Fallback fallback) { fallback_ = std::move(fallback); }

  /// Runs the route for `req` (its matches set), or the fallback.
  void dispatch(HttpRequest &req, HttpResponse &res) const;
  /// The methods served on `path` ("GET", "POST", "GET, POST"), or "" when none.
  std::string allowedMethods(const std::string &path) const;

private:
  struct Route {
    std::string method;
    std::regex pattern;
    HttpHandler handler;
  };
  std::vector<Route> routes_;
  Fallback fallback_;
};

} // namespace rs::frontend
