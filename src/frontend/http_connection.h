//===- frontend/http_connection.h - One HTTP/1.1 connection (internal) -------===//
//
// Internal to frontend/http_listener.cc: the state a listener shares with its connections
// and the function that serves one accepted socket (plain or TLS) until it closes. The
// connection's reads, writes and deadline timer run on its own strand; handlers run on
// Core::handlers. See http_listener.h for the budgets and the order of answers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/http_listener.h"
#include "support/lifo_pool.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/strand.hpp>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

namespace rs::frontend {

/// A connection as the listener sees it: something it can ask to stop.
class HttpConnectionBase {
public:
  virtual ~HttpConnectionBase() = default;
  /// Closes the connection unless a request of it is being handled or answered (that one
  /// closes after its answer). Called on any thread.
  virtual void stop() = 0;
};

struct HttpListener::Core {
  Core(HttpListenerOptions o, HttpHandler h, HttpErrorReply e)
      : options(std::move(o)), handler(std::move(h)), error_reply(std::move(e)),
        handlers(options.threads, "http-handler"), acceptor(boost::asio::make_strand(io)) {}

  HttpListenerOptions options;
  HttpHandler handler;
  HttpErrorReply error_reply;
  boost::asio::io_context io;
  /// Handler threads, started as requests need them (support/lifo_pool.h).
  LifoThreadPool handlers;
  /// On its own strand: accepts, the retry timer and close() never run at once.
  boost::asio::ip::tcp::acceptor acceptor;
  std::optional<boost::asio::ssl::context> tls;
  std::vector<std::thread> io_threads;
  /// Keeps the loop running while no socket operation is pending (all connections busy
  /// in handlers, the acceptor closed during shutdown): answers are posted to it later.
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>
      keep_running;
  std::atomic<bool> stopping{false};

  std::mutex mu;
  std::condition_variable all_closed;
  std::unordered_map<HttpConnectionBase *, std::weak_ptr<HttpConnectionBase>> connections;

  void add(HttpConnectionBase *c, std::weak_ptr<HttpConnectionBase> w);
  void remove(HttpConnectionBase *c);
  /// The reply for a transport error, with its body from error_reply.
  HttpResponse errorResponse(const HttpRequest &req, int status, const std::string &message);
};

/// Serves `socket` (over TLS when core->tls is set) until the connection closes.
void startHttpConnection(std::shared_ptr<HttpListener::Core> core,
                         boost::asio::ip::tcp::socket socket);

} // namespace rs::frontend
