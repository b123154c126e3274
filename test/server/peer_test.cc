//===- test/server/peer_test.cc - Which peers may use shared memory ----------===//
#include "frontend/peer.h"

#include <gtest/gtest.h>

namespace rs::frontend {
namespace {

TEST(LocalPeerIdentity, LoopbackAndUnixPeersHaveAnIdentityWithoutThePort) {
  EXPECT_EQ(localPeerIdentity("ipv4:127.0.0.1:50312"), "127.0.0.1");
  EXPECT_EQ(localPeerIdentity("ipv4:127.1.2.3:1"), "127.1.2.3");
  EXPECT_EQ(localPeerIdentity("ipv6:[::1]:50312"), "::1");
  EXPECT_EQ(localPeerIdentity("ipv6:[::ffff:127.0.0.1]:9"), "127.0.0.1");
  EXPECT_EQ(localPeerIdentity("unix:/run/reactant.sock"), "unix");
  EXPECT_EQ(localPeerIdentity("unix-abstract:reactant"), "unix");
  // cpp-httplib's remote_addr: the same host gives the same identity as over gRPC.
  EXPECT_EQ(localPeerIdentity("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(localPeerIdentity("::1"), "::1");
  EXPECT_EQ(localPeerIdentity("::ffff:127.0.0.1"), "127.0.0.1");
}

TEST(LocalPeerIdentity, EveryOtherPeerHasNone) {
  for (const char *peer :
       {"ipv4:10.0.0.5:50312", "ipv4:128.0.0.1:1", "ipv6:[2001:db8::1]:443", "ipv6:[::2]:1",
        "192.168.1.7", "::ffff:10.0.0.1", "127.0.0.1.evil", "127.a.0.1", ""})
    EXPECT_EQ(localPeerIdentity(peer), std::nullopt) << peer;
}

} // namespace
} // namespace rs::frontend
