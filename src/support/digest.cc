//===- support/digest.cc - SHA-256 as lower-case hex -----------------------===//
#include "support/digest.h"

#include "support/file.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <unistd.h>

namespace rs {
namespace {

/// `bytes` as lower-case hex digits, two per byte.
std::string hexDigits(const unsigned char *bytes, unsigned int length) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 15];
  }
  return out;
}

} // namespace

void Sha256::Free::operator()(evp_md_ctx_st *ctx) const { EVP_MD_CTX_free(ctx); }

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  // EVP_MD_CTX_new and EVP_DigestInit_ex fail only when memory runs out.
  EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr);
}

Sha256::~Sha256() = default;

void Sha256::update(const void *data, size_t size) {
  if (size > 0)
    EVP_DigestUpdate(ctx_.get(), data, size);
}

std::string Sha256::hexDigest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx_.get(), digest, &length);
  return hexDigits(digest, length);
}

std::string hmacSha256Hex(std::string_view key, std::string_view bytes) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char *>(bytes.data()), bytes.size(), mac, &length);
  return hexDigits(mac, length);
}

std::string sha256Hex(std::string_view bytes) {
  Sha256 sha;
  sha.update(bytes);
  return sha.hexDigest();
}

Result<std::string> sha256OfFile(const std::string &path) {
  Result<RegularFile> file = openRegularFile(path);
  if (!file.isOk()) {
    if (file.status().code() == StatusCode::kNotFound)
      return notFound() << path << ": cannot open to compute its sha256";
    return file.status();
  }
  Sha256 sha;
  std::vector<char> buffer(size_t{1} << 20);
  while (true) {
    const ssize_t n = ::read(file->fd(), buffer.data(), buffer.size());
    if (n == 0)
      break;
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return notFound() << path
                        << ": read error while computing its sha256: " << std::strerror(errno);
    }
    sha.update(buffer.data(), static_cast<size_t>(n));
  }
  return sha.hexDigest();
}

} // namespace rs
