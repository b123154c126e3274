//===- test/server/http_request_parser_test.cc - Strict request parsing -----===//
//
// frontend/http_request_parser.h on byte strings: requests split at every byte, chunked
// and compressed bodies, pipelined leftovers, and a table of malformed heads with the
// status and message each gets.
//
//===----------------------------------------------------------------------===//
#include "frontend/http_request_parser.h"

#include <gtest/gtest.h>

namespace rs::frontend {
namespace {

struct Parsed {
  HttpRequestParser::State state;
  int status = 0;
  std::string message;
  HttpRequest request;
  size_t consumed = 0;
};

/// Feeds `bytes` in pieces of `step` bytes (0: at once), keeping unconsumed bytes as a
/// connection would.
Parsed parse(const std::string &bytes, size_t step = 0, HttpParserLimits limits = {}) {
  HttpRequestParser p(limits);
  std::string pending;
  size_t given = 0, consumed = 0;
  while (p.state() == HttpRequestParser::State::kHead ||
         p.state() == HttpRequestParser::State::kBody) {
    if (given == bytes.size())
      break;
    const size_t n = step == 0 ? bytes.size() - given : std::min(step, bytes.size() - given);
    pending.append(bytes, given, n);
    given += n;
    const size_t used = p.feed(pending);
    consumed += used;
    pending.erase(0, used);
  }
  Parsed out{p.state(), p.errorStatus(), p.errorMessage(), {}, consumed};
  out.request = std::move(p.request());
  return out;
}

TEST(HttpRequestParser, AnyByteSplitGivesTheSameRequest) {
  const std::string req = "POST /v2/models/m%20x/infer?a=b HTTP/1.1\r\nHost: h\r\n"
                          "Content-Length: 5\r\nX-A: 1\r\nx-a: 2\r\n\r\nhello";
  for (size_t step : {0, 1, 2, 7}) {
    SCOPED_TRACE(step);
    Parsed p = parse(req, step);
    ASSERT_EQ(p.state, HttpRequestParser::State::kDone) << p.message;
    EXPECT_EQ(p.request.method, "POST");
    EXPECT_EQ(p.request.path, "/v2/models/m x/infer");
    EXPECT_EQ(p.request.query, "a=b");
    EXPECT_EQ(p.request.version, 11);
    EXPECT_EQ(p.request.body, "hello");
    EXPECT_EQ(p.request.headers.count("x-A"), 2u);
    EXPECT_EQ(p.request.get_header_value("content-length"), "5");
    EXPECT_EQ(p.consumed, req.size());
  }
}

TEST(HttpRequestParser, ChunkedBodyAndPipelinedLeftover) {
  const std::string next = "GET / HTTP/1.1\r\nHost: h\r\n\r\n";
  const std::string req = "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\nTrailer: t\r\n\r\n";
  Parsed p = parse(req + next);
  ASSERT_EQ(p.state, HttpRequestParser::State::kDone) << p.message;
  EXPECT_EQ(p.request.body, "abcde");
  EXPECT_FALSE(p.request.has_header("Trailer"));
  EXPECT_EQ(p.consumed, req.size()); // the next request is left for its own parser
}

TEST(HttpRequestParser, NoLengthMeansNoBodyAndHttp10NeedsNoHost) {
  Parsed p = parse("POST /x HTTP/1.0\r\n\r\nGET");
  ASSERT_EQ(p.state, HttpRequestParser::State::kDone) << p.message;
  EXPECT_EQ(p.request.version, 10);
  EXPECT_EQ(p.request.body, "");
  EXPECT_EQ(p.consumed, 20u);
  // Empty lines before a request line are skipped (RFC 9112 section 2.2).
  p = parse("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(p.state, HttpRequestParser::State::kDone) << p.message;
}

TEST(HttpRequestParser, SameContentLengthTwiceIsOneLength) {
  Parsed p =
      parse("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok");
  ASSERT_EQ(p.state, HttpRequestParser::State::kDone) << p.message;
  EXPECT_EQ(p.request.body, "ok");
}

TEST(HttpRequestParser, MalformedRequests) {
  struct Case {
    std::string bytes;
    int status;
    std::string message;
  };
  const std::string post = "POST /x HTTP/1.1\r\nHost: h\r\n";
  const std::vector<Case> cases = {
      {post + "Content-Length: 2\r\nContent-Length: 3\r\n\r\nabc", 400,
       "malformed request: bad Content-Length"},
      {post + "Content-Length: 2, 3\r\n\r\nabc", 400, "malformed request: bad Content-Length"},
      {post + "Content-Length: -1\r\n\r\n", 400, "malformed request: bad Content-Length"},
      {post + "Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", 400,
       "transfer-encoding 'chunked, identity' does not end in chunked: the body length is "
       "unknown"},
      {post + "Transfer-Encoding: identity\r\n\r\n", 400,
       "transfer-encoding 'identity' does not end in chunked: the body length is unknown"},
      {post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400,
       "malformed request: bad Transfer-Encoding"},
      {post + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501,
       "transfer-encoding 'gzip, chunked': only chunked is supported"},
      {post + "Content-Length : 1\r\n\r\na", 400, "malformed request: bad field"},
      {"POST /x HTTP/1.1\r\n\r\n", 400, "http/1.1 request without a host field"},
      {post + "host: i\r\n\r\n", 400, "request has 2 host fields"},
      {post + "X: a\r\n\tb\r\n\r\n", 400, "obsolete line folding in the request head"},
      {post + "Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400,
       "malformed request: bad Transfer-Encoding"},
      {post + "Transfer-Encoding: chunked\r\n\r\nzz\r\n", 400, "malformed request: bad chunk"},
      {"GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n", 400, "bare cr or lf in the request head"},
      {"GET / HTTP/1.1\nHost: h\n\n", 400, "bare cr or lf in the request head"},
      {"GET /a%zz HTTP/1.1\r\nHost: h\r\n\r\n", 400, "request target has a bad percent escape"},
      {"GET / HTTP/3.0\r\nHost: h\r\n\r\n", 505, "http version 3.0 is not supported; expected 1.1"},
      {post + "Expect: magic\r\n\r\n", 417, "expectation 'magic' is not supported"},
      {post + "Content-Encoding: br\r\n\r\n", 415,
       "content-encoding 'br' is not supported; expected gzip, deflate or identity"},
      {post + "Content-Length: 11\r\n\r\n0123456789a", 413,
       "request body exceeds the limit of 10 bytes"},
      {post + "Content-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc", 400,
       "request body is not a valid gzip stream: incorrect header check"},
  };
  HttpParserLimits limits;
  limits.max_body_bytes = 10;
  for (const Case &c : cases) {
    SCOPED_TRACE(c.bytes);
    for (size_t step : {size_t{0}, size_t{1}}) { // whole, then byte by byte
      Parsed p = parse(c.bytes, step, limits);
      EXPECT_EQ(p.state, HttpRequestParser::State::kError);
      EXPECT_EQ(p.status, c.status);
      EXPECT_EQ(p.message, c.message);
    }
  }
}

TEST(HttpRequestParser, HeadLimit) {
  HttpParserLimits limits;
  limits.max_head_bytes = 64;
  Parsed p = parse("GET / HTTP/1.1\r\nHost: h\r\nX: " + std::string(100, 'a'), 0, limits);
  EXPECT_EQ(p.state, HttpRequestParser::State::kError);
  EXPECT_EQ(p.status, 431);
  EXPECT_EQ(p.message, "request head exceeds 64 bytes");
}

TEST(HttpRequestParser, ExpectContinueUntilTheBodyBegins) {
  HttpRequestParser p({});
  const std::string head = "POST /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n"
                           "Content-Length: 2\r\n\r\n";
  EXPECT_EQ(p.feed(head), head.size());
  EXPECT_EQ(p.state(), HttpRequestParser::State::kBody);
  EXPECT_TRUE(p.expectsContinue());
  EXPECT_EQ(p.feed("o"), 1u);
  EXPECT_FALSE(p.expectsContinue());
  EXPECT_EQ(p.feed("k"), 1u);
  EXPECT_EQ(p.state(), HttpRequestParser::State::kDone);
  EXPECT_EQ(p.request().body, "ok");
}

} // namespace
} // namespace rs::frontend
