//===- test/support/digest_test.cc - SHA-256 as lower-case hex --------------===//
//
// The FIPS 180-2 test vectors through sha256Hex and through Sha256 fed in pieces (the
// digest does not depend on how the bytes are cut).
//
//===----------------------------------------------------------------------===//
#include "support/digest.h"

#include <gtest/gtest.h>

#include <string>

namespace rs {
namespace {

constexpr const char *kAbc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
constexpr const char *kTwoBlocks =
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";

TEST(Sha256, FipsVectors) {
  EXPECT_EQ(sha256Hex("abc"), kAbc);
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"), kTwoBlocks);
}

TEST(Sha256, PiecesGiveTheDigestOfTheWhole) {
  const std::string text = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  Sha256 sha;
  sha.update(text.data(), 5);
  sha.update(std::string_view(text).substr(5, 0));
  sha.update(std::string_view(text).substr(5));
  EXPECT_EQ(sha.hexDigest(), kTwoBlocks);
}

} // namespace
} // namespace rs
