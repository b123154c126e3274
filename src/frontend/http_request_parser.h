//===- frontend/http_request_parser.h - Strict HTTP/1.1 request parsing -------===//
//
// Turns the bytes of one connection into requests, one at a time, on Boost.Beast's
// parser (request line, field syntax, Content-Length, chunked decoding) with the rules of
// RFC 9112 that Beast leaves to its user added on top. Every case below is an error that
// the transport answers with the given status and then closes the connection, since the
// end of such a message cannot be told reliably (request smuggling):
//
//   400  Content-Length values that differ, or Content-Length with Transfer-Encoding
//        (sections 6.1, 6.3); a Transfer-Encoding other than exactly `chunked` (chunked
//        not the final coding, or listed twice; `identity` is no coding any more);
//        whitespace between a field name and its colon (section 5.1); obsolete line
//        folding (section 5.2); an HTTP/1.1 request without Host, or any request with more
//        than one (section 3.2); a target that is not origin-form (or `*`); a bad percent
//        escape in the path; malformed syntax of any kind (a bare LF, a bad chunk size)
//   413  a body (Content-Length, chunked or once decoded) over `max_body_bytes`
//   415  a Content-Encoding other than gzip, x-gzip, deflate or identity
//   431  a request head over `max_head_bytes`
//   501  a transfer coding other than chunked (e.g. `gzip, chunked`)
//   505  an HTTP version other than 1.0 and 1.1
//
// A request with neither Content-Length nor Transfer-Encoding has an empty body (section
// 6.3). Up to 8 empty lines before a request line are skipped (section 2.2). The body is
// decoded from its Content-Encoding as it arrives (frontend/http_body_decoder.h), so a
// compression bomb stops at the limit.
//
// Use: feed() the unconsumed bytes, drop the consumed ones, repeat while state() is kHead
// or kBody; at kDone take the request and start a new parser for the next one (pipelined
// bytes stay in the caller's buffer). Thread safety: one parser per connection and thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/http_message.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace rs::frontend {

struct HttpParserLimits {
  /// Largest request line plus header fields, in bytes.
  uint32_t max_head_bytes = 64 << 10;
  /// Largest request body, on the wire and once decoded, in bytes.
  uint64_t max_body_bytes = uint64_t{64} << 20;
};

class HttpRequestParser {
public:
  enum class State { kHead, kBody, kDone, kError };

  explicit HttpRequestParser(HttpParserLimits limits);
  ~HttpRequestParser();
  HttpRequestParser(const HttpRequestParser &) = delete;
  HttpRequestParser &operator=(const HttpRequestParser &) = delete;

  /// Parses as much of `data` as it can; returns how many bytes it consumed (the rest
  /// belongs to a later call, or to the next request once state() is kDone).
  size_t feed(std::string_view data);
  State state() const { return state_; }
  /// The head is parsed, carries `Expect: 100-continue` and the body has not begun.
  bool expectsContinue() const;
  /// Body bytes consumed from the wire so far (before decoding).
  uint64_t bodyWireBytes() const;
  /// The request: method, target and headers once state() is past kHead, the body at kDone.
  HttpRequest &request();
  /// At kError: the status to answer (400, 413, 415, 431, 501, 505) and why.
  int errorStatus() const { return error_status_; }
  const std::string &errorMessage() const { return error_message_; }

private:
  class Impl;
  size_t feedHead(std::string_view data);
  size_t feedBody(std::string_view data);
  void fail(int status, std::string message);
  /// Beast's bad_version: 505 for a well-formed version other than 1.x, else 400.
  void failVersion();

  HttpParserLimits limits_;
  std::unique_ptr<Impl> impl_;
  State state_ = State::kHead;
  int error_status_ = 0;
  std::string error_message_;
  int empty_lines_skipped_ = 0;
  std::string request_line_;
};

} // namespace rs::frontend
