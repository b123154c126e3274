//===- frontend/http_body_decoder.h - Bounded Content-Encoding decoding -------===//
//
// Decodes a request body's Content-Encoding (RFC 9110 section 8.4.1) while it streams in:
// `identity` (none), `gzip` / `x-gzip` and `deflate` (zlib streams; a raw deflate stream
// is accepted too, as browsers send it). The decoded bytes are appended to one string that
// never grows past `limit_bytes`: inflating stops at the first byte beyond it, so a small
// compressed body that would inflate to gigabytes costs at most the limit in memory.
//
// Errors: ResourceExhausted when the decoded body passes the limit; InvalidArgument for
// bytes that are not a valid stream of the coding (or data after its end); Unimplemented
// for a coding other than the ones above (the transport answers 415).
// Thread safety: one decoder per request, used from one thread at a time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace rs::frontend {

class HttpBodyDecoder {
public:
  /// A decoder for the Content-Encoding header's value (a single coding; "" = identity).
  /// Unimplemented naming the coding when it is not supported.
  static Result<std::unique_ptr<HttpBodyDecoder>> create(std::string_view content_encoding,
                                                         uint64_t limit_bytes);
  ~HttpBodyDecoder();
  HttpBodyDecoder(const HttpBodyDecoder &) = delete;
  HttpBodyDecoder &operator=(const HttpBodyDecoder &) = delete;

  /// Decodes the next piece of the body into body().
  Status write(std::string_view data);
  /// The body has ended: InvalidArgument when a compressed stream is incomplete.
  Status finish();
  /// The decoded bytes so far.
  std::string &body() { return body_; }

private:
  struct Zlib;
  HttpBodyDecoder(std::string coding, uint64_t limit_bytes);
  Status inflateSome(std::string_view data);

  std::string coding_;
  uint64_t limit_bytes_;
  std::string body_;
  std::unique_ptr<Zlib> zlib_; // null for identity
  bool stream_ended_ = false;
  bool raw_deflate_tried_ = false;
};

} // namespace rs::frontend
