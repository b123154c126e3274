//===- frontend/http_listener.cc - cpp-httplib server lifecycle (internal) ----===//
#include "frontend/http_listener.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include <sys/socket.h>

namespace rs::frontend {

namespace {

std::unique_ptr<httplib::Server> makeServer(const TlsOptions &tls) {
  if (!tls.enabled())
    return std::make_unique<httplib::Server>();
  // With client CAs, httplib requires and verifies a client certificate
  // (SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT).
  return std::make_unique<httplib::SSLServer>(tls.cert_file.c_str(), tls.key_file.c_str(),
                                              tls.mutual() ? tls.client_ca_file.c_str() : nullptr);
}

} // namespace

HttpListener::HttpListener(HttpListenerOptions options)
    : options_(std::move(options)), server_(makeServer(options_.tls)) {
  size_t threads = options_.threads > 0 ? static_cast<size_t>(options_.threads) : 1;
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_->set_keep_alive_timeout(options_.keep_alive_timeout_s);
  server_->set_tcp_nodelay(true);
  // httplib's default also sets SO_REUSEPORT, which would let a second server silently
  // share a busy port; keep only SO_REUSEADDR (quick restarts past TIME_WAIT).
  server_->set_socket_options([this](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void *>(&yes), sizeof(yes));
    listen_fd_ = sock;
  });
}

HttpListener::~HttpListener() { shutdown(); }

Status HttpListener::start() {
  if (started_)
    return failedPrecondition() << options_.name << " server already started";
  if (options_.tls.enabled()) {
    RS_RETURN_IF_ERROR(readPemFile(options_.tls.cert_file, "tls.cert_file").status());
    RS_RETURN_IF_ERROR(readPemFile(options_.tls.key_file, "tls.key_file").status());
    if (options_.tls.mutual())
      RS_RETURN_IF_ERROR(readPemFile(options_.tls.client_ca_file, "tls.client_ca_file").status());
    if (!server_->is_valid())
      return failedPrecondition() << options_.name << " server: OpenSSL cannot load tls.cert_file "
                                  << options_.tls.cert_file << " with tls.key_file "
                                  << options_.tls.key_file
                                  << (options_.tls.mutual()
                                          ? " and tls.client_ca_file " + options_.tls.client_ca_file
                                          : std::string())
                                  << " (not PEM, or the key does not match the certificate)";
  }
  int port = options_.port;
  if (port == 0) {
    port = server_->bind_to_any_port(options_.host);
    if (port < 0)
      return unavailable() << options_.name << " server: cannot bind " << options_.host
                           << " on an ephemeral port";
  } else if (!server_->bind_to_port(options_.host, port)) {
    return unavailable() << options_.name << " server: cannot bind " << options_.host << ":"
                         << port;
  }
  // httplib listens with a backlog of 5, so a burst of new connections would have SYNs
  // dropped and retried a second later; widen it (calling listen() again is allowed).
  if (listen_fd_ >= 0)
    ::listen(listen_fd_, SOMAXCONN);
  port_ = port;
  started_ = true;
  exited_ = false;
  thread_ = std::thread([this] {
    server_->listen_after_bind();
    exited_ = true;
  });
  // httplib's stop() is a no-op until the accept loop runs, so wait for it here: a
  // shutdown() right after start() must not be lost.
  while (!server_->is_running() && !exited_)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (exited_) {
    thread_.join();
    started_ = false;
    return unavailable() << options_.name << " server: accept loop failed to start";
  }
  spdlog::info("{} server listening on {}:{}{}", options_.name, options_.host, port,
               options_.tls.enabled() ? (options_.tls.mutual() ? " tls=mutual" : " tls=on") : "");
  return Status::ok();
}

void HttpListener::shutdown() {
  if (!started_)
    return;
  started_ = false;
  server_->stop();
  if (thread_.joinable())
    thread_.join();
  spdlog::info("{} server stopped", options_.name);
}

} // namespace rs::frontend
