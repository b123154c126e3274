//===- frontend/http_request_parser.cc - Strict HTTP/1.1 request parsing ------===//
#include "frontend/http_request_parser.h"

#include "frontend/http_body_decoder.h"
#include "support/text.h"

#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>

#include <algorithm>

namespace rs::frontend {

namespace beast = boost::beast;
namespace http = boost::beast::http;

namespace {

/// Whether `head` holds an LF that does not end a CRLF or a CR not followed by LF: a line
/// end some peers see and others don't (RFC 9112 section 2.2). With `complete` false the
/// head is still arriving, so a CR as its last byte may be followed by an LF later.
bool hasBareCrOrLf(std::string_view head, bool complete) {
  for (size_t i = 0; i < head.size(); ++i) {
    if (head[i] == '\n' && (i == 0 || head[i - 1] != '\r'))
      return true;
    if (head[i] == '\r' && (i + 1 < head.size() ? head[i + 1] != '\n' : complete))
      return true;
  }
  return false;
}

/// Percent-decodes a path (RFC 3986 section 2.1); false on a bad escape.
bool percentDecode(std::string_view in, std::string &out) {
  out.clear();
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out.push_back(in[i]);
      continue;
    }
    if (i + 2 >= in.size())
      return false;
    const int hi = hexDigitValue(in[i + 1]), lo = hexDigitValue(in[i + 2]);
    if (hi < 0 || lo < 0)
      return false;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return true;
}

/// The error code the callbacks set; the parser's own status and message say more.
beast::error_code rejected() { return http::error::bad_value; }

} // namespace

/// Beast's parser with the request kept and the checks Beast does not make.
class HttpRequestParser::Impl : public http::basic_parser<true> {
public:
  explicit Impl(uint64_t max_body) : max_body_(max_body) {}

  HttpRequest request;
  std::unique_ptr<HttpBodyDecoder> decoder;
  int host_fields = 0;
  bool header_done = false;
  bool expect_continue = false;
  uint64_t wire_body_bytes = 0;
  // Set by a callback together with rejected(): what to answer.
  int status = 0;
  std::string message;

private:
  void reject(beast::error_code &ec, int s, std::string m) {
    status = s;
    message = std::move(m);
    ec = rejected();
  }

  void on_request_impl(http::verb, beast::string_view method, beast::string_view target,
                       int version, beast::error_code &ec) override {
    request.method = std::string(method);
    request.target = std::string(target);
    request.version = version;
    if (version != 10 && version != 11)
      return reject(ec, 505,
                    "http version " + std::to_string(version / 10) + "." +
                        std::to_string(version % 10) + " is not supported; expected 1.1");
    std::string_view t(target.data(), target.size());
    if (t == "*") {
      request.path = "*";
      return;
    }
    if (t.empty() || t.front() != '/')
      return reject(ec, 400,
                    "request target '" + std::string(t.substr(0, 200)) +
                        "' is not an absolute path");
    const size_t q = t.find('?');
    if (q != std::string_view::npos)
      request.query = std::string(t.substr(q + 1));
    if (!percentDecode(t.substr(0, q), request.path))
      return reject(ec, 400, "request target has a bad percent escape");
  }

  void on_response_impl(int, beast::string_view, int, beast::error_code &) override {}

  void on_field_impl(http::field f, beast::string_view name, beast::string_view value,
                     beast::error_code &ec) override {
    if (header_done)
      return; // a chunked body's trailer fields are not part of the request
    std::string_view v = trim(std::string_view(value.data(), value.size()));
    if (f == http::field::host)
      ++host_fields;
    if (f == http::field::transfer_encoding) {
      // Beast accepts any list that ends in chunked and takes one without chunked for no
      // body at all: both are smuggling material behind a proxy (RFC 9112 section 6.1).
      const size_t comma = v.rfind(',');
      std::string_view last = trim(comma == std::string_view::npos ? v : v.substr(comma + 1));
      if (!equalsIgnoreCase(v, "chunked")) {
        if (equalsIgnoreCase(last, "chunked"))
          return reject(ec, 501,
                        "transfer-encoding '" + std::string(v.substr(0, 200)) +
                            "': only chunked is supported");
        return reject(ec, 400,
                      "transfer-encoding '" + std::string(v.substr(0, 200)) +
                          "' does not end in chunked: the body length is unknown");
      }
    }
    request.headers.emplace(std::string(name), std::string(v));
  }

  void on_header_impl(beast::error_code &ec) override {
    header_done = true;
    if (host_fields > 1)
      return reject(ec, 400, "request has " + std::to_string(host_fields) + " host fields");
    if (host_fields == 0 && request.version == 11)
      return reject(ec, 400, "http/1.1 request without a host field");
    Result<std::unique_ptr<HttpBodyDecoder>> d =
        HttpBodyDecoder::create(request.get_header_value("Content-Encoding"), max_body_);
    if (!d.isOk())
      return reject(ec, 415, d.status().message());
    decoder = std::move(*d);
    const std::string expect = request.get_header_value("Expect");
    if (!expect.empty()) {
      if (!equalsIgnoreCase(expect, "100-continue"))
        return reject(ec, 417, "expectation '" + expect.substr(0, 200) + "' is not supported");
      expect_continue = request.version == 11;
    }
  }

  void on_body_init_impl(const boost::optional<std::uint64_t> &, beast::error_code &) override {}

  size_t consume(beast::string_view body, beast::error_code &ec) {
    wire_body_bytes += body.size();
    expect_continue = false;
    if (Status s = decoder->write(std::string_view(body.data(), body.size())); !s.isOk())
      reject(ec, s.code() == StatusCode::kResourceExhausted ? 413 : 400, s.message());
    return body.size();
  }

  size_t on_body_impl(beast::string_view body, beast::error_code &ec) override {
    return consume(body, ec);
  }

  void on_chunk_header_impl(std::uint64_t, beast::string_view, beast::error_code &) override {
    expect_continue = false;
  }

  size_t on_chunk_body_impl(std::uint64_t, beast::string_view body,
                            beast::error_code &ec) override {
    return consume(body, ec);
  }

  void on_finish_impl(beast::error_code &ec) override {
    if (!decoder)
      return;
    if (Status s = decoder->finish(); !s.isOk())
      return reject(ec, 400, s.message());
    request.body = std::move(decoder->body());
  }

  uint64_t max_body_;
};

HttpRequestParser::HttpRequestParser(HttpParserLimits limits)
    : limits_(limits), impl_(std::make_unique<Impl>(limits.max_body_bytes)) {
  impl_->header_limit(limits_.max_head_bytes);
  impl_->body_limit(limits_.max_body_bytes);
  impl_->eager(true);
}

HttpRequestParser::~HttpRequestParser() = default;

bool HttpRequestParser::expectsContinue() const {
  return state_ == State::kBody && impl_->expect_continue;
}

uint64_t HttpRequestParser::bodyWireBytes() const { return impl_->wire_body_bytes; }

HttpRequest &HttpRequestParser::request() { return impl_->request; }

void HttpRequestParser::fail(int status, std::string message) {
  state_ = State::kError;
  error_status_ = status;
  error_message_ = std::move(message);
}

void HttpRequestParser::failVersion() {
  // Beast parses only HTTP/1.x; a well-formed other version is 505 (RFC 9110 15.6.6).
  const std::string_view line = request_line_;
  const size_t n = line.size();
  if (n >= 8 && line.substr(n - 8, 5) == "HTTP/" &&
      std::isdigit(static_cast<unsigned char>(line[n - 3])) && line[n - 2] == '.' &&
      std::isdigit(static_cast<unsigned char>(line[n - 1])))
    return fail(505, "http version " + std::string(line.substr(n - 3)) +
                         " is not supported; expected 1.1");
  fail(400, "malformed request: bad version");
}

size_t HttpRequestParser::feed(std::string_view data) {
  if (state_ == State::kHead)
    return feedHead(data);
  if (state_ == State::kBody)
    return feedBody(data);
  return 0;
}

size_t HttpRequestParser::feedHead(std::string_view data) {
  size_t skipped = 0;
  while (data.size() >= 2 && data.substr(0, 2) == "\r\n" && empty_lines_skipped_ < 8) {
    data.remove_prefix(2);
    skipped += 2;
    ++empty_lines_skipped_;
  }
  const size_t end = data.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    // A head of bare LF lines never ends in CRLF CRLF: refuse it at once, not at the deadline.
    if (hasBareCrOrLf(data, /*complete=*/false)) {
      fail(400, "bare cr or lf in the request head");
      return skipped;
    }
    if (data.size() > limits_.max_head_bytes)
      fail(431, "request head exceeds " + std::to_string(limits_.max_head_bytes) + " bytes");
    return skipped;
  }
  if (end + 4 > limits_.max_head_bytes) {
    fail(431, "request head exceeds " + std::to_string(limits_.max_head_bytes) + " bytes");
    return skipped;
  }
  const std::string_view head = data.substr(0, end + 2);
  request_line_ = std::string(head.substr(0, std::min<size_t>(head.find("\r\n"), 8192)));
  // Beast unfolds obsolete line folding; RFC 9112 section 5.2 lets a server reject it.
  for (size_t i = head.find("\r\n"); i != std::string_view::npos; i = head.find("\r\n", i + 2))
    if (i + 2 < head.size() && (head[i + 2] == ' ' || head[i + 2] == '\t')) {
      fail(400, "obsolete line folding in the request head");
      return skipped;
    }
  if (hasBareCrOrLf(head, /*complete=*/true)) {
    fail(400, "bare cr or lf in the request head");
    return skipped;
  }
  return skipped + feedBody(data);
}

size_t HttpRequestParser::feedBody(std::string_view data) {
  size_t used = 0;
  while (state_ == State::kHead || state_ == State::kBody) {
    beast::error_code ec;
    const size_t n =
        impl_->put(boost::asio::const_buffer(data.data() + used, data.size() - used), ec);
    used += n;
    if (ec == http::error::need_more) {
      if (impl_->is_header_done())
        state_ = State::kBody;
      break;
    }
    if (ec) {
      if (impl_->status != 0)
        fail(impl_->status, impl_->message);
      else if (ec == http::error::body_limit)
        fail(413, "request body exceeds the limit of " + std::to_string(limits_.max_body_bytes) +
                      " bytes");
      else if (ec == http::error::bad_version)
        failVersion();
      else if (ec == http::error::header_limit)
        fail(431, "request head exceeds " + std::to_string(limits_.max_head_bytes) + " bytes");
      else
        fail(400, "malformed request: " + ec.message());
      break;
    }
    if (impl_->is_done()) {
      state_ = State::kDone;
      break;
    }
    if (impl_->is_header_done())
      state_ = State::kBody;
    if (n == 0 || used == data.size())
      break;
  }
  return used;
}

} // namespace rs::frontend
