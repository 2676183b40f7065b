// Ranks of different HetCCL builds refuse to form a communicator, every one
// naming the same two builds.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/peer_info.h"
#include "support/expect_error.h"

namespace hetccl {
namespace {

PeerInfo peerOn(const char* host, const char* release, uint32_t protocol) {
  PeerInfo info{};
  std::strncpy(info.hostname, host, sizeof(info.hostname) - 1);
  std::strncpy(info.release, release, sizeof(info.release) - 1);
  info.protocolVersion = protocol;
  return info;
}

TEST(SameBuild, RanksOfOneBuildPass) {
  std::vector<PeerInfo> peers(4, peerOn("a", "0.1.0", kCommProtocolVersion));
  checkSameBuild(peers);
}

TEST(SameBuild, ThisBuildAnnouncesItsReleaseAndProtocol) {
  PeerInfo self = PeerInfo::local(0, 1, std::nullopt, Settings{});
  EXPECT_GT(std::strlen(self.release), 0u);
  EXPECT_EQ(self.protocolVersion, kCommProtocolVersion);
}

TEST(SameBuild, AnotherReleaseIsRefusedNamingBoth) {
  std::vector<PeerInfo> peers = {peerOn("nvidia-node", "0.1.0", 1),
                                 peerOn("nvidia-node", "0.1.0", 1),
                                 peerOn("amd-node", "0.2.0", 1)};
  Error e = expectError([&] { checkSameBuild(peers); });
  EXPECT_EQ(e.code(), ncclInvalidUsage);
  EXPECT_STREQ(e.what(),
               "rank 0 (host nvidia-node) runs HetCCL 0.1.0 (protocol 1) and "
               "rank 2 (host amd-node) runs HetCCL 0.2.0 (protocol 1): every "
               "node of a communicator needs the same HetCCL release");
}

TEST(SameBuild, AnotherProtocolIsRefused) {
  std::vector<PeerInfo> peers = {peerOn("a", "0.1.0", 1),
                                 peerOn("b", "0.1.0", 2)};
  Error e = expectError([&] { checkSameBuild(peers); });
  EXPECT_EQ(e.code(), ncclInvalidUsage);
  EXPECT_NE(std::string(e.what()).find("(protocol 2)"), std::string::npos)
      << e.what();
}

}  // namespace
}  // namespace hetccl
