//===- frontend/http_listener.h - cpp-httplib server lifecycle (internal) -----===//
//
// Internal to server/: owns one httplib::Server, binds it (port 0 = ephemeral), runs its
// accept loop on a thread, and stops it gracefully. Shared by HttpServer and
// MetricsHealthServer, which register their routes on server() before start().
//
// Graceful stop (httplib 0.11 semantics): stop() closes the listening socket, then the
// worker pool finishes every accepted connection's current request before its threads
// join; an idle keep-alive connection is dropped after at most `keep_alive_timeout_s`.
// Thread safety: start() and shutdown() from one controlling thread; port() anywhere.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/tls.h"
#include "support/status.h"

#include <httplib.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

namespace rs::frontend {

struct HttpListenerOptions {
  /// What the log lines call this listener, e.g. "http", "metrics".
  std::string name;
  std::string host;
  int port = 0;
  /// Worker threads serving connections.
  int threads = 8;
  /// How long an idle keep-alive connection is kept, in seconds.
  int keep_alive_timeout_s = 5;
  /// HTTPS (httplib::SSLServer) when enabled (frontend/tls.h); plaintext otherwise.
  TlsOptions tls;
};

class HttpListener {
public:
  explicit HttpListener(HttpListenerOptions options);
  ~HttpListener();
  HttpListener(const HttpListener &) = delete;
  HttpListener &operator=(const HttpListener &) = delete;

  /// Register routes here before start().
  httplib::Server &server() { return *server_; }

  /// Binds and starts serving. Unavailable if the address cannot be bound;
  /// FailedPrecondition if already started, or when a TLS file cannot be read or loaded.
  Status start();
  /// The bound port (after a successful start()), else 0.
  int port() const { return port_.load(); }
  /// Stops accepting, finishes in-flight requests, joins the accept thread. Idempotent.
  void shutdown();

private:
  HttpListenerOptions options_;
  std::unique_ptr<httplib::Server> server_; // an httplib::SSLServer under TLS
  std::thread thread_;
  std::atomic<int> port_{0};
  std::atomic<bool> exited_{false};
  int listen_fd_ = -1; // the listening socket, seen in the socket-options hook
  bool started_ = false;
};

} // namespace rs::frontend
