//===- frontend/http_body_decoder.cc - Bounded Content-Encoding decoding ------===//
#include "frontend/http_body_decoder.h"

#include "support/text.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

namespace rs::frontend {

struct HttpBodyDecoder::Zlib {
  z_stream z{};
  bool initialized = false;
  ~Zlib() {
    if (initialized)
      inflateEnd(&z);
  }
  /// windowBits: 16 + 15 gzip, 15 zlib (deflate), -15 raw deflate.
  bool init(int window_bits) {
    if (initialized)
      inflateEnd(&z);
    z = z_stream{};
    initialized = inflateInit2(&z, window_bits) == Z_OK;
    return initialized;
  }
};

namespace {

/// Inflated bytes produced per zlib call: small enough that the limit check comes early.
constexpr size_t kInflateStep = 64 << 10;

} // namespace

HttpBodyDecoder::HttpBodyDecoder(std::string coding, uint64_t limit_bytes)
    : coding_(std::move(coding)), limit_bytes_(limit_bytes) {}

HttpBodyDecoder::~HttpBodyDecoder() = default;

Result<std::unique_ptr<HttpBodyDecoder>> HttpBodyDecoder::create(std::string_view content_encoding,
                                                                 uint64_t limit_bytes) {
  std::string coding = lower(trim(content_encoding));
  if (coding == "x-gzip")
    coding = "gzip";
  if (coding.empty())
    coding = "identity";
  if (coding != "identity" && coding != "gzip" && coding != "deflate")
    return unimplemented() << "content-encoding '" << std::string(content_encoding)
                           << "' is not supported; expected gzip, deflate or identity";
  std::unique_ptr<HttpBodyDecoder> d(new HttpBodyDecoder(coding, limit_bytes));
  if (coding != "identity") {
    d->zlib_ = std::make_unique<Zlib>();
    if (!d->zlib_->init(coding == "gzip" ? 16 + MAX_WBITS : MAX_WBITS))
      return internalError() << "cannot initialise zlib for content-encoding " << coding;
  }
  return d;
}

Status HttpBodyDecoder::write(std::string_view data) {
  if (!zlib_) {
    if (body_.size() + data.size() > limit_bytes_)
      return resourceExhausted() << "request body exceeds the limit of " << limit_bytes_
                                 << " bytes";
    body_.append(data);
    return Status::ok();
  }
  return inflateSome(data);
}

Status HttpBodyDecoder::inflateSome(std::string_view data) {
  if (data.empty())
    return Status::ok();
  if (stream_ended_)
    return invalidArgument() << "request body: data after the end of the " << coding_ << " stream";
  z_stream &z = zlib_->z;
  const uLong in_before = z.total_in;
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  while (z.avail_in > 0) {
    const size_t old_size = body_.size();
    // Room for one step, but never more than one byte past the limit: that byte tells a
    // body exactly at the limit from one beyond it.
    const uint64_t room = std::min<uint64_t>(kInflateStep, limit_bytes_ + 1 - old_size);
    body_.resize(old_size + room);
    z.next_out = reinterpret_cast<Bytef *>(body_.data() + old_size);
    z.avail_out = static_cast<uInt>(room);
    const int rc = inflate(&z, Z_NO_FLUSH);
    body_.resize(old_size + (room - z.avail_out));
    if (body_.size() > limit_bytes_) {
      std::string().swap(body_);
      return resourceExhausted() << "request body exceeds the limit of " << limit_bytes_
                                 << " bytes once decoded from " << coding_;
    }
    if (rc == Z_DATA_ERROR && coding_ == "deflate" && !raw_deflate_tried_ && in_before == 0 &&
        z.total_out == 0) {
      // RFC 9110's deflate is a zlib stream, but some clients send raw deflate.
      raw_deflate_tried_ = true;
      if (!zlib_->init(-MAX_WBITS))
        return internalError() << "cannot initialise zlib for raw deflate";
      return inflateSome(data);
    }
    if (rc == Z_STREAM_END) {
      stream_ended_ = true;
      if (z.avail_in > 0)
        return invalidArgument() << "request body: data after the end of the " << coding_
                                 << " stream";
      return Status::ok();
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR)
      return invalidArgument() << "request body is not a valid " << coding_
                               << " stream: " << (z.msg ? z.msg : "zlib error");
    if (rc == Z_BUF_ERROR && z.avail_out > 0)
      break; // needs more input
  }
  return Status::ok();
}

Status HttpBodyDecoder::finish() {
  // An empty body is empty whatever its coding says.
  if (zlib_ && !stream_ended_ && zlib_->z.total_in > 0)
    return invalidArgument() << "request body: the " << coding_ << " stream is incomplete";
  return Status::ok();
}

} // namespace rs::frontend
