//===- frontend/http_listener.cc - HTTP/1.1 transport on an event loop -------===//
#include "frontend/http_listener.h"

#include "frontend/http_connection.h"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <spdlog/spdlog.h>

#include <sys/resource.h>

namespace rs::frontend {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using boost::system::error_code;

namespace {

/// The TLS context for `tls` (files already checked readable): TLS 1.2 or later, the
/// client certificate required and verified under mutual TLS.
Status configureTls(net::ssl::context &ctx, const TlsOptions &tls, const std::string &name) {
  error_code ec;
  ctx.set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                      net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                      net::ssl::context::no_tlsv1_1 | net::ssl::context::single_dh_use,
                  ec);
  if (!ec)
    ctx.use_certificate_chain_file(tls.cert_file, ec);
  if (!ec)
    ctx.use_private_key_file(tls.key_file, net::ssl::context::pem, ec);
  if (!ec && tls.mutual()) {
    ctx.load_verify_file(tls.client_ca_file, ec);
    if (!ec)
      ctx.set_verify_mode(net::ssl::verify_peer | net::ssl::verify_fail_if_no_peer_cert, ec);
  }
  if (ec)
    return failedPrecondition() << name << " server: OpenSSL cannot load tls.cert_file "
                                << tls.cert_file << " with tls.key_file " << tls.key_file
                                << (tls.mutual() ? " and tls.client_ca_file " + tls.client_ca_file
                                                 : std::string())
                                << " (not PEM, or the key does not match the certificate): "
                                << ec.message();
  return Status::ok();
}

/// The connection limit, kept below the process's open-file limit.
int connectionLimit(int wanted) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    wanted = std::min<int64_t>(wanted, static_cast<int64_t>(rl.rlim_cur) - 256);
  return std::max(wanted, 16);
}

} // namespace

HttpListener::HttpListener(HttpListenerOptions options, HttpHandler handler,
                           HttpErrorReply error_reply)
    : core_(
          std::make_shared<Core>(std::move(options), std::move(handler), std::move(error_reply))) {}

HttpListener::~HttpListener() { shutdown(); }

size_t HttpListener::openConnections() const {
  std::lock_guard lock(core_->mu);
  return core_->connections.size();
}

Status HttpListener::start() {
  const HttpListenerOptions &o = core_->options;
  if (started_)
    return failedPrecondition() << o.name << " server already started";
  if (o.tls.enabled()) {
    RS_RETURN_IF_ERROR(readPemFile(o.tls.cert_file, "tls.cert_file").status());
    RS_RETURN_IF_ERROR(readPemFile(o.tls.key_file, "tls.key_file").status());
    if (o.tls.mutual())
      RS_RETURN_IF_ERROR(readPemFile(o.tls.client_ca_file, "tls.client_ca_file").status());
    core_->tls.emplace(net::ssl::context::tls_server);
    RS_RETURN_IF_ERROR(configureTls(*core_->tls, o.tls, o.name));
  }
  error_code ec;
  // An address, or a host name resolved once (its first address).
  net::ip::address address = net::ip::make_address(o.host, ec);
  if (ec) {
    tcp::resolver resolver(core_->io);
    tcp::resolver::results_type found = resolver.resolve(o.host, "", ec);
    if (ec || found.empty())
      return unavailable() << o.name << " server: cannot bind " << o.host
                           << ": not an address, and the name does not resolve";
    address = found.begin()->endpoint().address();
  }
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(o.port));
  tcp::acceptor &acceptor = core_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  // SO_REUSEADDR for quick restarts past TIME_WAIT; no SO_REUSEPORT, which would let a
  // second server silently share a busy port.
  if (!ec)
    acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec)
    acceptor.bind(endpoint, ec);
  if (!ec)
    acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    error_code ignored;
    acceptor.close(ignored);
    spdlog::warn("{} server: cannot bind {}:{}: {}", o.name, o.host, o.port, ec.message());
    if (o.port == 0)
      return unavailable() << o.name << " server: cannot bind " << o.host
                           << " on an ephemeral port";
    return unavailable() << o.name << " server: cannot bind " << o.host << ":" << o.port;
  }
  port_ = acceptor.local_endpoint(ec).port();
  started_ = true;
  core_->keep_running.emplace(core_->io.get_executor());
  acceptNext();
  for (int i = 0; i < std::max(1, o.io_threads); ++i)
    core_->io_threads.emplace_back([core = core_] { core->io.run(); });
  spdlog::info("{} server listening on {}:{}{}", o.name, o.host, port_.load(),
               o.tls.enabled() ? (o.tls.mutual() ? " tls=mutual" : " tls=on") : "");
  return Status::ok();
}

void HttpListener::acceptNext() {
  std::shared_ptr<Core> core = core_;
  core->acceptor.async_accept(net::make_strand(core->io), [core, this](error_code ec,
                                                                       tcp::socket socket) {
    if (core->stopping || !core->acceptor.is_open())
      return;
    if (ec) {
      // Out of file descriptors (or a transient error): pause instead of spinning.
      spdlog::warn("{} server: accept failed: {}", core->options.name, ec.message());
      auto timer = std::make_shared<net::steady_timer>(core->acceptor.get_executor(),
                                                       std::chrono::milliseconds(50));
      timer->async_wait([this, timer](error_code) { acceptNext(); });
      return;
    }
    error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    if (openConnections() >= static_cast<size_t>(connectionLimit(core->options.max_connections)))
      socket.close(ignored);
    else
      startHttpConnection(core, std::move(socket));
    acceptNext();
  });
}

void HttpListener::shutdown() {
  if (!started_)
    return;
  started_ = false;
  core_->stopping = true;
  net::post(core_->acceptor.get_executor(), [core = core_] {
    error_code ignored;
    core->acceptor.close(ignored);
  });
  {
    std::vector<std::shared_ptr<HttpConnectionBase>> open;
    {
      std::lock_guard lock(core_->mu);
      for (auto &[ptr, weak] : core_->connections)
        if (auto c = weak.lock())
          open.push_back(std::move(c));
    }
    for (auto &c : open)
      c->stop();
  }
  {
    // Connections with a request in a handler close once it is answered.
    std::unique_lock lock(core_->mu);
    core_->all_closed.wait(lock, [&] { return core_->connections.empty(); });
  }
  core_->handlers.join();
  core_->keep_running.reset();
  core_->io.stop();
  for (std::thread &t : core_->io_threads)
    t.join();
  core_->io_threads.clear();
  // Completions queued when the loop stopped (the acceptor's, a timer's) hold the core;
  // run them now (they see `stopping` and return) so that nothing keeps it alive.
  core_->io.restart();
  core_->io.poll();
  spdlog::info("{} server stopped", core_->options.name);
}

} // namespace rs::frontend
