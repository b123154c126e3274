//===- support/digest.h - SHA-256 as lower-case hex ------------------------===//
//
// The one SHA-256 of the project (OpenSSL's EVP interface, FIPS 180-4): cache keys and
// entries, bundle and plugin file digests in the evidence, the cache archive's checksums.
// Digests are 64 lower-case hex digits, the form `sha256sum` prints.
//
// Errors: sha256OfFile gives NotFound "<path>: cannot open to compute its sha256" for a file
// that is missing or unreadable, InvalidArgument (support/file.h) for a directory or a
// non-regular file, NotFound "<path>: read error while computing its sha256" for a failing
// read. Thread safety: free functions are pure; a Sha256 object is used by one thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;

namespace rs {

/// Incremental SHA-256: update() any number of times, then hexDigest() once.
class Sha256 {
public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256 &) = delete;
  Sha256 &operator=(const Sha256 &) = delete;

  void update(const void *data, size_t size);
  void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
  /// The digest of everything updated so far, as 64 lower-case hex digits.
  std::string hexDigest();

private:
  struct Free {
    void operator()(evp_md_ctx_st *ctx) const;
  };
  std::unique_ptr<evp_md_ctx_st, Free> ctx_;
};

/// SHA-256 of `bytes` as 64 lower-case hex digits.
std::string sha256Hex(std::string_view bytes);

/// HMAC-SHA256 (RFC 2104) of `bytes` under `key`, as 64 lower-case hex digits.
std::string hmacSha256Hex(std::string_view key, std::string_view bytes);

/// SHA-256 of the regular file at `path` as 64 lower-case hex digits, read in 1 MiB pieces
/// (errors: see the file comment).
Result<std::string> sha256OfFile(const std::string &path);

} // namespace rs
