//===- frontend/http_connection.cc - One HTTP/1.1 connection (internal) ------===//
//
// One accepted connection, plain or TLS (frontend/http_connection.h): reads and parses
// requests within the listener's deadlines, runs each in a handler while watching for the
// client's close, writes the answer, keeps the connection alive or lingers and closes. The
// framing rules are http_framing.cc's (frontend/http_connection_impl.h).
//
//===----------------------------------------------------------------------===//
#include "frontend/http_connection.h"

#include "frontend/http_connection_impl.h"
#include "support/text.h"

#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <spdlog/spdlog.h>

#include <array>
#include <chrono>
#include <utility>

namespace rs::frontend {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using boost::system::error_code;

namespace {

using namespace http_connection_detail;

/// How much a closing connection reads and drops so that its client, perhaps still
/// sending, reads the answer instead of a reset; and for how long.
constexpr uint64_t kLingerBytes = 64u << 20;
constexpr auto kLinger = std::chrono::seconds(2);
/// Read buffer sizes: a body is read in large pieces; a head, a watched or idle
/// connection and a linger in small ones, so that thousands of slow or idle connections
/// each hold a few KiB.
constexpr size_t kReadChunk = 64 << 10;
constexpr size_t kHeadChunk = 4 << 10;
/// While a request is in its handler, the connection reads on to see a close or a reset;
/// what arrives meanwhile (pipelined requests) is kept up to this many bytes, then it stops
/// reading until the answer is out (the client's sends then wait on TCP's window).
constexpr size_t kWatchBufferBytes = 64 << 10;

using PlainStream = tcp::socket;
using TlsStream = net::ssl::stream<tcp::socket>;

tcp::socket &lowest(PlainStream &s) { return s; }
tcp::socket &lowest(TlsStream &s) { return s.next_layer(); }

template <class Stream>
class Connection : public HttpConnectionBase,
                   public std::enable_shared_from_this<Connection<Stream>> {
public:
  template <class... Args>
  Connection(std::shared_ptr<HttpListener::Core> core, Args &&...args)
      : core_(std::move(core)), stream_(std::forward<Args>(args)...),
        timer_(lowest(stream_).get_executor()), limits_(core_->options.limits) {
    error_code ec;
    tcp::endpoint peer = lowest(stream_).remote_endpoint(ec);
    if (!ec) {
      remote_addr_ = peer.address().to_string();
      remote_port_ = peer.port();
    }
  }

  ~Connection() override { core_->remove(this); }

  void run() {
    core_->add(this, this->weak_from_this());
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      armTimer(Clock::now() + std::chrono::seconds(core_->options.request_head_timeout_s));
      stream_.async_handshake(net::ssl::stream_base::server,
                              [self = this->shared_from_this()](error_code ec) {
                                self->disarmTimer();
                                // A failed handshake (say, no client certificate under
                                // mutual TLS) closes after the linger: a client that
                                // already writes its request gets no reset (EPIPE).
                                if (ec)
                                  return self->linger();
                                self->startRequest();
                              });
    } else {
      startRequest();
    }
  }

  void stop() override {
    net::post(lowest(stream_).get_executor(), [self = this->shared_from_this()] {
      if (!self->busy_)
        self->closeNow();
    });
  }

private:
  // ---- reading -------------------------------------------------------------------------

  void startRequest() {
    if (buffer_.empty())
      std::string().swap(buffer_); // an idle connection keeps no large buffer
    parser_ = std::make_unique<HttpRequestParser>(limits_);
    continue_sent_ = false;
    head_started_ = !buffer_.empty();
    if (head_started_)
      head_start_ = Clock::now();
    process();
  }

  /// Parses what the buffer holds, then answers, or reads more.
  void process() {
    if (!buffer_.empty())
      buffer_.erase(0, parser_->feed(buffer_));
    next();
  }

  /// What the parser's state calls for: an answer, a handler, or more bytes.
  void next() {
    switch (parser_->state()) {
    case HttpRequestParser::State::kError:
      return answerError(parser_->errorStatus(), parser_->errorMessage());
    case HttpRequestParser::State::kDone: return handle();
    case HttpRequestParser::State::kBody:
      if (!body_started_) {
        body_started_ = true;
        body_start_ = Clock::now();
      }
      if (parser_->expectsContinue() && !continue_sent_) {
        continue_sent_ = true;
        return writeRaw(std::make_shared<std::string>("HTTP/1.1 100 Continue\r\n\r\n"),
                        [](Connection &c) { c.read(); });
      }
      return read();
    case HttpRequestParser::State::kHead: return read();
    }
  }

  Clock::time_point readDeadline() const {
    const HttpListenerOptions &o = core_->options;
    if (!head_started_)
      return Clock::now() + std::chrono::seconds(o.keep_alive_timeout_s);
    if (!body_started_)
      return head_start_ + std::chrono::seconds(o.request_head_timeout_s);
    const int64_t rate = std::max<int64_t>(o.min_body_bytes_per_s, 1);
    return body_start_ + std::chrono::seconds(o.body_grace_s) +
           std::chrono::milliseconds(static_cast<int64_t>(parser_->bodyWireBytes() * 1000 / rate));
  }

  void read() {
    if (core_->stopping)
      return closeNow();
    armTimer(readDeadline());
    stream_.async_read_some(
        readBuffer(parser_->state() == HttpRequestParser::State::kBody ? kReadChunk : kHeadChunk),
        [self = this->shared_from_this()](error_code ec, size_t n) {
          self->disarmTimer();
          self->onRead(ec, n);
        });
  }

  void onRead(error_code ec, size_t n) {
    if (ec) {
      if (timed_out_ && head_started_)
        return answerError(408, body_started_ ? "request body arrived too slowly"
                                              : "request head not received in time");
      return closeNow();
    }
    if (!head_started_) {
      head_started_ = true;
      head_start_ = Clock::now();
    }
    const std::string_view got(chunk_.get(), n);
    if (!buffer_.empty()) {
      buffer_.append(got);
      return process();
    }
    // The common case: parse straight from the read buffer, keep only what is left.
    buffer_.assign(got.substr(parser_->feed(got)));
    next();
  }

  // ---- handling ------------------------------------------------------------------------

  void handle() {
    request_ = std::move(parser_->request());
    request_.remote_addr = remote_addr_;
    request_.remote_port = remote_port_;
    keep_alive_ = wantsKeepAlive(request_);
    cancel_ = std::make_shared<Cancellation>();
    request_.cancel = cancel_;
    busy_ = true;
    watchPeer();
    core_->handlers.post([self = this->shared_from_this()] {
      auto res = std::make_shared<HttpResponse>();
      try {
        self->core_->handler(self->request_, *res);
      } catch (const std::exception &e) {
        spdlog::error("{} handler failed: {}", self->core_->options.name, e.what());
        *res = self->core_->errorResponse(self->request_, 500,
                                          std::string("internal error: ") + e.what());
      } catch (...) {
        *res = self->core_->errorResponse(self->request_, 500, "internal error: unknown");
      }
      net::post(lowest(self->stream_).get_executor(), [self, res] { self->answer(res); });
    });
  }

  /// While the handler runs: one read at a time, so that a close (EOF) or a reset of the
  /// connection raises the request's cancellation (nginx likewise takes a client's EOF
  /// while its request waits for an upstream for an abort). Bytes that arrive are kept for
  /// the next request, up to kWatchBufferBytes.
  void watchPeer() {
    if (buffer_.size() >= kWatchBufferBytes)
      return;
    watching_ = true;
    stream_.async_read_some(
        readBuffer(kHeadChunk),
        [self = this->shared_from_this()](error_code ec, size_t n) { self->onWatch(ec, n); });
  }

  void onWatch(error_code ec, size_t n) {
    watching_ = false;
    if (!ec) {
      buffer_.append(chunk_.get(), n);
    } else if (ec != net::error::operation_aborted) {
      peer_gone_ = true;
      cancel_->cancel();
    }
    if (held_answer_)
      return answer(std::exchange(held_answer_, nullptr));
    if (!ec)
      watchPeer();
  }

  void answer(const std::shared_ptr<HttpResponse> &res) {
    if (watching_) {
      // The watching read ends first (onWatch answers): one read or write at a time keeps
      // the stream's state simple, TLS included.
      held_answer_ = res;
      error_code ignored;
      lowest(stream_).cancel(ignored);
      return;
    }
    if (peer_gone_) { // the client closed or reset the connection: no one reads an answer
      request_ = HttpRequest();
      busy_ = false;
      return closeNow();
    }
    std::string connection = res->get_header_value("Connection");
    const bool close = !keep_alive_ || core_->stopping || equalsIgnoreCase(connection, "close");
    auto head = std::make_shared<std::string>(serializeHead(*res, close));
    if (request_.method == "HEAD")
      res->body.clear(); // the head keeps the GET answer's Content-Length
    request_ = HttpRequest();
    writeResponse(head, res, close);
  }

  void answerError(int status, const std::string &message) {
    busy_ = true;
    HttpResponse res = core_->errorResponse(parser_->request(), status, message);
    auto shared = std::make_shared<HttpResponse>(std::move(res));
    writeResponse(std::make_shared<std::string>(serializeHead(*shared, true)), shared, true);
  }

  // ---- writing -------------------------------------------------------------------------

  Clock::time_point writeDeadline(size_t bytes) const {
    const HttpListenerOptions &o = core_->options;
    const int64_t rate = std::max<int64_t>(o.min_body_bytes_per_s, 1);
    return Clock::now() + std::chrono::seconds(o.body_grace_s) +
           std::chrono::milliseconds(static_cast<int64_t>(bytes * 1000 / rate));
  }

  void writeResponse(std::shared_ptr<std::string> head, std::shared_ptr<HttpResponse> res,
                     bool close) {
    armTimer(writeDeadline(head->size() + res->body.size()));
    std::array<net::const_buffer, 2> buffers{net::buffer(*head), net::buffer(res->body)};
    net::async_write(stream_, buffers,
                     [self = this->shared_from_this(), head, res, close](error_code ec, size_t) {
                       self->disarmTimer();
                       self->busy_ = false;
                       if (ec)
                         return self->closeNow();
                       if (close || self->core_->stopping)
                         return self->linger();
                       self->body_started_ = false;
                       self->startRequest();
                     });
  }

  void writeRaw(std::shared_ptr<std::string> bytes, void (*then)(Connection &)) {
    armTimer(writeDeadline(bytes->size()));
    net::async_write(stream_, net::buffer(*bytes),
                     [self = this->shared_from_this(), bytes, then](error_code ec, size_t) {
                       self->disarmTimer();
                       if (ec)
                         return self->closeNow();
                       then(*self);
                     });
  }

  /// Half-closes, then drops what the client still sends for a bounded time, so that
  /// unread bytes do not turn the close into a reset that loses the answer.
  void linger() {
    error_code ignored;
    lowest(stream_).shutdown(tcp::socket::shutdown_send, ignored);
    linger_deadline_ = Clock::now() + kLinger;
    drainInput();
  }

  void drainInput() {
    if (lingered_ > kLingerBytes)
      return closeNow();
    armTimer(linger_deadline_);
    lowest(stream_).async_read_some(readBuffer(kReadChunk), // perhaps a large body's rest
                                    [self = this->shared_from_this()](error_code ec, size_t n) {
                                      self->disarmTimer();
                                      if (ec)
                                        return self->closeNow();
                                      self->lingered_ += n;
                                      self->drainInput();
                                    });
  }

  /// The read buffer, `size` bytes (reallocated when the size changes).
  net::mutable_buffer readBuffer(size_t size) {
    if (chunk_size_ != size) {
      chunk_ = std::make_unique_for_overwrite<char[]>(size);
      chunk_size_ = size;
    }
    return net::buffer(chunk_.get(), size);
  }

  // ---- deadlines and closing -----------------------------------------------------------

  void armTimer(Clock::time_point deadline) {
    timed_out_ = false;
    const uint64_t generation = ++timer_generation_;
    timer_.expires_at(deadline);
    timer_.async_wait([self = this->shared_from_this(), generation](error_code ec) {
      if (ec || generation != self->timer_generation_)
        return;
      self->timed_out_ = true;
      error_code ignored;
      lowest(self->stream_).cancel(ignored);
    });
  }

  void disarmTimer() {
    ++timer_generation_;
    timer_.cancel();
  }

  void closeNow() {
    disarmTimer();
    error_code ignored;
    lowest(stream_).shutdown(tcp::socket::shutdown_both, ignored);
    lowest(stream_).close(ignored);
  }

  std::shared_ptr<HttpListener::Core> core_;
  Stream stream_;
  net::steady_timer timer_;
  HttpParserLimits limits_;
  std::string remote_addr_;
  int remote_port_ = 0;

  std::unique_ptr<char[]> chunk_; // what the pending read reads into
  size_t chunk_size_ = 0;
  std::string buffer_; // bytes read and not yet parsed (the next pipelined request's)
  std::unique_ptr<HttpRequestParser> parser_;
  HttpRequest request_;                       // the request in a handler
  std::shared_ptr<Cancellation> cancel_;      // the request in a handler's
  std::shared_ptr<HttpResponse> held_answer_; // waits for the watching read to end
  bool keep_alive_ = true;
  bool busy_ = false;      // a request is being handled or answered
  bool watching_ = false;  // watchPeer's read is pending
  bool peer_gone_ = false; // the client closed or reset the connection
  bool continue_sent_ = false;
  bool head_started_ = false;
  bool body_started_ = false;
  bool timed_out_ = false;
  uint64_t timer_generation_ = 0;
  uint64_t lingered_ = 0;
  Clock::time_point head_start_, body_start_, linger_deadline_;
};

} // namespace

void startHttpConnection(std::shared_ptr<HttpListener::Core> core, tcp::socket socket) {
  // Everything a connection does runs on its socket's strand, its start included.
  auto strand = socket.get_executor();
  if (core->tls) {
    auto c = std::make_shared<Connection<TlsStream>>(core, std::move(socket), *core->tls);
    net::post(strand, [c] { c->run(); });
  } else {
    auto c = std::make_shared<Connection<PlainStream>>(core, std::move(socket));
    net::post(strand, [c] { c->run(); });
  }
}

} // namespace rs::frontend
