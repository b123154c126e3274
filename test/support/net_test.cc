//===- test/support/net_test.cc - host:port text ----------------------------===//
//
// formatHostPort brackets an IPv6 literal once; parseHostPort takes what it prints back, and
// refuses a missing port or host, an unclosed bracket and a port outside [1, 65535] with the
// caller's name for the text.
//
//===----------------------------------------------------------------------===//
#include "support/net.h"

#include <gtest/gtest.h>

namespace rs {
namespace {

TEST(HostPort, FormatBracketsAnIpv6LiteralOnce) {
  EXPECT_EQ(formatHostPort("127.0.0.1", 8001), "127.0.0.1:8001");
  EXPECT_EQ(formatHostPort("worker-3", 9000), "worker-3:9000");
  EXPECT_EQ(formatHostPort("::1", 8000), "[::1]:8000");
  EXPECT_EQ(formatHostPort("[::1]", 8000), "[::1]:8000");
  EXPECT_EQ(formatHostPort(HostPort{"fe80::2", 1}), "[fe80::2]:1");
}

TEST(HostPort, ParseReadsWhatFormatWrites) {
  Result<HostPort> hp = parseHostPort("[::1]:8001", "t");
  ASSERT_TRUE(hp.isOk()) << hp.status().toString();
  EXPECT_EQ(hp->host, "::1");
  EXPECT_EQ(hp->port, 8001);
  hp = parseHostPort("localhost:65535", "t");
  ASSERT_TRUE(hp.isOk()) << hp.status().toString();
  EXPECT_EQ(hp->host, "localhost");
  EXPECT_EQ(hp->port, 65535);
  EXPECT_EQ(formatHostPort(*hp), "localhost:65535");
}

TEST(HostPort, ParseErrorsNameTheText) {
  auto message = [](std::string_view text) {
    Result<HostPort> hp = parseHostPort(text, "url '" + std::string(text) + "'");
    EXPECT_FALSE(hp.isOk());
    EXPECT_EQ(hp.status().code(), StatusCode::kInvalidArgument);
    return hp.status().message();
  };
  EXPECT_EQ(message("localhost"), "url 'localhost' has no port");
  EXPECT_EQ(message(":8001"), "url ':8001' has no host");
  EXPECT_EQ(message("[::1:8001"), "url '[::1:8001': expected [ipv6]:port");
  EXPECT_EQ(message("[::1]8001"), "url '[::1]8001': expected [ipv6]:port");
  EXPECT_EQ(message("h:0"), "url 'h:0': port '0' is not a number in [1, 65535]");
  EXPECT_EQ(message("h:65536"), "url 'h:65536': port '65536' is not a number in [1, 65535]");
  EXPECT_EQ(message("h:80x"), "url 'h:80x': port '80x' is not a number in [1, 65535]");
  EXPECT_EQ(message("h:"), "url 'h:': port '' is not a number in [1, 65535]");
}

} // namespace
} // namespace rs
