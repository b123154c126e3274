//===- frontend/http_router.cc - Routes of an HTTP listener -------------------===//
#include "frontend/http_router.h"

namespace rs::frontend {

void HttpRouter::get(const std::string &pattern, HttpHandler handler) {
  routes_.push_back({"GET", std::regex(pattern), std::move(handler)});
}

void HttpRouter::post(const std::string &pattern, HttpHandler handler) {
  routes_.push_back({"POST", std::regex(pattern), std::move(handler)});
}

void HttpRouter::dispatch(HttpRequest &req, HttpResponse &res) const {
  const std::string method = req.method == "HEAD" ? "GET" : req.method;
  for (const Route &r : routes_) {
    if (r.method != method)
      continue;
    std::smatch m;
    if (!std::regex_match(req.path, m, r.pattern))
      continue;
    req.matches = std::move(m);
    r.handler(req, res);
    return;
  }
  const std::string allowed = allowedMethods(req.path);
  res.status = allowed.empty() ? 404 : 405;
  if (!allowed.empty())
    res.set_header("Allow", allowed);
  if (fallback_)
    fallback_(req, res);
}

std::string HttpRouter::allowedMethods(const std::string &path) const {
  bool get = false, post = false;
  for (const Route &r : routes_)
    if (std::regex_match(path, r.pattern))
      (r.method == "GET" ? get : post) = true;
  return get && post ? "GET, POST" : get ? "GET" : post ? "POST" : "";
}

} // namespace rs::frontend
