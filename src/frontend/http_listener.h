//===- frontend/http_listener.h - HTTP/1.1 transport on an event loop --------===//
//
// Internal to frontend/: accepts connections on one port, reads requests on a few I/O
// threads (Boost.Asio, one strand per connection), parses them strictly
// (frontend/http_request_parser.h) and runs each complete request's handler on a pool of
// handler threads, which may block (an inference). No thread waits on a slow client: a
// connection that has not sent a complete request holds only its socket and buffer, so
// thousands of slow or silent connections cannot starve the others.
//
// Per connection, requests are answered one at a time in the order they arrived
// (pipelined requests included) and the connection is kept alive for any number of
// requests, until the client asks for `Connection: close` (or speaks HTTP/1.0 without
// keep-alive), a request is malformed, or a budget runs out:
//   keep_alive_timeout_s    idle time before the first byte of a request; then closed
//   request_head_timeout_s  from a request's first byte to the end of its head; then 408
//   body_grace_s, min_body_bytes_per_s   the body's deadline is its start + grace + bytes
//                           received / rate, checked while it arrives; then 408
//   the same budget for writing a response, else the connection is dropped
// While a request is in its handler its connection is still read: a close (EOF) or a
// reset raises the request's HttpRequest::cancel and the connection is closed without an
// answer; bytes that arrive meanwhile are kept for the next request (up to 64 KiB).
// A malformed request is answered (400, 413, 415, 431, 501, 505; the body from
// `error_reply`) and the connection closed after a bounded linger that lets the client
// read the answer. HTTPS with frontend/tls.h options (OpenSSL through Asio).
//
// Graceful shutdown: stop accepting, close every connection that has no request in a
// handler, let running handlers finish and write their answers (with Connection: close),
// then join the threads.
// Thread safety: start() and shutdown() from one controlling thread; port() anywhere.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/http_message.h"
#include "frontend/http_request_parser.h"
#include "frontend/tls.h"
#include "support/status.h"

#include <atomic>
#include <memory>
#include <string>

namespace rs::frontend {

struct HttpListenerOptions {
  /// What the log lines call this listener, e.g. "http", "metrics".
  std::string name;
  std::string host;
  int port = 0;
  /// Most handler threads, so requests handled at once; each starts when a request finds
  /// every started one busy (support/lifo_pool.h).
  int threads = 8;
  /// Threads running the event loop (reads, parsing, writes).
  int io_threads = 2;
  /// Idle keep-alive connections are closed after this long, in seconds.
  int keep_alive_timeout_s = 5;
  /// A request's head (request line and fields) must arrive within this long, in seconds.
  int request_head_timeout_s = 10;
  /// A body (and a response write) gets this long plus its size over the rate below.
  int body_grace_s = 10;
  /// The slowest body (and response) transfer allowed, in bytes per second.
  int64_t min_body_bytes_per_s = 64 << 10;
  /// Connections open at once; more are accepted and closed at once.
  int max_connections = 16384;
  /// Head and body size limits.
  HttpParserLimits limits;
  /// HTTPS when enabled (frontend/tls.h); plaintext otherwise.
  TlsOptions tls;
};

/// The body of an answer the transport makes itself: `status` (400, 404 ... 505) with
/// `message`; `req` holds what was parsed of the request (method and path when known).
using HttpErrorReply = std::function<void(const HttpRequest &req, int status,
                                          const std::string &message, HttpResponse &res)>;

class HttpListener {
public:
  /// `handler` answers every complete request; `error_reply` fills the transport's own
  /// answers (plain text "<message>" when null).
  HttpListener(HttpListenerOptions options, HttpHandler handler, HttpErrorReply error_reply);
  ~HttpListener();
  HttpListener(const HttpListener &) = delete;
  HttpListener &operator=(const HttpListener &) = delete;

  /// Binds and starts serving. Unavailable if the address cannot be bound;
  /// FailedPrecondition if already started, or when a TLS file cannot be read or loaded.
  Status start();
  /// The bound port (after a successful start()), else 0.
  int port() const { return port_.load(); }
  /// Connections open now.
  size_t openConnections() const;
  /// Stops accepting, finishes in-flight requests, joins the threads. Idempotent.
  void shutdown();

  struct Core; // shared with the connections (http_connection.h)

private:
  void acceptNext();

  std::shared_ptr<Core> core_;
  std::atomic<int> port_{0};
  bool started_ = false;
};

} // namespace rs::frontend
