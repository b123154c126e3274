//===- frontend/http_listener_core.cc - State a listener shares with connections ===//
//
// HttpListener::Core's connection set and transport error replies
// (frontend/http_connection.h): connections add and remove themselves, and the listener
// waits on all_closed for the set to empty.
//
//===----------------------------------------------------------------------===//
#include "frontend/http_connection.h"

namespace rs::frontend {

void HttpListener::Core::add(HttpConnectionBase *c, std::weak_ptr<HttpConnectionBase> w) {
  std::lock_guard lock(mu);
  connections.emplace(c, std::move(w));
}

void HttpListener::Core::remove(HttpConnectionBase *c) {
  std::lock_guard lock(mu);
  connections.erase(c);
  if (connections.empty())
    all_closed.notify_all();
}

HttpResponse HttpListener::Core::errorResponse(const HttpRequest &req, int status,
                                               const std::string &message) {
  HttpResponse res;
  res.status = status;
  if (error_reply)
    error_reply(req, status, message, res);
  else
    res.set_content(message, "text/plain; charset=utf-8");
  return res;
}

} // namespace rs::frontend
