//===- frontend/http_cors.cc - Cross-origin resource sharing for the HTTP API --===//
#include "frontend/http_cors.h"

#include <algorithm>

namespace rs::frontend {

HttpCors::HttpCors(std::vector<std::string> allowed_origins)
    : allowed_origins_(std::move(allowed_origins)) {}

bool HttpCors::allowed(const std::string &origin) const {
  if (origin.empty())
    return false;
  return std::any_of(allowed_origins_.begin(), allowed_origins_.end(),
                     [&](const std::string &o) { return o == "*" || o == origin; });
}

bool HttpCors::isAllowedPreflight(const HttpRequest &req) const {
  return req.method == "OPTIONS" && req.has_header("Access-Control-Request-Method") &&
         allowed(req.get_header_value("Origin"));
}

void HttpCors::answerPreflight(const HttpRequest &req, const std::string &allowed_methods,
                               HttpResponse &res) const {
  res.status = 204;
  res.body.clear();
  res.set_header("Access-Control-Allow-Methods", allowed_methods);
  res.set_header("Access-Control-Allow-Headers",
                 "Content-Type, Content-Encoding, Inference-Header-Content-Length");
  res.set_header("Access-Control-Max-Age", "600");
  decorate(req, res);
}

void HttpCors::decorate(const HttpRequest &req, HttpResponse &res) const {
  const std::string origin = req.get_header_value("Origin");
  if (!allowed(origin))
    return;
  res.set_header("Access-Control-Allow-Origin", origin);
  res.set_header("Access-Control-Expose-Headers", "Inference-Header-Content-Length");
  res.set_header("Vary", "Origin");
}

} // namespace rs::frontend
