//===- test/server/http_transport_test.cc - HTTP/1.1 on the open network ----===//
//
// The HTTP transport under hostile input, over loopback with raw sockets: RFC 9112 framing
// attacks (each a 400 and a closed connection), slow clients that must not starve a normal
// one, pipelined requests, keep-alive, one body limit for every route, compressed bodies
// decoded within the limit, deadlines for the request head.
//
//===----------------------------------------------------------------------===//
#include "frontend/http_server.h"

#include "fake_service.h"
#include "protocol/http_codec.h"
#include "protocol/status_mapping.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace rs::server {
namespace {

using testing::FakeService;

std::string inferBody(const std::string &id) {
  return R"({"id":")" + id +
         R"(","inputs":[{"name":"x","shape":[1,2],"datatype":"FP32","data":[1.5,-2]}]})";
}

std::string inferReply(const std::string &id) {
  return R"({"model_name":"double","model_version":"","id":")" + id +
         R"(","outputs":[)"
         R"({"name":"y","datatype":"FP32","shape":[1,2],"data":[3,-4]},)"
         R"({"name":"z","datatype":"FP32","shape":[1,2],"data":[2.5,-1]}]})";
}

std::string inferRequest(const std::string &id, const std::string &extra_headers = "",
                         const std::string &model = "double") {
  const std::string body = inferBody(id);
  return "POST /v2/models/" + model +
         "/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + extra_headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

/// One HTTP response as read off the wire.
struct Reply {
  int status = 0;
  std::map<std::string, std::string> headers; // names lower-case
  std::string body;
};

/// A client connection over loopback with blocking reads (a 30 s receive timeout guards
/// against a hang; no assertion depends on it).
class RawConnection {
public:
  explicit RawConnection(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{30, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    connected_ = connect(fd_, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0;
  }
  ~RawConnection() {
    if (fd_ >= 0)
      close(fd_);
  }
  RawConnection(const RawConnection &) = delete;
  RawConnection &operator=(const RawConnection &) = delete;

  bool connected() const { return connected_; }

  bool send(const std::string &bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0)
        return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }

  /// Reads one response (status line, fields, a Content-Length body); nullopt when the
  /// connection closes or times out first.
  std::optional<Reply> read() {
    size_t head_end;
    while ((head_end = buffer_.find("\r\n\r\n")) == std::string::npos)
      if (!fill())
        return std::nullopt;
    Reply r;
    const std::string head = buffer_.substr(0, head_end);
    r.status = std::atoi(head.substr(9, 3).c_str());
    size_t pos = head.find("\r\n");
    while (pos != std::string::npos && pos < head.size()) {
      size_t next = head.find("\r\n", pos + 2);
      std::string line =
          head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (char &c : name)
          c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        r.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
      }
      pos = next;
    }
    buffer_.erase(0, head_end + 4);
    const size_t length =
        r.headers.count("content-length") ? std::stoul(r.headers["content-length"]) : 0;
    while (buffer_.size() < length)
      if (!fill())
        return std::nullopt;
    r.body = buffer_.substr(0, length);
    buffer_.erase(0, length);
    return r;
  }

  /// Half-closes: the server reads the end of the stream.
  void closeWrite() { ::shutdown(fd_, SHUT_WR); }

  /// The server closed the connection: a read sees the end of the stream (or a reset).
  bool closedByPeer() {
    if (!buffer_.empty())
      return false;
    char c;
    ssize_t n = recv(fd_, &c, 1, 0);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }

  /// The connection is still open: nothing to read and no end of stream yet.
  bool stillOpen() {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 0) == 0)
      return true;
    char c;
    return recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
  }

private:
  bool fill() {
    char buf[65536];
    ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0)
      return false;
    buffer_.append(buf, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  std::string buffer_;
};

/// Peak resident memory of this process so far, in bytes (VmHWM).
int64_t peakRssBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0)
      return std::stoll(line.substr(6)) * 1024;
  return -1;
}

/// `bytes` zero bytes compressed as gzip (windowBits 16+15) or zlib (15), made piece by
/// piece so that the uncompressed bytes never exist at once.
std::string compressZeros(uint64_t bytes, int window_bits) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string zeros(1 << 20, '\0'), out, buf(1 << 16, '\0');
  for (uint64_t done = 0; done < bytes;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(zeros.size(), bytes - done));
    done += n;
    z.next_in = reinterpret_cast<Bytef *>(zeros.data());
    z.avail_in = static_cast<uInt>(n);
    const int flush = done == bytes ? Z_FINISH : Z_NO_FLUSH;
    do {
      z.next_out = reinterpret_cast<Bytef *>(buf.data());
      z.avail_out = static_cast<uInt>(buf.size());
      deflate(&z, flush);
      out.append(buf.data(), buf.size() - z.avail_out);
    } while (z.avail_out == 0);
  }
  deflateEnd(&z);
  return out;
}

/// `text` compressed with windowBits `window_bits`.
std::string compress(const std::string &text, int window_bits) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out(deflateBound(&z, text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef *>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(out.size() - z.avail_out);
  deflateEnd(&z);
  return out;
}

class HttpTransportTest : public ::testing::Test {
protected:
  void SetUp() override { startServer({}); }
  void TearDown() override {
    if (server_)
      server_->shutdown();
  }

  void startServer(frontend::HttpServerOptions options) {
    if (server_)
      server_->shutdown();
    options.host = "127.0.0.1";
    options.port = 0;
    server_ = std::make_unique<frontend::HttpServer>(options, service_, protocol::noModelControl());
    ASSERT_TRUE(server_->start().isOk());
  }

  int port() const { return server_->port(); }

  void expectGoodRequestWorks() {
    RawConnection c(port());
    ASSERT_TRUE(c.send(inferRequest("ok")));
    std::optional<Reply> r = c.read();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, inferReply("ok"));
  }

  /// Sends `request` on a fresh connection; expects `status` with the error `message`,
  /// `Connection: close`, and the connection closed after it.
  void expectRejected(const std::string &request, int status, const std::string &message) {
    SCOPED_TRACE(request);
    RawConnection c(port());
    ASSERT_TRUE(c.send(request));
    std::optional<Reply> r = c.read();
    ASSERT_TRUE(r) << "no reply";
    EXPECT_EQ(r->status, status);
    EXPECT_EQ(r->headers["connection"], "close");
    EXPECT_EQ(r->headers["content-type"], "application/json");
    EXPECT_EQ(r->body, protocol::httpErrorBody(message));
    EXPECT_TRUE(c.closedByPeer());
    expectGoodRequestWorks();
  }

  FakeService service_;
  std::unique_ptr<frontend::HttpServer> server_;
};

TEST_F(HttpTransportTest, AmbiguousFramingIsRejectedAndTheConnectionClosed) {
  const std::string body = inferBody("smuggle");
  const std::string n = std::to_string(body.size());
  const std::string start = "POST /v2/models/double/infer HTTP/1.1\r\n";
  // RFC 9112 section 6.3: differing Content-Length values.
  expectRejected(start + "Host: x\r\nContent-Length: " + n + "\r\nContent-Length: 3\r\n\r\n" + body,
                 400, "malformed request: bad Content-Length");
  // Section 6.1: chunked must be the final coding.
  expectRejected(start + "Host: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", 400,
                 "transfer-encoding 'chunked, identity' does not end in chunked: the body length "
                 "is unknown");
  // Section 5.1: no whitespace between a field name and its colon.
  expectRejected(start + "Host: x\r\nContent-Length : " + n + "\r\n\r\n" + body, 400,
                 "malformed request: bad field");
  // Section 3.2: exactly one Host.
  expectRejected(start + "Content-Length: " + n + "\r\n\r\n" + body, 400,
                 "http/1.1 request without a host field");
  expectRejected(start + "Host: x\r\nHost: y\r\nContent-Length: " + n + "\r\n\r\n" + body, 400,
                 "request has 2 host fields");
  // Section 5.2: obsolete line folding.
  expectRejected(start + "Host: x\r\nX-Note: a\r\n b\r\nContent-Length: " + n + "\r\n\r\n" + body,
                 400, "obsolete line folding in the request head");
  // Section 6.1: Content-Length together with chunked, in either order.
  expectRejected(start + "Host: x\r\nContent-Length: " + n +
                     "\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                 400, "malformed request: bad Transfer-Encoding");
  expectRejected(start + "Host: x\r\nTransfer-Encoding: chunked\r\nContent-Length: " + n +
                     "\r\n\r\n0\r\n\r\n",
                 400, "malformed request: bad Content-Length");
}

TEST_F(HttpTransportTest, OtherMalformedHeadsGetTheirStatus) {
  expectRejected("GET /v2/health/live HTTP/2.0\r\nHost: x\r\n\r\n", 505,
                 "http version 2.0 is not supported; expected 1.1");
  expectRejected("GET http://evil/v2 HTTP/1.1\r\nHost: x\r\n\r\n", 400,
                 "request target 'http://evil/v2' is not an absolute path");
  expectRejected("GET /v2/health/live HTTP/1.1\nHost: x\r\n\r\n", 400,
                 "bare cr or lf in the request head");
  expectRejected("POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, "
                 "chunked\r\n\r\n0\r\n\r\n",
                 501, "transfer-encoding 'gzip, chunked': only chunked is supported");
  expectRejected("POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nContent-Encoding: br\r\n"
                 "Content-Length: 2\r\n\r\n{}",
                 415, "content-encoding 'br' is not supported; expected gzip, deflate or identity");
  expectRejected("GET /v2/health/live HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(70000, 'a') +
                     "\r\n\r\n",
                 431, "request head exceeds 65536 bytes");
}

TEST_F(HttpTransportTest, SlowClientsDoNotStarveANormalOne) {
  // 500 connections that each sent part of a request head and drip the rest: more than
  // the server has handler threads (128). None holds a thread, so a normal request is
  // answered while every one of them is still open.
  constexpr int kDrips = 500;
  std::vector<std::unique_ptr<RawConnection>> drips;
  for (int i = 0; i < kDrips; ++i) {
    drips.push_back(std::make_unique<RawConnection>(port()));
    ASSERT_TRUE(drips.back()->connected());
    ASSERT_TRUE(drips.back()->send("POST /v2/models/double/infer HTTP/1.1\r\nHo"));
  }
  for (auto &d : drips)
    ASSERT_TRUE(d->send("s"));
  for (int i = 0; i < 3; ++i)
    expectGoodRequestWorks();
  for (auto &d : drips)
    ASSERT_TRUE(d->send("t"));
  int open = 0;
  for (auto &d : drips)
    open += d->stillOpen() ? 1 : 0;
  EXPECT_EQ(open, kDrips);
}

TEST_F(HttpTransportTest, AHeadThatDoesNotArriveInTimeGets408) {
  frontend::HttpServerOptions options;
  options.request_head_timeout_s = 1;
  startServer(options);
  RawConnection c(port());
  ASSERT_TRUE(c.send("GET /v2/health/live HTTP/1.1\r\nHo"));
  std::optional<Reply> r = c.read(); // the server's deadline ends the wait
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 408);
  EXPECT_EQ(r->body, protocol::httpErrorBody("request head not received in time"));
  EXPECT_TRUE(c.closedByPeer());
}

TEST_F(HttpTransportTest, PipelinedRequestsAreAnsweredInOrder) {
  RawConnection c(port());
  ASSERT_TRUE(c.send(inferRequest("first") + inferRequest("second") +
                     "GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::optional<Reply> a = c.read(), b = c.read(), live = c.read();
  ASSERT_TRUE(a && b && live);
  EXPECT_EQ(a->status, 200);
  EXPECT_EQ(a->body, inferReply("first"));
  EXPECT_EQ(b->status, 200);
  EXPECT_EQ(b->body, inferReply("second"));
  EXPECT_EQ(live->body, R"({"live":true})");
  EXPECT_TRUE(c.stillOpen());
}

TEST_F(HttpTransportTest, AConnectionClosedWhileItsRequestWaitsCancelsIt) {
  {
    RawConnection c(port());
    ASSERT_TRUE(c.send(inferRequest("gone", "", "gate")));
    service_.waitForHeld(1);
    EXPECT_FALSE(service_.lastCancelled());
    c.closeWrite();
    // The connection's strand sees the end of the stream while the handler waits.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!service_.lastCancelled() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_TRUE(service_.lastCancelled());
    service_.release();
    EXPECT_TRUE(c.closedByPeer()); // no answer on a connection the client has closed
  }
  // A request pipelined behind a waiting one is read meanwhile, kept, and answered after it;
  // the waiting request is not cancelled.
  RawConnection c(port());
  ASSERT_TRUE(c.send(inferRequest("first", "", "gate") + inferRequest("second")));
  service_.waitForHeld(1);
  service_.release();
  std::optional<Reply> a = c.read(), b = c.read();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->status, 200);
  EXPECT_EQ(b->status, 200);
  EXPECT_EQ(b->body, inferReply("second"));
  EXPECT_FALSE(service_.lastCancelled());
  EXPECT_TRUE(c.stillOpen());
}

TEST_F(HttpTransportTest, KeepAliveServesManyRequestsOnOneConnection) {
  RawConnection c(port());
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(c.send(inferRequest("k" + std::to_string(i))));
    std::optional<Reply> r = c.read();
    ASSERT_TRUE(r) << "request " << i;
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, inferReply("k" + std::to_string(i)));
    EXPECT_EQ(r->headers.count("connection"), 0u);
  }
  // Connection: close is honoured after the answer.
  ASSERT_TRUE(c.send("GET /v2/health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  std::optional<Reply> r = c.read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->headers["connection"], "close");
  EXPECT_TRUE(c.closedByPeer());
}

TEST_F(HttpTransportTest, OneBodyLimitForEveryRoute) {
  frontend::HttpServerOptions options;
  options.max_body_bytes = 1024;
  startServer(options);
  const std::string message = "request body exceeds the limit of 1024 bytes";
  const std::string big(2000, ' ');
  for (const char *target : {"/v2/models/double/infer", "/v2/repository/index",
                             "/v2/repository/models/double/load", "/v2/health/live", "/nowhere"}) {
    const std::string method = std::string(target) == "/v2/health/live" ? "GET" : "POST";
    expectRejected(method + " " + target + " HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n" +
                       big,
                   413, message);
    // Chunked: refused once the chunks pass the limit.
    expectRejected(method + " " + target +
                       " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n" +
                       std::string(1024, ' ') + "\r\n1\r\n \r\n0\r\n\r\n",
                   413, message);
  }
  // Under the limit a non-inference POST takes its body (the default limit holds for it too).
  startServer({});
  RawConnection c(port());
  const std::string index = "{\"ready\": true" + std::string(20000, ' ') + "}";
  ASSERT_TRUE(c.send("POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                     std::to_string(index.size()) + "\r\n\r\n" + index));
  std::optional<Reply> r = c.read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "[]");
}

TEST_F(HttpTransportTest, CompressedBodiesAreDecodedWithinTheLimit) {
  for (auto [coding, bits] : {std::pair{"gzip", 16 + 15}, std::pair{"deflate", 15}}) {
    SCOPED_TRACE(coding);
    const std::string zipped = compress(inferBody("zip"), bits);
    RawConnection c(port());
    ASSERT_TRUE(c.send("POST /v2/models/double/infer HTTP/1.1\r\nHost: x\r\nContent-Encoding: " +
                       std::string(coding) + "\r\nContent-Length: " +
                       std::to_string(zipped.size()) + "\r\n\r\n" + zipped));
    std::optional<Reply> r = c.read();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, inferReply("zip"));
  }
}

TEST_F(HttpTransportTest, ACompressionBombStopsAtTheLimit) {
  frontend::HttpServerOptions options;
  options.max_body_bytes = 1 << 20;
  startServer(options);
  // 256 MiB of zeros in about 250 KB of gzip: refused once 1 MiB is inflated, with the
  // process's peak memory growing by far less than the inflated size.
  const std::string bomb = compressZeros(uint64_t{256} << 20, 16 + 15);
  ASSERT_LT(bomb.size(), 1u << 20);
  const int64_t peak_before = peakRssBytes();
  expectRejected("POST /v2/models/double/infer HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\n"
                 "Content-Length: " +
                     std::to_string(bomb.size()) + "\r\n\r\n" + bomb,
                 413, "request body exceeds the limit of 1048576 bytes once decoded from gzip");
  const int64_t growth = peakRssBytes() - peak_before;
  EXPECT_LT(growth, int64_t{32} << 20) << "peak RSS grew by " << growth << " bytes";
}

TEST_F(HttpTransportTest, ExpectContinueGetsAnInterimAnswerFirst) {
  RawConnection c(port());
  const std::string body = inferBody("cont");
  ASSERT_TRUE(c.send("POST /v2/models/double/infer HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                     "Content-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n"));
  std::optional<Reply> interim = c.read();
  ASSERT_TRUE(interim);
  EXPECT_EQ(interim->status, 100);
  ASSERT_TRUE(c.send(body));
  std::optional<Reply> r = c.read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, inferReply("cont"));
}

} // namespace
} // namespace rs::server
